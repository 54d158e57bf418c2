"""``python -m jitdigest``: the same command line as the ``jitdigest`` console script."""
from .cli import console

if __name__ == "__main__":          # not when a spawned worker (jitdigest warmup) imports it
    console()
