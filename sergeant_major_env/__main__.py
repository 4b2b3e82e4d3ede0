"""`python -m sergeant_major_env`: the `sergeant-major` command (`sergeant_major_env.cli`)."""

from .cli import run

if __name__ == "__main__":
    run()
