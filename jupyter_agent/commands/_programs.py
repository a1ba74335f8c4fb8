"""What programs do with their arguments: the knowledge behind "Always allow".

:func:`effect_of` says what a program invocation does, once its wrappers are removed
(:func:`~._wrappers.unwrap`: ``timeout 60 ls`` is ``ls``):

- ``inert``: no program at all (``exec 3>log``: only its redirection does something);
- ``reads``: only reads, whatever else its arguments say — a read-only rule may cover it;
  its ``key`` (``git log``, ``ls``) is what such a rule names. Builtins whose effects stay
  inside the shell (``cd``, ``echo``, ``true``) are read-only too;
- ``writes``: changes files (the ones it names are in ``writes``, to be judged by the
  workspace's path rules);
- ``runs_code``: runs code given to it or found in a file (``python -c``, ``make``,
  ``find -exec``, ``sh script.sh``); files of the workspace it runs are in ``runs``;
- ``unknown``: a program this table does not know.

Wrappers are removed first (``_wrappers.py``); git has a module of its own (``_git.py``).

Only ``reads`` can be remembered by program (and subcommand); everything else is
remembered by its exact words. A word only known at run time (``$x``, a glob) could be
any option, so it makes a program with dangerous options no longer read-only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence

from ._effects import Effect, Kind, Run, code
from ._git import judge_git
from ._options import literal, names, parse_options
from ._syntax import Word
from ._wrappers import Unwrapped, program_name

SHELL_ONLY = names(
    "cd pushd popd dirs true false : exit return echo printf pwd test [ sleep wait "
    "shift set break continue shopt umask ulimit read getopts unalias jobs times"
)
"""Builtins whose only effects stay inside the shell (their redirections are judged apart)."""

ALWAYS_READS = names(
    "cat head tail wc nl tac rev fold fmt cut paste join comm column tr od hexdump "
    "strings stat du df ls dir vdir whoami id groups uname nproc free uptime printenv "
    "locale arch tty getconf realpath readlink basename dirname seq expr md5sum "
    "sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum base32 basenc "
    "diff cmp grep egrep fgrep zcat bzcat xzcat zgrep which whereis type jq numfmt "
    "tsort ps pgrep lscpu nm readelf objdump lsof zipinfo w who last"
)
"""Programs that only read, whatever their arguments."""

_READS_UNLESS: dict[str, tuple[frozenset[str], frozenset[str], str, Kind]] = {
    # name: (options that take a value, options that make it write or run code, why, which)
    "sort": (
        names(
            "-o --output -T --temporary-directory -k --key -t --field-separator -S "
            "--buffer-size --compress-program --files0-from --parallel --batch-size"
        ),
        names("-o --output -T --temporary-directory --compress-program"),
        "writes with -o",
        "writes",
    ),
    "shuf": (
        names("-o --output -n --head-count -i --input-range --random-source"),
        frozenset({"-o", "--output"}),
        "writes with -o",
        "writes",
    ),
    "tree": (
        names("-o -L -P -I -H -T --charset --filelimit --timefmt --sort"),
        frozenset({"-o"}),
        "writes with -o",
        "writes",
    ),
    "date": (
        names("-d --date -f --file -r --reference -I"),
        frozenset({"-s", "--set"}),
        "sets the clock with -s",
        "writes",
    ),
    "rg": (
        names(
            "-e --regexp -f --file -g --glob -t --type -T --type-not -m --max-count -A -B -C "
            "--context --after-context --before-context --pre --pre-glob -M --max-columns -j "
            "--threads --type-add -E --encoding --sort --sortr -r --replace --color --colors "
            "--max-depth --maxdepth --iglob --ignore-file --path-separator --max-filesize "
            "--engine"
        ),
        names("--pre --pre-glob --search-zip -z"),
        "runs a preprocessor command with --pre",
        "runs_code",
    ),
    "hostname": (frozenset(), names("-F --file -b --boot"), "sets the host name", "writes"),
    "base64": (
        names("-o --output -i --input -w --wrap"),
        frozenset({"-o", "--output"}),
        "writes with -o",
        "writes",
    ),
    "file": (
        names("-m --magic-file -f --files-from -F --separator -e --exclude -P --parameter"),
        frozenset({"-C", "--compile"}),
        "compiles a magic file (-C)",
        "writes",
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
        inner = effect_of(Unwrapped((literal(os.path.basename(name)), *args), ()))
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
        takes, dangerous, note, kind = _READS_UNLESS[name]
        opts = parse_options(args, takes)
        if opts.dynamic:
            return Effect("unknown", note="an argument is only known at run time")
        if name == "hostname" and opts.operands:
            return Effect("writes", note="sets the host name")
        if name == "date" and any(not (w.value or "").startswith("+") for w in opts.operands):
            return Effect("writes", note="sets the clock")
        if opts.has(*dangerous):
            outputs = [v for v in opts.values("-o", "--output") if v is not None]
            return Effect(kind, writes=tuple(literal(v) for v in outputs), note=note)
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


def _is_version(args: Sequence[Word]) -> bool:
    return len(args) == 1 and args[0].value in ("--version", "-V", "-v", "--help", "-h")


def _python(name: str, args: tuple[Word, ...]) -> Effect:
    if _is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    opts = parse_options(args, names("-c -m -W -X -Q"), stop_at_operand=True)
    module = next((v for n, v in opts.flags if n == "-m"), None)
    if opts.has("-c"):
        return code("runs the Python code given with -c")
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
        return code(f"runs the module {module}")
    if opts.operands:
        return code("runs a Python script", Run(opts.operands[0], "the script"))
    return code("runs Python code from its input")


def _tests(targets: Sequence[Word]) -> Effect:
    paths = [w for w in targets if not (w.value or "").startswith("-")] or [literal(".")]
    return code(
        "runs the tests (and their conftest.py)",
        *(Run(p, "the test files", folder=True) for p in paths),
    )


def _pytest(name: str, args: tuple[Word, ...]) -> Effect:
    if _is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    opts = parse_options(
        args,
        names(
            "-k -m -p -c -o --rootdir --basetemp --junitxml --junit-xml --confcutdir -W "
            "--maxfail --tb --durations --log-file --cov"
        ),
    )
    return _tests(opts.operands)


def _shell(name: str, args: tuple[Word, ...]) -> Effect:
    if _is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    opts = parse_options(args, names("-o +o -O +O --rcfile --init-file"), stop_at_operand=True)
    if opts.has("-c"):
        return code(f"runs the {name} code given with -c")
    if opts.operands:
        return code(f"runs a {name} script", Run(opts.operands[0], "the script"))
    return code(f"runs {name} code from its input")


def _interpreter(flags: frozenset[str], takes: frozenset[str] = frozenset()) -> Judge:
    """node -e, perl -e, ruby -e, …: code on the command line, or a script file."""

    def judge(name: str, args: tuple[Word, ...]) -> Effect:
        if _is_version(args):
            return Effect("reads", key=(name, args[0].value or ""))
        opts = parse_options(args, takes | flags, stop_at_operand=True)
        if opts.has(*flags):
            return code(f"runs the {name} code given on the command line")
        if opts.operands:
            return code(f"runs a {name} script", Run(opts.operands[0], "the script"))
        return code(f"runs {name} code from its input")

    return judge


def _awk(name: str, args: tuple[Word, ...]) -> Effect:
    if _is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    opts = parse_options(args, names("-f -v -F --file --assign --field-separator"))
    files = [v for v in opts.values("-f", "--file") if v is not None]
    return code(
        "an awk program can run commands and write files",
        *(Run(literal(f), "the awk program") for f in files),
    )


def _source(name: str, args: tuple[Word, ...]) -> Effect:
    if not args:
        return code(f"`{name}` runs a file")
    return code("runs a shell file in this shell", Run(args[0], "the script"))


def _make(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        names(
            "-f -C -I -j -l -o -W --file --makefile --directory --include-dir --jobs "
            "--load-average --old-file --what-if --assume-new --assume-old --eval"
        ),
    )
    if _is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    folder = next((v for v in opts.values("-C", "--directory") if v), ".")
    files = [v for v in opts.values("-f", "--file", "--makefile") if v is not None]
    runs = [Run(literal(os.path.join(folder, f)), "the Makefile") for f in files] or [
        Run(literal(os.path.join(folder, m)), "the Makefile")
        for m in ("GNUmakefile", "makefile", "Makefile")
    ]
    return code("runs the Makefile's recipes", *runs)


def _npm(name: str, args: tuple[Word, ...]) -> Effect:
    if _is_version(args):
        return Effect("reads", key=(name, args[0].value or ""))
    sub = args[0].value if args and args[0].static else None
    if sub in ("ls", "list", "view", "info", "outdated", "why", "explain", "--version"):
        return Effect("reads", key=(name, sub))
    if sub in names(
        "run run-script test start exec x dlx install i ci add rebuild restart stop pack publish"
    ):
        return code(
            f"`{name} {sub}` runs package scripts", Run(literal("package.json"), "package.json")
        )
    return Effect("unknown")


def _pip(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        names(
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
        return code(f"`pip {sub}` installs or builds packages, which can run their code")
    return Effect("unknown")


def _conda(name: str, args: tuple[Word, ...]) -> Effect:
    sub = args[0].value if args and args[0].static else None
    if _is_version(args) or sub in ("list", "info", "search"):
        return Effect("reads", key=(name, sub or ""))
    if sub == "env" and len(args) > 1 and args[1].value == "list":
        return Effect("reads", key=(name, "env", "list"))
    if sub == "run":
        return code(f"`{name} run` runs a command")
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
        opts = parse_options(rest, names("--to --output --output-dir --template"))
        if opts.has("--execute", "--inplace") or opts.dynamic:
            return code(
                "runs the notebook's code", *(Run(w, "the notebook") for w in opts.operands)
            )
        return Effect("writes", note="writes the converted notebook")
    if sub in ("execute", "run"):
        return code("runs a notebook's code", *(Run(w, "the notebook") for w in rest[:1]))
    return Effect("unknown")


def _papermill(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        names("-p -r -y -f -k --cwd --parameters --kernel --language"),
    )
    return code("runs the notebook's code", *(Run(w, "the notebook") for w in opts.operands[:1]))


def _find(name: str, args: tuple[Word, ...]) -> Effect:
    values = [w.value for w in args]
    if any(not w.static for w in args):
        return Effect("unknown", note="an argument is only known at run time")
    if any(v in ("-exec", "-execdir", "-ok", "-okdir") for v in values):
        return code("runs a command on each file found (-exec)")
    if "-delete" in values:
        starts: list[Word] = []
        for w in args:
            if (w.value or "").startswith(("-", "(", ")", "!")):
                break
            starts.append(w)
        return Effect(
            "writes",
            writes=tuple(starts) or (literal("."),),
            note="deletes what it finds (-delete)",
        )
    for option in ("-fprint", "-fprint0", "-fprintf", "-fls"):
        if option in values:
            target = values.index(option) + 1
            written = (args[target],) if target < len(args) else ()
            return Effect("writes", writes=written, note=f"writes a file ({option})")
    return Effect("reads", key=(name,))


def _sed(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(args, names("-e -f -l --expression --file --line-length"))
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
        return code("runs a sed script from a file")
    verdict = max((_sed_script(s) for s in scripts), default="reads", key=_SED_ORDER.index)
    if verdict == "code":
        return code("a sed script that runs commands (e)")
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
        names(
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
        return code("runs a command (--to-command, -I, …)")
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
        return Effect("writes", writes=(literal(folder),), note="extracts files")
    return Effect("writes", writes=tuple(literal(a) for a in archive), note="writes an archive")


def _unzip(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(args, frozenset({"-d", "-x", "-P"}))
    if opts.has("-l", "-Z", "-t", "-v") and not opts.dynamic:
        return Effect("reads", key=(name, "-l"))
    folder = next((v for v in opts.values("-d") if v), ".")
    return Effect("writes", writes=(literal(folder),), note="extracts files")


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
            names(
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
        names(
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
        names(
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
        "writes", writes=tuple(literal(w) for w in written), note="transfers data over the network"
    )


def _wget(name: str, args: tuple[Word, ...]) -> Effect:
    opts = parse_options(
        args,
        names(
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
    return Effect("writes", writes=tuple(literal(w) for w in written), note="downloads files")


def _kill(name: str, args: tuple[Word, ...]) -> Effect:
    return Effect("writes", note="signals processes")


def _hook_installer(name: str, args: tuple[Word, ...]) -> Effect:
    sub = args[0].value if args and args[0].static else None
    if sub in ("install", "init", "uninstall") or name == "husky":
        return Effect(
            "writes", writes=(literal(".git/hooks"),), note=f"`{name}` installs git hooks"
        )
    return code(f"`{name}` runs the hooks")


def _remote_copy(name: str, args: tuple[Word, ...]) -> Effect:
    """rsync / scp: a copy, unless an option names a program to run for the transport."""
    values = [w.value or "" for w in args]
    if any(not w.static for w in args) or any(
        v.split("=", 1)[0] in ("-e", "--rsh", "-S", "--rsync-path", "-o", "-F")
        or (v.startswith("-e") and not v.startswith("--"))
        for v in values
    ):
        return code(f"`{name}` with an option that runs a program")
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
    "eval": lambda name, args: code("runs the code given to eval"),
    "trap": lambda name, args: (
        code("sets code to run on a signal") if args else Effect("reads", key=("trap",))
    ),
    "node": _interpreter(
        names("-e --eval -p --print"),
        names("-r --require --import --loader"),
    ),
    "deno": _interpreter(frozenset({"eval"})),
    "bun": _interpreter(names("-e --eval -p --print")),
    "perl": _interpreter(frozenset({"-e", "-E"}), frozenset({"-I", "-M", "-m"})),
    "ruby": _interpreter(frozenset({"-e"}), frozenset({"-I", "-r"})),
    "php": _interpreter(frozenset({"-r"})),
    "lua": _interpreter(frozenset({"-e"})),
    "Rscript": _interpreter(frozenset({"-e"})),
    "R": _interpreter(frozenset({"-e", "-f", "--file"})),
    "julia": _interpreter(names("-e --eval -E --print")),
    "npx": lambda name, args: code("runs a package's command"),
    "make": _make,
    "npm": _npm,
    "conda": _conda,
    "jupyter": _jupyter,
    "papermill": _papermill,
    "find": _find,
    "sed": _sed,
    "tar": _tar,
    "unzip": _unzip,
    "git": judge_git,
    "pre-commit": _hook_installer,
    "husky": _hook_installer,
    "rm": _operand_writer("deletes files"),
    "unlink": _operand_writer("deletes files"),
    "rmdir": _operand_writer("deletes folders"),
    "shred": _operand_writer("destroys files", names("-n -s --iterations --size")),
    "touch": _operand_writer("creates or touches files", names("-d -r -t --date --reference")),
    "mkdir": _operand_writer("creates folders", frozenset({"-m", "--mode"})),
    "mkfifo": _operand_writer("creates pipes", frozenset({"-m", "--mode"})),
    "truncate": _operand_writer("changes file sizes", names("-s -r --size --reference")),
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
    "ldd": lambda name, args: code("ldd may run the program it inspects"),
    "watch": lambda name, args: code("runs a command repeatedly"),
    "script": lambda name, args: code("runs a command in a recorded session"),
    "ssh": lambda name, args: code("runs commands on another machine"),
    "docker": lambda name, args: code("controls containers"),
    "podman": lambda name, args: code("controls containers"),
    "tmux": lambda name, args: code("runs commands in a terminal multiplexer"),
    "screen": lambda name, args: code("runs commands in a terminal multiplexer"),
    "gdb": lambda name, args: code("runs a program under a debugger"),
    "strace": lambda name, args: code("runs a program under strace"),
    "ltrace": lambda name, args: code("runs a program under ltrace"),
    "valgrind": lambda name, args: code("runs a program under valgrind"),
    "sqlite3": lambda name, args: code("sqlite3 can run shell commands (.shell)"),
    "flock": lambda name, args: code("runs a command holding a lock"),
    "parallel": lambda name, args: code("runs commands in parallel"),
    "uv": lambda name, args: code("`uv` installs packages and runs code"),
    "poetry": lambda name, args: code("`poetry` installs packages and runs code"),
    "pipx": lambda name, args: code("`pipx` installs packages and runs code"),
    "tox": lambda name, args: code("runs the test environments"),
    "nox": lambda name, args: code("runs the noxfile"),
    "cargo": lambda name, args: code("builds and runs code"),
    "go": lambda name, args: code("builds and runs code"),
}
