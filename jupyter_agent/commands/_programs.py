"""What programs do with their arguments: the knowledge behind "Always allow".

:func:`effect_of` says what a program invocation does, once its wrappers are removed
(:func:`~._wrappers.unwrap`: ``timeout 60 ls`` is ``ls``):

- ``inert``: no program at all (``exec 3>log``: only its redirection does something);
- ``reads``: only reads, whatever else its arguments say — a read-only rule may cover it;
  its ``key`` (``git log``, ``ls``) is what such a rule names. Builtins whose effects stay
  inside the shell (``cd``, ``echo``, ``sleep``) are read-only too, and say so as "no file
  effects" (they read nothing);
- ``writes``: changes files (the ones it names are in ``writes``, to be judged by the
  workspace's path rules);
- ``runs_code``: runs code given to it or found in a file (``python -c``, ``make``,
  ``find -exec``, ``sh script.sh``); files of the workspace it runs are in ``runs``;
- ``unknown``: a program this table does not know.

Wrappers are removed first (``_wrappers.py``). This module holds the table; the judges live
by family: programs that run code (``_runners.py``), programs that write the files they name
(``_writers.py``), sed (``_sed.py``) and git (``_git.py``).

Only ``reads`` can be remembered by program (and subcommand); everything else is
remembered by its exact words. A word only known at run time (``$x``, a glob) could be
any option, so it makes a program with dangerous options no longer read-only.
"""

from __future__ import annotations

import os
import re

from ._effects import NO_FILE_EFFECTS, Effect, Judge, Kind, RunTarget, code
from ._git import judge_git
from ._options import literal, names, parse_options
from ._parsed import Word
from ._runners import (
    interpreter,
    judge_awk,
    judge_conda,
    judge_hook_installer,
    judge_jupyter,
    judge_make,
    judge_npm,
    judge_papermill,
    judge_pip,
    judge_pytest,
    judge_python,
    judge_shell,
    judge_source,
)
from ._sed import judge_sed
from ._wrappers import Unwrapped, program_name
from ._writers import (
    copier,
    judge_7z,
    judge_cpio,
    judge_curl,
    judge_dd,
    judge_find,
    judge_patch,
    judge_remote_copy,
    judge_tar,
    judge_tee,
    judge_two_operand_writer,
    judge_unzip,
    judge_wget,
    operand_writer,
)

SHELL_ONLY = names(
    "cd pushd popd dirs true false : exit return echo printf pwd test [ sleep wait "
    "shift set break continue shopt umask ulimit read getopts unalias jobs times"
)
"""Builtins whose only effects stay inside the shell (their redirections are judged apart)."""


def touches_no_files(key: tuple[str, ...]) -> bool:
    """Whether a read-only rule's ``key`` names a builtin with :data:`NO_FILE_EFFECTS`."""
    return len(key) == 1 and key[0] in SHELL_ONLY


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
            runs=(RunTarget(words[0], "the program"), *inner.runs),
            note="runs a program file",
        )
    if name in SHELL_ONLY:
        return Effect("reads", key=(name,), note=NO_FILE_EFFECTS)
    if name in ALWAYS_READS:
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


def _kill(name: str, args: tuple[Word, ...]) -> Effect:
    return Effect("writes", note="signals processes")


_JUDGES: dict[str, Judge] = {
    "env": lambda name, args: Effect("reads", key=("env",)),
    "python": judge_python,
    "pip": judge_pip,
    "pytest": judge_pytest,
    "shell": judge_shell,
    "awk": judge_awk,
    "source": judge_source,
    ".": judge_source,
    "eval": lambda name, args: code("runs the code given to eval"),
    "trap": lambda name, args: (
        code("sets code to run on a signal") if args else Effect("reads", key=("trap",))
    ),
    "node": interpreter(
        names("-e --eval -p --print"),
        names("-r --require --import --loader"),
    ),
    "deno": interpreter(frozenset({"eval"})),
    "bun": interpreter(names("-e --eval -p --print")),
    "perl": interpreter(frozenset({"-e", "-E"}), frozenset({"-I", "-M", "-m"})),
    "ruby": interpreter(frozenset({"-e"}), frozenset({"-I", "-r"})),
    "php": interpreter(frozenset({"-r"})),
    "lua": interpreter(frozenset({"-e"})),
    "Rscript": interpreter(frozenset({"-e"})),
    "R": interpreter(frozenset({"-e", "-f", "--file"})),
    "julia": interpreter(names("-e --eval -E --print")),
    "npx": lambda name, args: code("runs a package's command"),
    "make": judge_make,
    "npm": judge_npm,
    "conda": judge_conda,
    "jupyter": judge_jupyter,
    "papermill": judge_papermill,
    "find": judge_find,
    "sed": judge_sed,
    "tar": judge_tar,
    "bsdtar": judge_tar,
    "gtar": judge_tar,
    "unzip": judge_unzip,
    "7z": judge_7z,
    "7za": judge_7z,
    "7zr": judge_7z,
    "cpio": judge_cpio,
    "git": judge_git,
    "pre-commit": judge_hook_installer,
    "husky": judge_hook_installer,
    "rm": operand_writer("deletes files"),
    "unlink": operand_writer("deletes files"),
    "rmdir": operand_writer("deletes folders"),
    "shred": operand_writer("destroys files", names("-n -s --iterations --size")),
    "touch": operand_writer("creates or touches files", names("-d -r -t --date --reference")),
    "mkdir": operand_writer("creates folders", frozenset({"-m", "--mode"})),
    "mkfifo": operand_writer("creates pipes", frozenset({"-m", "--mode"})),
    "truncate": operand_writer("changes file sizes", names("-s -r --size --reference")),
    "chmod": operand_writer("changes permissions", frozenset(), skip=1),
    "chown": operand_writer("changes owners", frozenset(), skip=1),
    "chgrp": operand_writer("changes groups", frozenset(), skip=1),
    "cp": copier(moves=False),
    "ln": copier(moves=False),
    "install": copier(moves=False),
    "rsync": judge_remote_copy,
    "scp": judge_remote_copy,
    "mv": copier(moves=True),
    "tee": judge_tee,
    "dd": judge_dd,
    "uniq": judge_two_operand_writer,
    "xxd": judge_two_operand_writer,
    "curl": judge_curl,
    "wget": judge_wget,
    "kill": _kill,
    "pkill": _kill,
    "killall": _kill,
    "patch": judge_patch,
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
