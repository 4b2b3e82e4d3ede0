"""``python evaluate.py`` is ``sergeant-major evaluate`` (:mod:`sergeant_major_env.cli.evaluate`): the same options and output."""

import sys

from sergeant_major_env.cli import run

if __name__ == "__main__":
    run(["evaluate", *sys.argv[1:]])
