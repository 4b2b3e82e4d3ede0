"""train.py's pieces, each worth reading (and testing) on its own; train.py's `main` puts them together.

* `sergeant_major_env.training.train_config`: every option of `sergeant-major train` as one typed, frozen
  `TrainConfig` (a docstring per field), checked when made; the
  parser is built from it (`sergeant_major_env.cli.train_plan` reads the command line, with
  `--resume`, into a checked plan);
* `sergeant_major_env.training.learner`: a new MaskablePPO from the options, or the resumed run's checkpoint;
* `sergeant_major_env.training.league`: the self-play league (learner snapshots as policy files, played
  through `agents.PPOAgent`), the opponent pool's weights and the curriculum;
* `sergeant_major_env.training.imitation`: the warm start: teacher labels from every seat of the teacher's
  raw-engine games, and behaviour cloning of the policy (and value) on them;
* `sergeant_major_env.training.callbacks`: everything periodic while PPO learns (snapshots, pool weights,
  evaluations, checkpoints, per-opponent returns, the stop request);
* `sergeant_major_env.training.learning_curve`: the learner's duplicate-deal evaluation tables and the learning curve;
* `sergeant_major_env.training.export`: run.json, the model files (model.zip, policy.safetensors +
  policy.json) and summary.json;
* `sergeant_major_env.training.run_folder`: run folders (a new one per run, never mixed with an old one;
  `run.json` read back; checkpoints, newest first with a fall-back past broken ones;
  atomic model saves; what a resumed run left);
* `sergeant_major_env.training.stopping`: SIGINT / SIGTERM turned into "stop after this step and save";
* `sergeant_major_env.training.ship`: ship a trained policy as the package's `learned` agent
  (its command line: `sergeant_major_env.cli.ship`).

`config`, `run_folder`, `stopping`, `imitation` and `learning_curve` import neither torch
nor SB3 at import time, so train.py's `--help` and usage errors work without the `train`
extra; `learner`, `league`, `callbacks` and `export` need it, and train.py imports them
only where it checks that the extra is there.
"""
