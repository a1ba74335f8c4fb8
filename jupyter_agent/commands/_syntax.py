"""A shell command line as a list of simple commands, read with tree-sitter-bash.

:func:`parse_script` walks the whole syntax tree — lists, pipelines, subshells, groups,
``if``/``while``/``for``/``case``, function bodies, command and process substitution at
any depth, here-documents — and returns every simple command in it, every redirection,
every variable the line sets for later commands, and the *problems*: whatever the walk
could not fully understand. A problem never lets a command through: the caller asks.

Words keep their statically known value (quotes removed, escapes applied) or ``None``
when only run time knows it (``$VAR``, ``$(…)``, ``{a,b}``); unquoted glob characters
are flagged, since they expand to file names (which may look like options).

The folder each command runs in is followed through ``cd``/``pushd``/``popd``: each
command carries the set of folders it may run in, relative to where the line starts
(``None`` in the set: a folder only known at run time). A ``cd`` adds to the set rather
than replacing it, because it may fail; a subshell's ``cd`` stays inside it.

The walk is in ``_tree_walk.py``, a word's value in ``_quoting.py``, the results in
``_parsed.py``.
"""

from __future__ import annotations

import functools

import tree_sitter_bash
from tree_sitter import Language, Parser

from ._parsed import Script
from ._tree_walk import MAX_PARTS, Scope, TooMany, Walk

MAX_SOURCE = 100_000
"""Longer command lines are not analysed (they ask)."""

_LANGUAGE = Language(tree_sitter_bash.language())


@functools.lru_cache(maxsize=512)
def parse_script(source: str) -> Script:
    """The simple commands, redirections, assignments and problems of a command line."""
    if len(source) > MAX_SOURCE:
        return Script(
            (), (), (), frozenset(), (f"it is too long to check ({len(source):,} characters)",)
        )
    if "\0" in source:
        return Script((), (), (), frozenset(), ("it contains a NUL character",))
    data = source.encode("utf-8", "surrogatepass")
    tree = Parser(_LANGUAGE).parse(data)
    walk = Walk(data)
    try:
        walk.statements(tree.root_node, Scope(frozenset({"."})), 0)
    except RecursionError:
        walk.problem("it is nested too deeply to check")
    except TooMany:
        walk.problem(f"it has more than {MAX_PARTS} commands and redirections to check")
    if tree.root_node.has_error:
        walk.problem("the shell would not parse it as written (a syntax error)")
    return Script(
        tuple(walk.commands),
        tuple(walk.redirects),
        tuple(walk.assignments),
        frozenset(walk.functions),
        tuple(dict.fromkeys(walk.problems)),
    )
