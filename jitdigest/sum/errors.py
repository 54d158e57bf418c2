"""The two ways ``jitdigest sum`` stops before hashing, as coreutils does: a usage error (with a
pointer to --help) and a fatal error. cli.py prints them; every other module raises them."""


class UsageError(Exception):
    """Bad options: message, then "Try 'jitdigest sum --help'", exit 1 (coreutils' usage())."""


class FatalError(Exception):
    """A message (possibly several lines) and exit 1, as coreutils' error (EXIT_FAILURE, ...)."""
