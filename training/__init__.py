"""Pieces of train.py that are worth reading (and testing) on their own.

* :mod:`training.run_folder`: run folders (a new one per run, never mixed with an old one;
  ``run.json``, the record that lets ``--resume`` continue a run as it was; checkpoints,
  read newest first with a fall-back past broken ones; atomic model saves);
* :mod:`training.stopping`: SIGINT / SIGTERM turned into "stop after this step and save";
* :mod:`training.imitation`: teacher labels for behaviour cloning, every seat of the
  teacher's own games from the raw engine.

Nothing here imports torch or SB3 at import time, so train.py's ``--help`` and usage
errors work without the ``train`` extra.
"""
