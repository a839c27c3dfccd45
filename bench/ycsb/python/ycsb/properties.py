"""Java .properties files and the YCSB client's command line.

The command line is the Java client's: -threads n, -target n, -load, -t,
-db name, -P file (several, in order), -p name=value (overrides the
files), -s (status), -l label. Later files override earlier ones and -p
overrides every file, as in site.ycsb.Client.
"""


class UsageError(Exception):
    """A bad command line or properties file; the message says what."""


def _unescape(s):
    out = []
    it = iter(s)
    for c in it:
        if c != "\\":
            out.append(c)
            continue
        c = next(it, "")
        if c == "u":
            code = "".join(next(it, "") for _ in range(4))
            out.append(chr(int(code, 16)))
        else:
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(c, c))
    return "".join(out)


def _logical_lines(text):
    """Lines of a properties file with continuations (a line ending in an
    odd number of backslashes) joined and comments dropped."""
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:
            pending += line[:-1]
            continue
        yield pending + line
        pending = ""
    if pending:
        yield pending


def parse_properties(text):
    """The name -> value pairs of a Java properties file: 'name=value',
    'name: value' or 'name value'; # and ! start comments."""
    props = {}
    for line in _logical_lines(text):
        i = 0
        while i < len(line) and line[i] not in "=: \t\f":
            i += 2 if line[i] == "\\" else 1
        name = line[:i]
        rest = line[i:].lstrip(" \t\f")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t\f")
        props[_unescape(name)] = _unescape(rest)
    return props


def load_properties(path):
    try:
        with open(path, encoding="latin-1") as f:
            return parse_properties(f.read())
    except OSError as e:
        raise UsageError(f"unable to open the properties file {path}: {e.strerror}") from None


def _value(args, i, opt):
    if i >= len(args):
        raise UsageError(f"missing argument value for {opt}")
    return args[i]


def _int_value(args, i, opt):
    v = _value(args, i, opt)
    try:
        return str(int(v))
    except ValueError:
        raise UsageError(f"{opt} expects an integer, not {v!r}") from None


# Options without a value, options with one, and those whose value is an
# integer: the property each sets.
_FLAGS = {"-load": ("dotransactions", "false"), "-t": ("dotransactions", "true"),
          "-s": ("status", "true")}
_VALUES = {"-db": "db", "-l": "label"}
_INTS = {"-threads": "threadcount", "-target": "target"}


def parse_command_line(args):
    """The properties a command line asks for (files first, -p and the
    options over them). Raises UsageError naming the bad argument."""
    files = {}
    props = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a in _FLAGS:
            name, value = _FLAGS[a]
            props[name] = value
            i += 1
            continue
        if a in _INTS:
            props[_INTS[a]] = _int_value(args, i + 1, a)
        elif a in _VALUES:
            props[_VALUES[a]] = _value(args, i + 1, a)
        elif a == "-P":
            files.update(load_properties(_value(args, i + 1, a)))
        elif a == "-p":
            pair = _value(args, i + 1, a)
            name, eq, value = pair.partition("=")
            if not eq:
                raise UsageError(f"-p expects name=value (e.g. -p operationcount=99999), "
                                 f"not {pair!r}")
            props[name] = value
        else:
            raise UsageError(f"unknown option {a!r}")
        i += 2
    files.update(props)
    if "workload" not in files:
        raise UsageError("missing property: workload (give a workload file with -P)")
    return files
