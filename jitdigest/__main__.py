"""``python -m jitdigest``: the same command line as the ``jitdigest`` console script."""
import sys

from .cli import main

sys.exit(main())
