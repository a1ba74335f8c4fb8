"""What a shell command line does: its programs, the files it writes, the code it runs.

:func:`analyze` is a pure function of the line's text (cached): it parses the line with
tree-sitter-bash (every simple command, at any depth), removes wrappers, and asks the
program table what each one does. The permission rules judge its
:attr:`~CommandLine.invocations` one by one and its redirections as file writes; the
shell tool checks the paths in :meth:`~CommandLine.writes` and :meth:`~CommandLine.runs`
against the workspace. Whatever could not be understood is in
:attr:`~CommandLine.problems`, and a line with problems always asks.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

from ._effects import NO_FILE_EFFECTS, Effect, Kind, RunTarget
from ._parsed import Assignment, Redirect, Word
from ._programs import effect_of, touches_no_files
from ._syntax import parse_script
from ._wrappers import program_name, unwrap

HARMLESS_VARIABLES = frozenset(
    {
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "COLUMNS",
        "LINES",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "CUDA_VISIBLE_DEVICES",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "NUMEXPR_NUM_THREADS",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "CI",
        "DEBUG",
        "TQDM_DISABLE",
        "MPLBACKEND",
        "HF_HUB_OFFLINE",
        "TRANSFORMERS_OFFLINE",
    }
)
"""Environment variables a command may set for itself without asking: none of them
changes which program runs or what code it loads (PATH, LD_PRELOAD, PYTHONPATH… do)."""

_LOCALE = re.compile(r"LC_[A-Z]+\Z")


@dataclass(frozen=True)
class Invocation:
    """One program a line runs, with its wrappers removed."""

    words: tuple[Word, ...]
    """The program and its arguments."""
    program: str | None
    assignments: tuple[Assignment, ...]
    """Its own environment (``NAME=value cmd``, ``env NAME=value cmd``)."""
    wrappers: tuple[str, ...]
    effect: Effect
    cwds: frozenset[str | None]
    """Folders it may run in, relative to the line's start (``None``: only known at run time)."""
    text: str
    """The simple command as written, wrappers included."""

    @property
    def argv(self) -> tuple[str, ...] | None:
        """Its words' values, when all are known before running."""
        if not all(w.static for w in self.words):
            return None
        return tuple(w.value or "" for w in self.words)

    @property
    def kind(self) -> Kind:
        return self.effect.kind


@dataclass(frozen=True)
class PathUse:
    """A path a line writes (or runs), and the folders it may be relative to."""

    target: Word
    cwds: frozenset[str | None]
    source: str
    """The piece of the line that uses it, for messages."""
    what: str = ""
    folder: bool = False


@dataclass(frozen=True)
class CommandLine:
    text: str
    invocations: tuple[Invocation, ...]
    """The programs it runs (builtins that only affect the shell are left out)."""
    redirects: tuple[Redirect, ...]
    problems: tuple[str, ...]

    def writes(self) -> list[PathUse]:
        """Every path the line writes that its words name: redirections and known operands."""
        uses = [PathUse(r.target, r.cwds, r.text) for r in self.redirects if r.writes]
        for inv in self.invocations:
            cwds = inv.cwds
            uses.extend(PathUse(w, cwds, inv.text) for w in inv.effect.writes)
        return uses

    def reads(self) -> list[PathUse]:
        return [PathUse(r.target, r.cwds, r.text) for r in self.redirects if r.reads]

    def runs(self) -> list[PathUse]:
        """Files of the workspace whose code the line runs (scripts, Makefiles, tests)."""
        return [
            PathUse(run.target, inv.cwds, inv.text, run.what, run.folder)
            for inv in self.invocations
            for run in inv.effect.runs
        ]


@functools.lru_cache(maxsize=512)
def analyze(command: str) -> CommandLine:
    """What ``command`` does, as far as its text tells (pure, cached)."""
    script = parse_script(command)
    problems = list(script.problems)
    invocations: list[Invocation] = []
    for assignment in script.assignments:
        reason = _assignment_problem(assignment, exported=not _shell_local(assignment.name))
        if reason:
            problems.append(reason)
    for simple in script.commands:
        unwrapped = unwrap(simple.words, simple.assignments)
        effect = effect_of(unwrapped)
        if effect.problem:
            problems.append(f"`{_short(simple.text)}`: {effect.problem}")
        for assignment in unwrapped.assignments:
            reason = _assignment_problem(assignment, exported=True)
            if reason:
                problems.append(reason)
        program = program_name(unwrapped.words[0]) if unwrapped.words else None
        if effect.kind == "inert" or (program in script.functions and not unwrapped.wrappers):
            continue  # a builtin with no outside effect, or a function judged by its body
        cwds = simple.cwds
        if unwrapped.chdir:
            cwds = frozenset(
                _join(cwd, w.value if w.static else None) for cwd in cwds for w in unwrapped.chdir
            )
        invocations.append(
            Invocation(
                unwrapped.words,
                program,
                unwrapped.assignments,
                unwrapped.wrappers,
                effect,
                cwds,
                simple.text,
            )
        )
    return CommandLine(
        command, tuple(invocations), script.redirects, tuple(dict.fromkeys(problems))
    )


def harmless_variable(name: str) -> bool:
    return name in HARMLESS_VARIABLES or bool(_LOCALE.match(name))


def _shell_local(name: str) -> bool:
    """A lower-case name set on its own line is a shell variable, not the environment's."""
    return any(c.islower() for c in name)


def _assignment_problem(assignment: Assignment, *, exported: bool) -> str:
    if not exported or harmless_variable(assignment.name):
        return ""
    return f"it sets {assignment.name} for the programs it runs, which can change what they run"


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _join(cwd: str | None, target: str | None) -> str | None:
    if cwd is None or target is None:
        return None
    return target if target.startswith(("/", "~")) else os.path.normpath(os.path.join(cwd, target))


__all__ = [
    "NO_FILE_EFFECTS",
    "CommandLine",
    "Invocation",
    "PathUse",
    "RunTarget",
    "Word",
    "analyze",
    "harmless_variable",
    "program_name",
    "touches_no_files",
]
