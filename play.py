"""``python play.py`` is ``sergeant-major play`` (:mod:`sergeant_major_env.cli.play`): the same options and output."""

import sys

from sergeant_major_env.cli import run

if __name__ == "__main__":
    run(["play", *sys.argv[1:]])
