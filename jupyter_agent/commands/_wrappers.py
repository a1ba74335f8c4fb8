"""Wrappers — ``timeout 60 ls`` runs ``ls`` — and the name of the program a word names."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..os_sandbox.git_overrides import guarded
from ..workspace.system_programs import SYSTEM_FOLDERS
from ._options import Options, literal, names, parse_options
from ._parsed import Assignment, Word

SYSTEM_BIN = frozenset(SYSTEM_FOLDERS)


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


_HARMLESS_WRAPPERS = {
    # name: options that take a value, and whether an operand (a duration…) comes first
    "nohup": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "time": (frozenset({"-f", "--format"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (names("-c -n --class --classdata"), 0),
    "stdbuf": (names("-i -o -e --input --output --error"), 0),
    "timeout": (names("-s -k --signal --kill-after"), 1),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "numactl": (
        names("-C -N -m -p -i --physcpubind --cpunodebind --membind --preferred --interleave"),
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
            removed = [v or "" for v in opts.values("-u", "--unset")]
            problem = (
                "`env -S` splits a string into a command"
                if opts.has("-S", "--split-string")
                else "`env -i` runs a program without the environment that keeps git from "
                "running a planted configuration"
                if opts.has("-i", "--ignore-environment")
                else f"`env -u {removed[0]}` takes away what keeps git from running a planted "
                "configuration"
                if removed and any(guarded(v) for v in removed)
                else ""
            )
            if problem:
                return Unwrapped(
                    words, tuple(found_assignments), tuple(chdir), tuple(wrappers), problem
                )
            found_assignments.extend(new)
            chdir.extend(
                literal(v) if v is not None else Word("?", None)
                for v in opts.values("-C", "--chdir")
            )
            if not inner:
                break  # plain `env`: prints the environment
            words = inner
        elif name == "xargs":
            opts = parse_options(
                args,
                names(
                    "-a -d -E -e -I -i -L -l -n -P -s --arg-file --delimiter --eof --replace "
                    "--max-lines --max-args --max-procs --max-chars --process-slot-var"
                ),
                stop_at_operand=True,
            )
            words = tuple(opts.operands) or (literal("echo"),)
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
    takes = names("-u -C -S --unset --chdir --split-string")
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
            assignments.append(Assignment(name, literal(given), value))
            i += 1
            continue
        break
    return opts, tuple(args[i:]), assignments
