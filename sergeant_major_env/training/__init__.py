"""The work of the commands that train, apart from their command lines: `cli/X.py` is the
command `sergeant-major X` (its parser and what it prints), `training/X.py` the work it runs.

`sergeant-major train`'s pieces, each worth reading (and testing) on its own;
`sergeant_major_env.cli.train`'s `main` puts them together:

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
* `sergeant_major_env.training.stopping`: SIGINT / SIGTERM turned into "stop after this step and save".

The other commands' work:

* `sergeant_major_env.training.distill`: `sergeant-major distill labels`, `fit` and `curve` (search
  labels, a policy fitted to them); `rounds`: `distill rounds` (search then distil, round after
  round); `belief`: `distill belief` (the model of the hidden cards);
* `sergeant_major_env.training.exploit`: `sergeant-major exploit` (a best response to an agent,
  trained, chosen and measured);
* `sergeant_major_env.training.ship`: `sergeant-major ship` (a trained policy shipped as the
  package's `learned` agent).

`train_config`, `run_folder`, `stopping`, `imitation` and `learning_curve` import neither torch
nor SB3 at import time, so train's `--help` and usage errors work without the `train`
extra; `learner`, `league`, `callbacks` and `export` need it, and `cli.train` imports them
only where it checks that the extra is there.
"""
