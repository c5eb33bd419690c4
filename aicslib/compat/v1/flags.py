"""``tf.compat.v1.flags`` (also ``tf.app.flags``): command-line flags as TF1 programs declare them.

``flags.DEFINE_integer("batch_size", 100, "Batch size.")`` then
``flags.FLAGS.batch_size``. Values come from ``--batch_size=32`` on the command
line, parsed on first access (unknown arguments, such as a Jupyter kernel's, are
left alone), as TF1's wrapper around absl.flags does.
"""
import sys

from ...framework.missing_api import module_getattr

__getattr__ = module_getattr(__name__)


class Error(Exception):
    """A flag was defined twice, or its value does not parse."""


class _Flag:
    def __init__(self, name, default, help, parser, kind):
        self.name, self.default, self.help, self.parser, self.kind = name, default, help, parser, kind
        self.value = default
        self.present = False


class FlagValues:
    """The flags defined so far and their values; ``FLAGS.name`` reads one."""

    def __init__(self):
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)

    def _define(self, flag):
        if flag.name in self._flags:
            raise Error(f"The flag '{flag.name}' is defined twice.")
        self._flags[flag.name] = flag

    def __call__(self, argv, known_only=False):
        """Parses ``--name=value`` / ``--name value`` / ``--[no]bool`` from argv[1:]; returns the rest."""
        rest = [argv[0]] if argv else []
        args = list(argv[1:])
        i = 0
        while i < len(args):
            a = args[i]
            if a == "--":
                rest.extend(args[i + 1:])
                break
            if not a.startswith("-") or a == "-":
                rest.append(a)
                i += 1
                continue
            body = a.lstrip("-")
            name, eq, value = body.partition("=")
            flag = self._flags.get(name)
            if flag is None and name.startswith("no") and self._flags.get(name[2:]) is not None \
                    and self._flags[name[2:]].kind == "bool" and not eq:
                flag, value, eq = self._flags[name[2:]], "false", "="
            if flag is None:
                if not known_only:
                    raise Error(f"Unknown command line flag '{name}'")
                rest.append(a)
                i += 1
                continue
            if not eq:
                if flag.kind == "bool":
                    value = "true"
                elif i + 1 < len(args):
                    i += 1
                    value = args[i]
                else:
                    raise Error(f"Flag --{name} needs a value.")
            try:
                flag.value = flag.parser(value)
            except ValueError as e:
                raise Error(f"Illegal value {value!r} for flag --{name}: {e}") from None
            flag.present = True
            i += 1
        object.__setattr__(self, "_parsed", True)
        return rest

    def is_parsed(self):
        return self._parsed

    def mark_as_parsed(self):
        object.__setattr__(self, "_parsed", True)

    def __getattr__(self, name):
        flags = object.__getattribute__(self, "_flags")
        if name not in flags:
            raise AttributeError(name)
        if not self._parsed:
            self(sys.argv, known_only=True)
        return flags[name].value

    def __setattr__(self, name, value):
        if name not in self._flags:
            raise AttributeError(f"No flag named '{name}' is defined.")
        self._flags[name].value = value

    def __contains__(self, name):
        return name in self._flags

    def flag_values_dict(self):
        return {n: f.value for n, f in self._flags.items()}

    def __iter__(self):
        return iter(self._flags)


FLAGS = FlagValues()


def _parse_bool(s):
    v = str(s).strip().lower()
    if v in ("true", "t", "1", "yes"):
        return True
    if v in ("false", "f", "0", "no"):
        return False
    raise ValueError("expected true or false")


def _definer(parser, kind):
    def define(name, default, help=None, flag_values=FLAGS, **unused):
        flag_values._define(_Flag(name, default if default is None or kind == "bool" and
                                  isinstance(default, bool) else parser(default) if isinstance(default, str)
                                  else default, help, parser, kind))
    return define


DEFINE_string = _definer(str, "string")
DEFINE_integer = _definer(int, "int")
DEFINE_float = _definer(float, "float")
DEFINE_boolean = _definer(_parse_bool, "bool")
DEFINE_bool = DEFINE_boolean


def DEFINE_enum(name, default, enum_values, help=None, flag_values=FLAGS, **unused):
    def parse(s):
        if s not in enum_values:
            raise ValueError(f"value should be one of <{'|'.join(enum_values)}>")
        return s
    flag_values._define(_Flag(name, default, help, parse, "enum"))


def DEFINE_list(name, default, help=None, flag_values=FLAGS, **unused):
    def parse(s):
        return [p for p in s.split(",") if p] if isinstance(s, str) else list(s)
    flag_values._define(_Flag(name, parse(default) if default is not None else None, help, parse, "list"))
