"""``python -m jitdigest``: the same command line as the ``jitdigest`` console script."""
import sys

from .cli import main

if __name__ == "__main__":          # not when a spawned worker (jitdigest warmup) imports it
    sys.exit(main())
