"""What programs do with their arguments: the knowledge behind "Always allow".

:func:`unwrap` removes wrappers that run another command (``timeout 60 ls`` is ``ls``);
:func:`effect_of` says what a program invocation does:

- ``inert``: no program at all (``exec 3>log``: only its redirection does something);
- ``reads``: only reads, whatever else its arguments say — a read-only rule may cover it;
  its ``key`` (``git log``, ``ls``) is what such a rule names. Builtins whose effects stay
  inside the shell (``cd``, ``echo``, ``true``) are read-only too;
- ``writes``: changes files (the ones it names are in ``writes``, to be judged by the
  workspace's path rules);
- ``runs_code``: runs code given to it or found in a file (``python -c``, ``make``,
  ``find -exec``, ``sh script.sh``); files of the workspace it runs are in ``runs``;
- ``unknown``: a program this table does not know.

Only ``reads`` can be remembered by program (and subcommand); everything else is
remembered by its exact words. A word only known at run time (``$x``, a glob) could be
any option, so it makes a program with dangerous options no longer read-only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ._syntax import Assignment, Word

Kind = Literal["inert", "reads", "writes", "runs_code", "unknown"]


def _names(text: str) -> frozenset[str]:
    """A set of names written as one string (long tables stay readable)."""
    return frozenset(text.split())


SYSTEM_BIN = _names("/bin /usr/bin /usr/local/bin /sbin /usr/sbin /usr/local/sbin")
"""A program named by a path in these folders is that program (``/usr/bin/git`` is git)."""


@dataclass(frozen=True)
class Run:
    """A file (or the files of a folder) whose code an invocation runs."""

    target: Word
    what: str
    """How the approval card names it: "the script", "the Makefile", "the test files"."""
    folder: bool = False


@dataclass(frozen=True)
class Effect:
    kind: Kind
    key: tuple[str, ...] = ()
    """For ``reads``: the program (and subcommand) a read-only rule names."""
    writes: tuple[Word, ...] = ()
    """Files and folders it writes, creates, moves or deletes (those its words name)."""
    runs: tuple[Run, ...] = ()
    note: str = ""
    """Why it is not read-only, in a few words for the approval card."""
    problem: str = ""
    """Set when no rule may ever cover it (it asks every time)."""


@dataclass(frozen=True)
class Unwrapped:
    """A simple command after its wrappers: the program that really runs."""

    words: tuple[Word, ...]
    assignments: tuple[Assignment, ...]
    chdir: tuple[Word, ...] = ()
    """Folders a wrapper changes to before running it (``env -C dir``)."""
    wrappers: tuple[str, ...] = ()
    problem: str = ""
    extra_args: bool = False
    """The wrapper adds arguments only known at run time (``xargs``)."""
    lookup: bool = False
    """``command -v name``: looks a name up, runs nothing."""


def program_name(word: Word) -> str | None:
    """The program a command word names: its name, or its path when it is a file of its own."""
    if not word.static:
        return None
    value = word.value or ""
    if "/" in value:
        folder, name = os.path.split(value)
        return name if folder in SYSTEM_BIN else value
    return value


# --- options ---------------------------------------------------------------------------


@dataclass
class Options:
    """A getopt-style reading of arguments (GNU style: options may follow operands)."""

    flags: list[tuple[str, str | None]] = field(default_factory=list)
    operands: list[Word] = field(default_factory=list)
    dynamic: bool = False
    """A word only known at run time: it could be any option."""

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.flags)

    def values(self, *names: str) -> list[str | None]:
        return [value for name, value in self.flags if name in names]


def parse_options(
    args: Sequence[Word],
    takes_value: frozenset[str] = frozenset(),
    *,
    stop_at_operand: bool = False,
) -> Options:
    """Split ``args`` into options and operands. ``takes_value`` names the options (``-o``,
    ``--output``) whose value follows them."""
    out = Options()
    i = 0
    while i < len(args):
        word = args[i]
        value = word.value
        if not word.static or value is None:
            out.dynamic = True
            out.operands.append(word)
            i += 1
            continue
        if value == "--":
            out.operands.extend(args[i + 1 :])
            break
        if value.startswith("--") and len(value) > 2:
            name, eq, given = value.partition("=")
            if eq:
                out.flags.append((name, given))
            elif name in takes_value and i + 1 < len(args):
                out.flags.append((name, args[i + 1].value))
                if not args[i + 1].static:
                    out.dynamic = True
                i += 1
            else:
                out.flags.append((name, None))
        elif value.startswith("-") and len(value) > 1 and value != "-":
            letters = value[1:]
            for j, letter in enumerate(letters):
                name = "-" + letter
                if name in takes_value:
                    rest = letters[j + 1 :]
                    if rest:
                        out.flags.append((name, rest))
                    elif i + 1 < len(args):
                        out.flags.append((name, args[i + 1].value))
                        if not args[i + 1].static:
                            out.dynamic = True
                        i += 1
                    else:
                        out.flags.append((name, None))
                    break
                out.flags.append((name, None))
        else:
            out.operands.append(word)
            if stop_at_operand:
                out.operands.extend(args[i + 1 :])
                break
        i += 1
    return out


def _word(value: str) -> Word:
    return Word(value, value)


# --- wrappers ----------------------------------------------------------------------------

_HARMLESS_WRAPPERS = {
    # name: options that take a value, and whether an operand (a duration…) comes first
    "nohup": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "time": (frozenset({"-f", "--format"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (_names("-c -n --class --classdata"), 0),
    "stdbuf": (_names("-i -o -e --input --output --error"), 0),
    "timeout": (_names("-s -k --signal --kill-after"), 1),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "numactl": (
        _names("-C -N -m -p -i --physcpubind --cpunodebind --membind --preferred --interleave"),
        0,
    ),
    "prlimit": (frozenset(), 0),
    "unbuffer": (frozenset(), 0),
    "catchsegv": (frozenset(), 0),
}

_ESCAPING = {
    "sudo": "it runs a command as another user",
    "doas": "it runs a command as another user",
    "su": "it runs a command as another user",
    "runuser": "it runs a command as another user",
    "pkexec": "it runs a command as another user",
    "systemd-run": "it starts a command outside this one (through systemd)",
    "at": "it schedules a command to run later",
    "batch": "it schedules a command to run later",
    "crontab": "it changes commands scheduled to run later",
    "launchctl": "it starts or schedules commands outside this one",
    "nsenter": "it runs a command in other namespaces",
    "chroot": "it runs a command under another root folder",
    "coproc": "it starts a coprocess",
    "alias": "it defines an alias, which changes what later words run",
    "enable": "it loads or switches shell builtins",
}


def unwrap(words: Sequence[Word], assignments: Sequence[Assignment]) -> Unwrapped:
    """Remove wrappers (``command``, ``builtin``, ``exec``, ``env``, ``timeout``, ``nice``,
    ``nohup``, ``stdbuf``, ``setsid``, ``time``, ``xargs``, …) down to the program they run."""
    words = tuple(words)
    found_assignments = list(assignments)
    chdir: list[Word] = []
    wrappers: list[str] = []
    extra = False
    for _ in range(16):
        if not words:
            break
        name = program_name(words[0])
        args = words[1:]
        if name is None:
            break
        if name in _ESCAPING and not (name == "alias" and not args):
            return Unwrapped(
                words,
                tuple(found_assignments),
                tuple(chdir),
                tuple(wrappers),
                _ESCAPING[name],
                extra,
            )
        if name in ("command", "builtin"):
            opts = parse_options(args, stop_at_operand=True)
            if opts.has("-v", "-V") and name == "command":
                return Unwrapped(
                    words, tuple(found_assignments), tuple(chdir), tuple(wrappers), lookup=True
                )
            words = tuple(opts.operands)
        elif name == "exec":
            opts = parse_options(args, frozenset({"-a"}), stop_at_operand=True)
            words = tuple(opts.operands)
        elif name == "env":
            opts, inner, new = _env(args)
            if opts.has("-S", "--split-string"):
                return Unwrapped(
                    words,
                    tuple(found_assignments),
                    tuple(chdir),
                    tuple(wrappers),
                    "`env -S` splits a string into a command",
                )
            found_assignments.extend(new)
            chdir.extend(
                _word(v) if v is not None else Word("?", None) for v in opts.values("-C", "--chdir")
            )
            if not inner:
                break  # plain `env`: prints the environment
            words = inner
        elif name == "xargs":
            opts = parse_options(
                args,
                _names(
                    "-a -d -E -e -I -i -L -l -n -P -s --arg-file --delimiter --eof --replace "
                    "--max-lines --max-args --max-procs --max-chars --process-slot-var"
                ),
                stop_at_operand=True,
            )
            words = tuple(opts.operands) or (_word("echo"),)
            extra = True
        elif name in _HARMLESS_WRAPPERS:
            takes, positional = _HARMLESS_WRAPPERS[name]
            opts = parse_options(args, takes, stop_at_operand=True)
            if name == "time" and opts.has("-o", "--output"):
                break  # GNU time writing a file: judged as a program of its own
            operands = opts.operands
            if name in ("chrt", "taskset") and opts.has("-p", "--pid"):
                break  # changes another process: not a wrapper then
            words = tuple(operands[positional:])
        else:
            break
        wrappers.append(name)
    return Unwrapped(
        words, tuple(found_assignments), tuple(chdir), tuple(wrappers), extra_args=extra
    )


def _env(args: Sequence[Word]) -> tuple[Options, tuple[Word, ...], list[Assignment]]:
    """``env [options] [NAME=value]… [command]``."""
    takes = _names("-u -C -S --unset --chdir --split-string")
    opts = Options()
    assignments: list[Assignment] = []
    i = 0
    while i < len(args):
        word = args[i]
        value = word.value
        if value is None or not word.static:
            opts.dynamic = True
            break
        if value == "--":
            i += 1
            break
        if value.startswith("-") and value != "-" and "=" not in value.split("-", 1)[0]:
            parsed = parse_options(args[i : i + 2], takes)
            name = value.split("=", 1)[0] if value.startswith("--") else value[:2]
            consumed = 2 if (name in takes and "=" not in value and len(value) == len(name)) else 1
            opts.flags.extend(parsed.flags[:1] if consumed == 1 else parsed.flags)
            i += consumed
            continue
        if "=" in value and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", value):
            name, _, given = value.partition("=")
            assignments.append(Assignment(name, _word(given), value))
            i += 1
            continue
        break
    return opts, tuple(args[i:]), assignments


# --- effects --------------------------------------------------------------------------------

SHELL_ONLY = _names(
    "cd pushd popd dirs true false : exit return echo printf pwd test [ sleep wait "
    "shift set break continue shopt umask ulimit read getopts unalias jobs times"
)
"""Builtins whose only effects stay inside the shell (their redirections are judged apart)."""

ALWAYS_READS = _names(
    "cat head tail wc nl tac rev fold fmt cut paste join comm column tr od hexdump "
    "strings stat du df ls dir vdir whoami id groups uname nproc free uptime printenv "
    "locale arch tty getconf realpath readlink basename dirname seq expr md5sum "
    "sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum base32 basenc "
    "diff cmp grep egrep fgrep zcat bzcat xzcat zgrep which whereis type jq numfmt "
    "tsort ps pgrep lscpu nm readelf objdump lsof zipinfo w who last"
)
"""Programs that only read, whatever their arguments."""

_READS_UNLESS: dict[str, tuple[frozenset[str], frozenset[str], str]] = {
    # name: (options that take a value, options that make it write or run code, the note)
    "sort": (
        _names(
            "-o --output -T --temporary-directory -k --key -t --field-separator -S "
            "--buffer-size --compress-program --files0-from --parallel --batch-size"
        ),
        _names("-o --output -T --temporary-directory --compress-program"),
        "writes with -o",
    ),
    "shuf": (
        _names("-o --output -n --head-count -i --input-range --random-source"),
        frozenset({"-o", "--output"}),
        "writes with -o",
    ),
    "tree": (
        _names("-o -L -P -I -H -T --charset --filelimit --timefmt --sort"),
        frozenset({"-o"}),
        "writes with -o",
    ),
    "date": (
        _names("-d --date -f --file -r --reference -I"),
        frozenset({"-s", "--set"}),
        "sets the clock with -s",
    ),
    "rg": (
        _names(
            "-e --regexp -f --file -g --glob -t --type -T --type-not -m --max-count -A -B -C "
            "--context --after-context --before-context --pre --pre-glob -M --max-columns -j "
            "--threads --type-add -E --encoding --sort --sortr -r --replace --color --colors "
            "--max-depth --maxdepth --iglob --ignore-file --path-separator --max-filesize "
            "--engine"
        ),
        _names("--pre --pre-glob --search-zip -z"),
        "runs a preprocessor command with --pre",
    ),
    "hostname": (frozenset(), _names("-F --file -b --boot"), "sets the host name"),
    "base64": (
        _names("-o --output -i --input -w --wrap"),
        frozenset({"-o", "--output"}),
        "writes with -o",
    ),
    "file": (
        _names("-m --magic-file -f --files-from -F --separator -e --exclude -P --parameter"),
        frozenset({"-C", "--compile"}),
        "compiles a magic file (-C)",
    ),
}


def effect_of(unwrapped: Unwrapped) -> Effect:
    """What the program of ``unwrapped`` does with its arguments."""
    words = unwrapped.words
    if unwrapped.problem:
        return Effect("unknown", problem=unwrapped.problem)
    if unwrapped.lookup:
        return Effect("reads", key=("command", "-v"))
    if not words:
        return Effect("inert")
    name = program_name(words[0])
    if name is None:
        return Effect("unknown", problem="the program to run is only known at run time")
    args = tuple(words[1:])
    if unwrapped.extra_args:
        args = (*args, Word("…", None))  # xargs appends what it reads
    if "/" in name:
        # A program file outside the system folders may be anything, whatever its name:
        # judged by its name for what it runs, but never read-only.
        inner = effect_of(Unwrapped((_word(os.path.basename(name)), *args), ()))
        kind: Kind = inner.kind if inner.kind in ("writes", "runs_code") else "runs_code"
        return Effect(
            kind,
            writes=inner.writes,
            runs=(Run(words[0], "the program"), *inner.runs),
            note="runs a program file",
        )
    if name in SHELL_ONLY or name in ALWAYS_READS:
        return Effect("reads", key=(name,))
    judge = _JUDGES.get(_family(name))
    if judge is not None:
        return judge(name, args)
    if name in _READS_UNLESS:
        takes, dangerous, note = _READS_UNLESS[name]
        opts = parse_options(args, takes)
        if opts.dynamic:
            return Effect("unknown", note="an argument is only known at run time")
        if name == "hostname" and opts.operands:
            return Effect("writes", note="sets the host name")
        if name == "date" and any(not (w.value or "").startswith("+") for w in opts.operands):
            return Effect("writes", note="sets the clock")
        if opts.has(*dangerous):
            outputs = [v for v in opts.values("-o", "--output") if v is not None]
            return Effect("writes", writes=tuple(_word(v) for v in outputs), note=note)
        return Effect("reads", key=(name,))
    return Effect("unknown")


def _family(name: str) -> str:
    """Programs that share one judge: python3.12 → python, gawk → awk."""
    if re.fullmatch(r"(python|pypy)(\d+(\.\d+)*)?|ipython3?", name):
        return "python"
    if re.fullmatch(r"pip\d*(\.\d+)?", name):
        return "pip"
    if name in ("gawk", "mawk", "nawk", "busybox-awk"):
        return "awk"
    if name in ("sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "ash"):
        return "shell"
    if name in ("gmake", "bmake"):
        return "make"
    if name in ("py.test",):
        return "pytest"
    if name in ("pnpm", "yarn"):
        return "npm"
    if name in ("mamba", "micromamba"):
        return "conda"
    return name


Judge = Callable[[str, tuple[Word, ...]], Effect]


def _code(note: str, *runs: Run) -> Effect:
    return Effect("runs_code", runs=runs, note=note)


def _is_version(args: Sequence[Word]) -> bool:
    return len(args) == 1 and args[0].value in ("--version", "-V", "-v", "--help", "-h")


def _python(name: str, args: tuple[Word, ...]) -> Effect:
    if _is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    opts = parse_options(args, _names("-c -m -W -X -Q"), stop_at_operand=True)
    module = next((v for n, v in opts.flags if n == "-m"), None)
    if opts.has("-c"):
        return _code("runs the Python code given with -c")
    if module is not None:
        if module in ("pytest", "unittest"):
            return _tests(opts.operands)
        if module == "pip":
            return _pip("pip", tuple(opts.operands))
        if module in ("venv", "virtualenv"):
            return Effect(
                "writes",
                writes=tuple(w for w in opts.operands[:1]),
                note="creates a virtual environment",
            )
        return _code(f"runs the module {module}")
    if opts.operands:
        return _code("runs a Python script", Run(opts.operands[0], "the script"))
    return _code("runs Python code from its input")


def _tests(targets: Sequence[Word]) -> Effect:
    paths = [w for w in targets if not (w.value or "").startswith("-")] or [_word(".")]
    return _code(
        "runs the tests (and their conftest.py)",
        *(Run(p, "the test files", folder=True) for p in paths),
    )


def _pytest(name: str, args: tuple[Word, ...]) -> Effect:
    if _is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    opts = parse_options(
        args,
        _names(
            "-k -m -p -c -o --rootdir --basetemp --junitxml --junit-xml --confcutdir -W "
            "--maxfail --tb --durations --log-file --cov"
        ),
    )
    return _tests(opts.operands)


def _shell(name: str, args: tuple[Word, ...]) -> Effect:
    if _is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    opts = parse_options(args, _names("-o +o -O +O --rcfile --init-file"), stop_at_operand=True)
    if opts.has("-c"):
        return _code(f"runs the {name} code given with -c")
    if opts.operands:
        return _code(f"runs a {name} script", Run(opts.operands[0], "the script"))
    return _code(f"runs {name} code from its input")


def _interpreter(flags: frozenset[str], takes: frozenset[str] = frozenset()) -> Judge:
    """node -e, perl -e, ruby -e, …: code on the command line, or a script file."""

    def judge(name: str, args: tuple[Word, ...]) -> Effect:
        if _is_version(args):
            return Effect("reads", key=(name, args[0].value or ""))
        opts = parse_options(args, takes | flags, stop_at_operand=True)
        if opts.has(*flags):
            return _code(f"runs the {name} code given on the command line")
        if opts.operands:
            return _code(f"runs a {name} script", Run(opts.operands[0], "the script"))
        return _code(f"runs {name} code from its input")

    return judge


def _awk(name: str, args: tuple[Word, ...]) -> Effect:
    if _is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    opts = parse_options(args, _names("-f -v -F --file --assign --field-separator"))
    files = [v for v in opts.values("-f", "--file") if v is not None]
    return _code(
        "an awk program can run commands and write files",
        *(Run(_word(f), "the awk program") for f in files),
    )


def _source(name: str, args: tuple[Word, ...]) -> Effect:
    if not args:
        return _code(f"`{name}` runs a file")
    return _code("runs a shell file in this shell", Run(args[0], "the script"))


def _make(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        _names(
            "-f -C -I -j -l -o -W --file --makefile --directory --include-dir --jobs "
            "--load-average --old-file --what-if --assume-new --assume-old --eval"
        ),
    )
    if _is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    folder = next((v for v in opts.values("-C", "--directory") if v), ".")
    files = [v for v in opts.values("-f", "--file", "--makefile") if v is not None]
    runs = [Run(_word(os.path.join(folder, f)), "the Makefile") for f in files] or [
        Run(_word(os.path.join(folder, m)), "the Makefile")
        for m in ("GNUmakefile", "makefile", "Makefile")
    ]
    return _code("runs the Makefile's recipes", *runs)


def _npm(name: str, args: tuple[Word, ...]) -> Effect:
    if _is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    sub = args[0].value if args and args[0].static else None
    if sub in ("ls", "list", "view", "info", "outdated", "why", "explain", "--version"):
        return Effect("reads", key=(name, sub))
    if sub in _names(
        "run run-script test start exec x dlx install i ci add rebuild restart stop pack publish"
    ):
        return _code(
            f"`{name} {sub}` runs package scripts", Run(_word("package.json"), "package.json")
        )
    return Effect("unknown")


def _pip(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        _names(
            "--python --log --cache-dir --proxy --timeout --retries --exists-action "
            "--trusted-host --cert --client-cert"
        ),
        stop_at_operand=True,
    )
    if _is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    if opts.dynamic or not opts.operands:
        return Effect("unknown")
    sub = opts.operands[0].value
    rest = opts.operands[1:]
    if sub in ("list", "show", "freeze", "check", "help", "inspect", "debug"):
        return Effect("reads", key=("pip", sub))
    if sub == "config" and rest and rest[0].value in ("list", "get", "debug"):
        return Effect("reads", key=("pip", "config", rest[0].value or ""))
    if sub in ("install", "download", "wheel", "uninstall"):
        return _code(f"`pip {sub}` installs or builds packages, which can run their code")
    return Effect("unknown")


def _conda(name: str, args: tuple[Word, ...]) -> Effect:
    sub = args[0].value if args and args[0].static else None
    if _is_version(args) or sub in ("list", "info", "search"):
        return Effect("reads", key=(name, sub or ""))
    if sub == "env" and len(args) > 1 and args[1].value == "list":
        return Effect("reads", key=(name, "env", "list"))
    if sub == "run":
        return _code(f"`{name} run` runs a command")
    return Effect("unknown")


def _jupyter(name: str, args: tuple[Word, ...]) -> Effect:
    sub = args[0].value if args and args[0].static else None
    rest = args[1:]
    if _is_version(args) or sub in ("--paths", "--runtime-dir", "--data-dir", "--config-dir"):
        return Effect("reads", key=(name, sub or ""))
    if sub in ("kernelspec", "labextension", "serverextension", "server", "notebook") and (
        rest and rest[0].value == "list"
    ):
        return Effect("reads", key=(name, sub, "list"))
    if sub == "nbconvert":
        opts = parse_options(rest, _names("--to --output --output-dir --template"))
        if opts.has("--execute", "--inplace") or opts.dynamic:
            return _code(
                "runs the notebook's code", *(Run(w, "the notebook") for w in opts.operands)
            )
        return Effect("writes", note="writes the converted notebook")
    if sub in ("execute", "run"):
        return _code("runs a notebook's code", *(Run(w, "the notebook") for w in rest[:1]))
    return Effect("unknown")


def _papermill(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        _names("-p -r -y -f -k --cwd --parameters --kernel --language"),
    )
    return _code("runs the notebook's code", *(Run(w, "the notebook") for w in opts.operands[:1]))


def _find(name: str, args: tuple[Word, ...]) -> Effect:
    values = [w.value for w in args]
    if any(not w.static for w in args):
        return Effect("unknown", note="an argument is only known at run time")
    if any(v in ("-exec", "-execdir", "-ok", "-okdir") for v in values):
        return _code("runs a command on each file found (-exec)")
    if "-delete" in values:
        starts: list[Word] = []
        for w in args:
            if (w.value or "").startswith(("-", "(", ")", "!")):
                break
            starts.append(w)
        return Effect(
            "writes", writes=tuple(starts) or (_word("."),), note="deletes what it finds (-delete)"
        )
    for option in ("-fprint", "-fprint0", "-fprintf", "-fls"):
        if option in values:
            target = values.index(option) + 1
            written = (args[target],) if target < len(args) else ()
            return Effect("writes", writes=written, note=f"writes a file ({option})")
    return Effect("reads", key=(name,))


def _sed(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(args, _names("-e -f -l --expression --file --line-length"))
    if opts.dynamic:
        return Effect("unknown", note="an argument is only known at run time")
    in_place = opts.has("-i", "--in-place") or any(
        n.startswith("--in-place") for n, _ in opts.flags
    )
    scripts = [v for v in opts.values("-e", "--expression") if v is not None]
    files = opts.operands
    if not scripts and files:
        scripts, files = [files[0].value or ""], files[1:]
    if opts.has("-f", "--file"):
        return _code("runs a sed script from a file")
    verdict = max((_sed_script(s) for s in scripts), default="reads", key=_SED_ORDER.index)
    if verdict == "code":
        return _code("a sed script that runs commands (e)")
    if in_place:
        return Effect("writes", writes=tuple(files), note="edits files in place (-i)")
    if verdict == "writes":
        return Effect("writes", note="a sed script that writes files (w)")
    return Effect("reads", key=(name,))


_SED_ORDER = ["reads", "writes", "code"]


def _sed_script(script: str) -> str:
    """'reads', 'writes' (w/W) or 'code' (e, or anything this reader cannot follow)."""
    i, n = 0, len(script)
    worst = "reads"

    def skip_regex(j: int, delim: str) -> int:
        while j < n and script[j] != delim:
            j += 2 if script[j] == "\\" else 1
        return j + 1

    while i < n:
        c = script[i]
        if c in " \t\n;{}!":
            i += 1
            continue
        if c.isdigit() or c in "$,~+":
            i += 1
            continue
        if c == "/" or c == "\\":
            delim = "/" if c == "/" else (script[i + 1] if i + 1 < n else "")
            i = skip_regex(i + (1 if c == "/" else 2), delim)
            while i < n and script[i] in "IM":
                i += 1
            continue
        if c in "s":
            if i + 1 >= n:
                return "code"
            delim = script[i + 1]
            if delim in "\\\n":
                return "code"
            j = skip_regex(i + 2, delim)
            j = skip_regex(j, delim)
            k = j
            while k < n and script[k] not in ";\n}":
                k += 1
            flags = script[j:k]
            if "e" in flags:
                return "code"
            if "w" in flags or "W" in flags:
                worst = "writes"
            i = k
            continue
        if c == "y":
            if i + 1 >= n:
                return "code"
            delim = script[i + 1]
            i = skip_regex(skip_regex(i + 2, delim), delim)
            continue
        if c in "pdDnNgGhHxlPqQ=zF":
            i += 1
            continue
        if c in "aic":  # the rest of the line is text
            while i < n and script[i] != "\n":
                i += 1
            continue
        if c in "bt:T":  # labels
            while i < n and script[i] not in ";\n":
                i += 1
            continue
        if c in "rR":
            while i < n and script[i] != "\n":
                i += 1
            continue
        if c in "wW":
            worst = "writes"
            while i < n and script[i] != "\n":
                i += 1
            continue
        return "code"  # e, or a command this reader does not know
    return worst


def _tar(name: str, args: tuple[Word, ...]) -> Effect:
    if not args:
        return Effect("unknown")
    first = args[0].value or ""
    # Old style: the first word holds the letters without a dash (tar xzf a.tgz).
    letters = first if first and not first.startswith("-") else ""
    opts = parse_options(
        args[1:] if letters else args,
        _names(
            "-f -C -T -X -I --file --directory --files-from --exclude-from "
            "--use-compress-program --to-command --transform --exclude"
        ),
    )
    listed = "t" in letters or opts.has("-t", "--list")
    if opts.has(
        "--to-command",
        "-I",
        "--use-compress-program",
        "--checkpoint-action",
        "--info-script",
        "--new-volume-script",
        "-F",
    ):
        return _code("runs a command (--to-command, -I, …)")
    if opts.dynamic:
        return Effect("unknown", note="an argument is only known at run time")
    if (
        listed
        and not any(c in letters for c in "xcrua")
        and not opts.has(
            "-x", "-c", "-r", "-u", "-A", "--extract", "--get", "--create", "--append", "--update"
        )
    ):
        return Effect("reads", key=(name, "--list"))
    folder = next((v for v in opts.values("-C", "--directory") if v), ".")
    archive = [v for v in opts.values("-f", "--file") if v]
    if "x" in letters or opts.has("-x", "--extract", "--get"):
        return Effect("writes", writes=(_word(folder),), note="extracts files")
    return Effect("writes", writes=tuple(_word(a) for a in archive), note="writes an archive")


def _unzip(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(args, frozenset({"-d", "-x", "-P"}))
    if opts.has("-l", "-Z", "-t", "-v") and not opts.dynamic:
        return Effect("reads", key=(name, "-l"))
    folder = next((v for v in opts.values("-d") if v), ".")
    return Effect("writes", writes=(_word(folder),), note="extracts files")


def _operand_writer(note: str, takes: frozenset[str] = frozenset(), skip: int = 0) -> Judge:
    """Programs that change every file they name (rm, touch, mkdir, chmod…)."""

    def judge(name: str, args: tuple[Word, ...]) -> Effect:
        opts = parse_options(args, takes)
        operands = opts.operands[skip:] if not opts.has("--reference") else opts.operands
        return Effect("writes", writes=tuple(operands), note=note)

    return judge


def _copier(moves: bool) -> Judge:
    """cp / mv / ln / install: the last operand (or -t DIR) is written; mv also its sources."""

    def judge(name: str, args: tuple[Word, ...]) -> Effect:
        opts = parse_options(
            args,
            _names(
                "-t --target-directory -S --suffix -m --mode -o --owner -g --group --backup "
                "--sparse --reflink"
            ),
        )
        target = opts.values("-t", "--target-directory")
        operands = list(opts.operands)
        written: list[Word] = [Word(t, t) if t is not None else Word("?", None) for t in target]
        if not target and operands:
            written.append(operands.pop())
        if moves:
            written.extend(operands)
        return Effect("writes", writes=tuple(written), note="writes files")

    return judge


def _tee(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(args, frozenset({"--output-error"}))
    return Effect("writes", writes=tuple(opts.operands), note="writes files")


def _dd(name: str, args: tuple[Word, ...]) -> Effect:
    written = tuple(
        Word(w.text, (w.value or "")[3:]) if w.static else Word(w.text, None)
        for w in args
        if (w.value or w.text).startswith("of=")
    )
    return Effect("writes", writes=written, note="writes a file (of=)")


def _two_operand_writer(name: str, args: tuple[Word, ...]) -> Effect:
    """uniq IN OUT, xxd IN OUT: a second operand is written."""
    opts = parse_options(
        args,
        _names(
            "-f -s -w -c -g -l -o -n --skip-fields --skip-chars --check-chars --cols "
            "--groupsize --len --seek --name"
        ),
    )
    if opts.dynamic:
        return Effect("unknown", note="an argument is only known at run time")
    if len(opts.operands) >= 2:
        return Effect("writes", writes=(opts.operands[1],), note="writes its output file")
    return Effect("reads", key=(name,))


def _curl(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        _names(
            "-o --output -D --dump-header -c --cookie-jar --trace --trace-ascii --stderr "
            "--libcurl -K --config --output-dir -d --data -H --header -X --request -u --user "
            "-F --form -T --upload-file -A --user-agent -e --referer -b --cookie -x --proxy "
            "-m --max-time -w --write-out --data-binary --data-raw --data-urlencode "
            "--connect-timeout --retry -r --range"
        ),
    )
    written = [
        v
        for v in opts.values(
            "-o",
            "--output",
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--stderr",
            "--libcurl",
        )
        if v
    ]
    folder = [v for v in opts.values("--output-dir") if v]
    if opts.has("-O", "--remote-name", "--remote-name-all", "-J"):
        written.extend(folder or ["."])
    return Effect(
        "writes", writes=tuple(_word(w) for w in written), note="transfers data over the network"
    )


def _wget(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        _names(
            "-O --output-document -P --directory-prefix -o --output-file -a --append-output "
            "-i --input-file -t --tries -T --timeout -U --user-agent --header -e --execute"
        ),
    )
    written = [
        v
        for v in opts.values(
            "-O", "--output-document", "-o", "--output-file", "-a", "--append-output"
        )
        if v and v != "-"
    ]
    if not opts.has("-O", "--output-document"):
        written.extend(v for v in opts.values("-P", "--directory-prefix") if v)
        if not opts.has("-P", "--directory-prefix"):
            written.append(".")
    return Effect("writes", writes=tuple(_word(w) for w in written), note="downloads files")


def _kill(name: str, args: tuple[Word, ...]) -> Effect:
    return Effect("writes", note="signals processes")


# --- git -----------------------------------------------------------------------------------

_GIT_GLOBAL_TAKES = _names(
    "-C -c --git-dir --work-tree --namespace --config-env --super-prefix --exec-path "
    "--list-cmds --attr-source"
)
_GIT_GLOBAL_CODE = _names("-c --config-env --exec-path --git-dir --work-tree --super-prefix")
_GIT_CODE_OPTIONS = _names(
    "--upload-pack --receive-pack --exec --open-files-in-pager --ext-diff --textconv --filters"
)
_GIT_SUB_CODE_OPTIONS = {
    "grep": ("-O",),
    "ls-remote": ("-u",),
    "clone": ("-u",),
    "fetch": ("-u",),
    "pull": ("-u",),
    "archive": ("--remote",),
}
_GIT_WRITE_OPTIONS = frozenset({"--output", "--output-directory"})
_GIT_READ = _names(
    "status log show diff blame annotate shortlog describe rev-parse rev-list "
    "ls-files ls-tree ls-remote cat-file grep whatchanged cherry merge-base name-rev "
    "count-objects check-ignore check-attr check-ref-format var version show-ref "
    "for-each-ref range-diff diff-tree diff-files diff-index show-branch"
)
_GIT_LISTING = {
    # subcommand: words that keep it a listing; any other operand makes it write
    "branch": _names(
        "-a --all -r --remotes -v -vv --verbose -l --list --contains --no-contains "
        "--merged --no-merged --points-at --show-current --format --sort --color "
        "--no-color --column --no-column -i --ignore-case --abbrev --no-abbrev"
    ),
    "tag": _names(
        "-l --list -n --contains --no-contains --merged --no-merged --points-at --sort "
        "--format --column --no-column --color -i --ignore-case"
    ),
    "remote": _names("-v --verbose show get-url"),
    "stash": frozenset({"list", "show"}),
    "worktree": frozenset({"list"}),
    "reflog": frozenset({"show"}),
    "config": _names(
        "--get --get-all --get-regexp --list -l --show-origin --show-scope --name-only "
        "--null -z get list --local --global --system --worktree --type --bool --int "
        "--path --default"
    ),
    "submodule": frozenset({"status", "summary"}),
}
_GIT_CONFIG_WRITERS = _names("config remote submodule lfs worktree")


def _git(name: str, args: tuple[Word, ...]) -> Effect:
    globals_ = parse_options(args, _GIT_GLOBAL_TAKES, stop_at_operand=True)
    if globals_.dynamic and not globals_.operands:
        return Effect("unknown", note="an argument is only known at run time")
    if globals_.has(*_GIT_GLOBAL_CODE):
        return _code(
            "sets git's configuration or repository on the command line, which can run commands"
        )
    if not globals_.operands:
        return (
            Effect("reads", key=("git",))
            if globals_.has("--version", "--help")
            else (Effect("unknown"))
        )
    sub_word, *rest = globals_.operands
    sub = sub_word.value if sub_word.static else None
    if sub is None:
        return Effect("unknown", problem="the git subcommand is only known at run time")
    if any(not w.static for w in rest):
        return Effect("unknown", note="an argument is only known at run time")
    values = [w.value or "" for w in rest]
    flags = {v.split("=", 1)[0] for v in values if v.startswith("-")}
    sub_code = _GIT_SUB_CODE_OPTIONS.get(sub, ())
    if (
        flags & _GIT_CODE_OPTIONS
        or any(v.startswith(o) and not v.startswith("--") for v in values for o in sub_code)
        or any(v.startswith("--") and v.split("=", 1)[0] in sub_code for v in values)
    ):
        return _code(f"`git {sub}` with an option that runs a command")
    if flags & _GIT_WRITE_OPTIONS:
        written = [v.split("=", 1)[1] for v in values if v.startswith("--output") and "=" in v]
        return Effect(
            "writes",
            writes=tuple(_word(w) for w in written),
            note=f"`git {sub}` writes a file (--output)",
        )
    if sub in _GIT_READ:
        return Effect("reads", key=("git", sub))
    if sub in _GIT_LISTING and _git_lists(sub, values):
        return Effect("reads", key=("git", sub))
    if (
        sub in _GIT_CONFIG_WRITERS
        and not (sub == "lfs" and values[:1] not in (["install"], ["uninstall"], ["update"]))
    ) or (
        sub == "branch"
        and any(
            v.startswith(("--set-upstream", "-u", "--unset-upstream", "--edit-description"))
            for v in values
        )
    ):
        return Effect(
            "writes",
            writes=(_word(".git/config"),),
            note=f"`git {sub}` changes git's configuration",
        )
    if sub == "clone":
        operands = [w for w in rest if not (w.value or "").startswith("-")]
        target = operands[1:2] or [_word(".")]
        return Effect("writes", writes=tuple(target), note="clones a repository")
    return Effect("writes", note=f"`git {sub}` changes the repository or the files")


def _git_lists(sub: str, values: Sequence[str]) -> bool:
    """Whether a `git branch/tag/remote/stash/config/…` invocation only lists or reads."""
    allowed = _GIT_LISTING[sub]
    if sub == "config":
        reading = {"--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list"}
        return (
            bool(set(values) & reading)
            and all(
                v in allowed or v.split("=", 1)[0] in allowed or not v.startswith("-")
                for v in values
            )
            and not set(values)
            & {
                "set",
                "unset",
                "--add",
                "--unset",
                "--unset-all",
                "--replace-all",
                "--rename-section",
                "--remove-section",
                "-e",
                "--edit",
            }
        )
    if sub in ("branch", "tag"):
        patterns = any(v in ("-l", "--list") for v in values)
        return all(
            v in allowed or v.split("=", 1)[0] in allowed or (patterns and not v.startswith("-"))
            for v in values
        )
    # remote, stash, worktree, reflog, submodule: the first word says what it does
    return (not values and sub != "submodule") or (bool(values) and values[0] in allowed)


def _hook_installer(name: str, args: tuple[Word, ...]) -> Effect:
    sub = args[0].value if args and args[0].static else None
    if sub in ("install", "init", "uninstall") or name == "husky":
        return Effect("writes", writes=(_word(".git/hooks"),), note=f"`{name}` installs git hooks")
    return _code(f"`{name}` runs the hooks")


def _remote_copy(name: str, args: tuple[Word, ...]) -> Effect:
    """rsync / scp: a copy, unless an option names a program to run for the transport."""
    values = [w.value or "" for w in args]
    if any(not w.static for w in args) or any(
        v.split("=", 1)[0] in ("-e", "--rsh", "-S", "--rsync-path", "-o", "-F")
        or (v.startswith("-e") and not v.startswith("--"))
        for v in values
    ):
        return _code(f"`{name}` with an option that runs a program")
    return _copier(moves=False)(name, args)


_JUDGES: dict[str, Judge] = {
    "env": lambda name, args: Effect("reads", key=("env",)),
    "python": _python,
    "pip": _pip,
    "pytest": _pytest,
    "shell": _shell,
    "awk": _awk,
    "source": _source,
    ".": _source,
    "eval": lambda name, args: _code("runs the code given to eval"),
    "trap": lambda name, args: (
        _code("sets code to run on a signal") if args else Effect("reads", key=("trap",))
    ),
    "node": _interpreter(
        _names("-e --eval -p --print"),
        _names("-r --require --import --loader"),
    ),
    "deno": _interpreter(frozenset({"eval"})),
    "bun": _interpreter(_names("-e --eval -p --print")),
    "perl": _interpreter(frozenset({"-e", "-E"}), frozenset({"-I", "-M", "-m"})),
    "ruby": _interpreter(frozenset({"-e"}), frozenset({"-I", "-r"})),
    "php": _interpreter(frozenset({"-r"})),
    "lua": _interpreter(frozenset({"-e"})),
    "Rscript": _interpreter(frozenset({"-e"})),
    "R": _interpreter(frozenset({"-e", "-f", "--file"})),
    "julia": _interpreter(_names("-e --eval -E --print")),
    "npx": lambda name, args: _code("runs a package's command"),
    "make": _make,
    "npm": _npm,
    "conda": _conda,
    "jupyter": _jupyter,
    "papermill": _papermill,
    "find": _find,
    "sed": _sed,
    "tar": _tar,
    "unzip": _unzip,
    "git": _git,
    "pre-commit": _hook_installer,
    "husky": _hook_installer,
    "rm": _operand_writer("deletes files"),
    "unlink": _operand_writer("deletes files"),
    "rmdir": _operand_writer("deletes folders"),
    "shred": _operand_writer("destroys files", _names("-n -s --iterations --size")),
    "touch": _operand_writer("creates or touches files", _names("-d -r -t --date --reference")),
    "mkdir": _operand_writer("creates folders", frozenset({"-m", "--mode"})),
    "mkfifo": _operand_writer("creates pipes", frozenset({"-m", "--mode"})),
    "truncate": _operand_writer("changes file sizes", _names("-s -r --size --reference")),
    "chmod": _operand_writer("changes permissions", frozenset(), skip=1),
    "chown": _operand_writer("changes owners", frozenset(), skip=1),
    "chgrp": _operand_writer("changes groups", frozenset(), skip=1),
    "cp": _copier(moves=False),
    "ln": _copier(moves=False),
    "install": _copier(moves=False),
    "rsync": _remote_copy,
    "scp": _remote_copy,
    "mv": _copier(moves=True),
    "tee": _tee,
    "dd": _dd,
    "uniq": _two_operand_writer,
    "xxd": _two_operand_writer,
    "curl": _curl,
    "wget": _wget,
    "kill": _kill,
    "pkill": _kill,
    "killall": _kill,
    "patch": lambda name, args: Effect("writes", note="patches files"),
    "ldd": lambda name, args: _code("ldd may run the program it inspects"),
    "watch": lambda name, args: _code("runs a command repeatedly"),
    "script": lambda name, args: _code("runs a command in a recorded session"),
    "ssh": lambda name, args: _code("runs commands on another machine"),
    "docker": lambda name, args: _code("controls containers"),
    "podman": lambda name, args: _code("controls containers"),
    "tmux": lambda name, args: _code("runs commands in a terminal multiplexer"),
    "screen": lambda name, args: _code("runs commands in a terminal multiplexer"),
    "gdb": lambda name, args: _code("runs a program under a debugger"),
    "strace": lambda name, args: _code("runs a program under strace"),
    "ltrace": lambda name, args: _code("runs a program under ltrace"),
    "valgrind": lambda name, args: _code("runs a program under valgrind"),
    "sqlite3": lambda name, args: _code("sqlite3 can run shell commands (.shell)"),
    "flock": lambda name, args: _code("runs a command holding a lock"),
    "parallel": lambda name, args: _code("runs commands in parallel"),
    "uv": lambda name, args: _code("`uv` installs packages and runs code"),
    "poetry": lambda name, args: _code("`poetry` installs packages and runs code"),
    "pipx": lambda name, args: _code("`pipx` installs packages and runs code"),
    "tox": lambda name, args: _code("runs the test environments"),
    "nox": lambda name, args: _code("runs the noxfile"),
    "cargo": lambda name, args: _code("builds and runs code"),
    "go": lambda name, args: _code("builds and runs code"),
}
