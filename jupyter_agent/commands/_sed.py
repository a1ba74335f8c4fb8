"""sed: whether a sed invocation only reads, writes files or runs commands.

Invariant: the script is read command by command; a command this reader does not know, or
one it cannot follow, counts as running code (``e``), never as reading.
"""

from __future__ import annotations

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
