"""``python train.py`` is ``sergeant-major train`` (:mod:`sergeant_major_env.cli.train`): the same options and output."""

import sys

from sergeant_major_env.cli import run

if __name__ == "__main__":
    run(["train", *sys.argv[1:]])
