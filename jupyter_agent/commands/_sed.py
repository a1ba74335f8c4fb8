"""sed: whether a sed invocation only reads, writes files or runs commands.

Invariant: the script is read command by command; a command this reader does not know, or
one it cannot follow, counts as running code (``e``), never as reading.
"""

from __future__ import annotations

from collections.abc import Callable

from ._effects import Effect, code
from ._options import names, parse_options
from ._parsed import Word


def judge_sed(name: str, args: tuple[Word, ...]) -> Effect:
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
    i, worst = 0, "reads"
    while i < len(script):
        c = script[i]
        step = _SED_STEPS.get(c) or (_one_char if c.isdigit() else None)
        if step is None:
            return "code"  # e, or a command this reader does not know
        i, verdict = step(script, i)
        if verdict == "code":
            return "code"
        if verdict == "writes":
            worst = "writes"
    return worst


SedStep = Callable[[str, int], tuple[int, str]]
"""Read the sed command at ``i``: where the next one starts, and what this one does."""


def _skip_regex(script: str, j: int, delim: str) -> int:
    """Past the regex (or replacement) that starts at ``j`` and ends at ``delim``."""
    while j < len(script) and script[j] != delim:
        j += 2 if script[j] == "\\" else 1
    return j + 1


def _to_end(script: str, i: int, stops: str) -> int:
    """The index of the first of ``stops`` from ``i`` on (or the script's end)."""
    while i < len(script) and script[i] not in stops:
        i += 1
    return i


def _one_char(script: str, i: int) -> tuple[int, str]:
    """A separator, a line number, or a command of one letter that only reads."""
    return i + 1, "reads"


def _address(script: str, i: int) -> tuple[int, str]:
    """/regex/ or \\cregexc, with its I/M flags."""
    n = len(script)
    if script[i] == "/":
        i = _skip_regex(script, i + 1, "/")
    else:
        i = _skip_regex(script, i + 2, script[i + 1] if i + 1 < n else "")
    while i < n and script[i] in "IM":
        i += 1
    return i, "reads"


def _substitute(script: str, i: int) -> tuple[int, str]:
    """s/regex/replacement/flags: the e flag runs code, w writes a file."""
    if i + 1 >= len(script):
        return i, "code"
    delim = script[i + 1]
    if delim in "\\\n":
        return i, "code"
    j = _skip_regex(script, _skip_regex(script, i + 2, delim), delim)
    k = _to_end(script, j, ";\n}")
    flags = script[j:k]
    if "e" in flags:
        return k, "code"
    return k, "writes" if "w" in flags or "W" in flags else "reads"


def _transliterate(script: str, i: int) -> tuple[int, str]:
    """y/source/dest/."""
    if i + 1 >= len(script):
        return i, "code"
    delim = script[i + 1]
    return _skip_regex(script, _skip_regex(script, i + 2, delim), delim), "reads"


def _rest_of_line(script: str, i: int) -> tuple[int, str]:
    """a, i, c (text), r, R (a file to read): the rest of the line is theirs."""
    return _to_end(script, i, "\n"), "reads"


def _label(script: str, i: int) -> tuple[int, str]:
    """b, t, T, : and their label."""
    return _to_end(script, i, ";\n"), "reads"


def _write(script: str, i: int) -> tuple[int, str]:
    """w, W: write to the file named by the rest of the line."""
    return _to_end(script, i, "\n"), "writes"


_SED_STEPS: dict[str, SedStep] = {
    **dict.fromkeys(" \t\n;{}!$,~+pdDnNgGhHxlPqQ=zF", _one_char),
    "/": _address,
    "\\": _address,
    "s": _substitute,
    "y": _transliterate,
    **dict.fromkeys("aicrR", _rest_of_line),
    **dict.fromkeys("bt:T", _label),
    **dict.fromkeys("wW", _write),
}
