"""The command line's argument parser: usage errors and option abbreviations as coreutils
has them, and messages on standard error."""
import argparse
import sys

PROG = "jitdigest"


class _Parser(argparse.ArgumentParser):
    """Usage errors as coreutils reports them: the message, a pointer to --help, exit 1. Every
    argument added (to the parser or a group of it) is kept in ``arguments``, in order."""

    def __init__(self, *args, **kwargs):
        self.arguments = []                 # before argparse adds -h/--help
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs):
        action = super().add_argument(*args, **kwargs)
        self.arguments.append(action)
        return action

    def add_argument_group(self, *args, **kwargs):
        group = super().add_argument_group(*args, **kwargs)
        add = group.add_argument

        def add_argument(*args, **kwargs):
            action = add(*args, **kwargs)
            self.arguments.append(action)
            return action

        group.add_argument = add_argument
        return group

    def value_options(self):
        """The option strings that take a value ("-a", "--algorithm", ...)."""
        return {s for a in self.arguments if a.option_strings and a.nargs is None
                for s in a.option_strings}

    def operands(self):
        """The destination of the positional that gathers operands (nargs="*"), or None."""
        return next((a.dest for a in self.arguments
                     if not a.option_strings and a.nargs == "*"), None)

    def error(self, message):
        self.exit(1, f"{PROG}: {message}\nTry '{self.prog} --help' for more information.\n")

    # Options whose value may be left out: {option string: the value meant then}.
    optional_values = {}

    def fill_optional_values(self, argv):
        """``argv`` with the value written in after such an option given without one (the
        next argument is not a number): "-j FILE" is -j and FILE, not an invalid -j."""
        if not self.optional_values:
            return argv
        takes_value = self.value_options()
        out = []
        for i, arg in enumerate(argv):
            out.append(arg)
            if arg in self.optional_values and not (i and argv[i - 1] in takes_value):
                nxt = argv[i + 1] if i + 1 < len(argv) else None
                if nxt is None or not nxt.lstrip("+").isdigit():
                    out[-1] = arg + ("=" if arg.startswith("--") else "") + \
                        self.optional_values[arg]
        return out

    # Long options of the coreutils programs a command stands in for: an abbreviation that
    # names one of them alone among those is that option, even where the command's own
    # options make it ambiguous ("--c" is --check for sha256sum, beside jitdigest's --cache).
    coreutils_long = frozenset()

    def coreutils_abbreviations(self, argv):
        """``argv`` with such abbreviations written out (values of options left alone)."""
        if not self.coreutils_long:
            return argv
        longs = {s for a in self.arguments for s in a.option_strings if s.startswith("--")}
        takes_value = self.value_options()
        out = []
        for i, arg in enumerate(argv):
            if arg.startswith("--") and len(arg) > 2 and not (i and argv[i - 1] in takes_value):
                name, eq, value = arg.partition("=")
                if name not in longs:
                    ours = [o for o in longs if o.startswith(name)]
                    theirs = [o for o in ours if o in self.coreutils_long]
                    if len(ours) > 1 and len(theirs) == 1:
                        arg = theirs[0] + eq + value
            out.append(arg)
        return out


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Help as coreutils lays it out: "-a, --algorithm ALGO", the value named once."""

    def __init__(self, prog, **kwargs):
        kwargs.setdefault("max_help_position", 26)
        super().__init__(prog, **kwargs)

    def _format_action_invocation(self, action):
        if not action.option_strings or action.nargs == 0:
            return super()._format_action_invocation(action)
        metavar = self._format_args(action, self._get_default_metavar_for_optional(action))
        return ", ".join(action.option_strings) + " " + metavar


def _say(text):
    """A message on stderr, unless the process started with stderr closed."""
    if sys.stderr is not None:
        sys.stderr.write(text)


# True when this process is the command (``console()``), not a program calling ``main()``.
COMMAND = False
