"""The walk over tree-sitter-bash's syntax tree that collects what a command line runs.

:class:`Walk` visits every node: statements, simple commands, redirections and words, and
the commands hidden in words (substitutions, expansions, arithmetic). Invariants:

- A node is either understood or reported in ``problems`` (an unknown kind, a syntax error,
  arithmetic on run-time values, a ``declare`` that changes how words are read); the walk
  then still looks inside it for commands.
- The walk is bounded: nesting deeper than :data:`MAX_DEPTH` is a problem, and more than
  :data:`MAX_PARTS` commands and redirections stop it (:class:`TooMany`).
- The folders a command may run in follow ``cd``/``pushd``/``popd``: a ``cd`` adds to the
  set (it may fail), and a subshell, a pipeline's part, a substitution or a function body
  works on a copy of the scope, so its ``cd`` stays inside.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

from ..os_sandbox.git_overrides import guarded
from ._parsed import Assignment, Redirect, SimpleCommand, Word
from ._quoting import ansi_c, has_glob, unescape_double, unescape_word

MAX_DEPTH = 100
"""Deeper nesting is not analysed (it asks): the walk must never exhaust the stack."""
MAX_PARTS = 300
"""A line with more simple commands and redirections than this is judged on its first ones
and asks: the walk (on the kernel's event loop) stays short whatever the model sends."""


class TooMany(Exception):
    """The line has more parts than :data:`MAX_PARTS`: the walk stops."""


@dataclass
class Scope:
    """Where the following commands may run (relative to the line's start)."""

    cwds: frozenset[str | None]

    def copy(self) -> Scope:
        return Scope(self.cwds)


_REDIRECT_WRITES = {">", ">>", ">|", "&>", "&>>", ">&", "<>"}
_REDIRECT_READS = {"<", "<>", "<&"}
_ARITHMETIC_TEST = re.compile(r"-(eq|ne|lt|le|gt|ge)\Z")
_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_NAVIGATION = frozenset({"cd", "pushd", "popd"})


@dataclass
class Walk:
    data: bytes
    commands: list[SimpleCommand] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    functions: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def problem(self, why: str) -> None:
        self.problems.append(why)

    def count(self) -> None:
        if len(self.commands) + len(self.redirects) > MAX_PARTS:
            raise TooMany

    # --- statements ---------------------------------------------------------------

    def statements(self, node: Node, scope: Scope, depth: int) -> None:
        """Walk a node holding statements (a program, a body, a list)."""
        if depth > MAX_DEPTH:
            self.problem("it is nested too deeply to check")
            return
        for child in node.children:
            self.statement(child, scope, depth + 1)

    def statement(self, node: Node, scope: Scope, depth: int) -> None:
        """One node where a statement may stand, handed to the walker of its kind."""
        kind = node.type
        if depth > MAX_DEPTH:
            self.problem("it is nested too deeply to check")
            return
        if node.is_missing or kind == "ERROR":
            self.problem("the shell would not parse it as written (a syntax error)")
            self.words_inside(node, scope, depth)
            return
        if not node.is_named or kind in ("comment", "heredoc_start", "heredoc_end"):
            return
        walker = _STATEMENT_WALKERS.get(kind)
        if walker is None:
            self.problem(f"it uses shell syntax the checker does not know ({kind})")
            self.words_inside(node, scope, depth)
        else:
            walker(self, node, scope, depth)

    def redirected(self, node: Node, scope: Scope, depth: int) -> None:
        """A statement with redirections hung on it."""
        # tree-sitter-bash hangs `a && b > f` and `a | b > f` on the whole list or
        # pipeline, while the shell opens f for b, after a's `cd`: judging the
        # redirection after the body, in every folder met so far, covers both.
        body = node.child_by_field_name("body")
        if body is not None:
            self.statement(body, scope, depth + 1)
        for child in node.children:
            if child is not body:
                self.redirect(child, scope, depth)

    def block(self, node: Node, scope: Scope, depth: int) -> None:
        """A program, a list, a { … } group, a do … done or else body (or (( … )))."""
        if node.type == "compound_statement" and node.child_count and node.children[0].type == "((":
            self.arithmetic(node, scope, depth)
        else:
            self.statements(node, scope, depth)

    def subshell(self, node: Node, scope: Scope, depth: int) -> None:
        self.statements(node, scope.copy(), depth)  # a `cd` inside stays inside

    def pipeline(self, node: Node, scope: Scope, depth: int) -> None:
        # Each part of a pipeline runs in a subshell of its own.
        for child in node.children:
            self.statement(child, scope.copy(), depth + 1)

    def case_item(self, node: Node, scope: Scope, depth: int) -> None:
        """A case's patterns are words; its body, statements."""
        for child in node.children:
            if child.type in _PATTERN_KINDS or not child.is_named:
                self.words_inside(child, scope, depth)
            else:
                self.statement(child, scope, depth + 1)

    def for_loop(self, node: Node, scope: Scope, depth: int) -> None:
        """for NAME in WORDS: NAME is assigned values only run time knows."""
        variable = node.child_by_field_name("variable")
        if variable is not None:
            name = self.text(variable)
            self.assignments.append(Assignment(name, Word(name, None), self.text(node)))
        for child in node.children:
            if child.type == "do_group":
                self.statement(child, scope, depth + 1)
            elif child is not variable:
                self.words_inside(child, scope, depth)

    def c_style_for_loop(self, node: Node, scope: Scope, depth: int) -> None:
        """for (( … )): its three clauses are arithmetic."""
        for child in node.children:
            if child.type == "do_group" or child.type == "compound_statement":
                self.statement(child, scope, depth + 1)
            elif child.is_named:
                self.arithmetic(child, scope, depth)

    def function(self, node: Node, scope: Scope, depth: int) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is not None:
            self.functions.add(self.text(name_node))
        body = node.child_by_field_name("body")
        if body is not None:
            # The body runs whenever the function is called: judge it here, in a copy.
            self.statement(body, scope.copy(), depth + 1)
        for child in node.children:
            if child.type in _REDIRECT_KINDS:
                self.redirect(child, scope, depth)

    def assignments_of(self, node: Node, scope: Scope, depth: int) -> None:
        """NAME=VALUE alone: variables for later commands."""
        for assignment in self.assignment_nodes(node):
            self.assignments.append(self.assignment(assignment, scope, depth))

    def unset(self, node: Node, scope: Scope, depth: int) -> None:
        for child in node.children[1:]:
            name = self.text(child).strip("'\"")
            if "$" in name or "`" in name or guarded(name):
                self.problem(
                    f"`unset {name}` may take away what keeps git from running a planted "
                    "configuration"
                )
        self.words_inside(node, scope, depth)

    def compound(self, node: Node, scope: Scope, depth: int) -> None:
        """if / while / case: conditions and bodies are statements; case values are words."""
        for child in node.children:
            if child.type in (
                "word",
                "concatenation",
                "string",
                "raw_string",
                "simple_expansion",
                "expansion",
                "command_substitution",
            ):
                self.words_inside(child, scope, depth)
            elif child.is_named:
                self.statement(child, scope, depth + 1)

    def assignment_nodes(self, node: Node) -> list[Node]:
        if node.type == "variable_assignment":
            return [node]
        return [c for c in node.children if c.type == "variable_assignment"]

    def assignment(self, node: Node, scope: Scope, depth: int) -> Assignment:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is not None and name_node.type == "subscript":
            # a[$(cmd)]=1 or a[i]=1: the subscript is evaluated as arithmetic.
            for index in name_node.children[1:]:
                self.arithmetic(index, scope, depth)
            name = self.text(name_node.children[0]) if name_node.children else "?"
        else:
            name = self.text(name_node) if name_node is not None else "?"
        value = Word("", "") if value_node is None else self.word(value_node, scope, depth)
        return Assignment(name, value, self.text(node))

    def declaration(self, node: Node, scope: Scope, depth: int) -> None:
        """export / declare / local / readonly / typeset: variables for later commands."""
        keyword = node.children[0].type if node.children else ""
        options = []
        for child in node.children[1:]:
            if child.type == "variable_assignment":
                self.assignments.append(self.assignment(child, scope, depth))
            elif child.type == "variable_name":
                name = self.text(child)
                self.assignments.append(Assignment(name, Word(name, None), f"{keyword} {name}"))
            elif child.type == "word" and self.text(child).startswith(("-", "+")):
                options.append(self.text(child))
            elif child.is_named:
                word = self.word(child, scope, depth)
                if word.value is None:
                    self.problem(f"`{keyword}` is given a name only known at run time")
        if any(set(o[1:]) & set("ifnA") for o in options):
            # -i makes later assignments arithmetic, -n makes references, -f/-A alter meaning.
            self.problem(f"`{keyword} {' '.join(options)}` changes how later words are read")

    def test(self, node: Node, scope: Scope, depth: int) -> None:
        """[[ … ]]: arithmetic comparisons of variables evaluate their values as code."""
        for sub in _descendants(node, depth):
            if sub.type == "test_operator" and _ARITHMETIC_TEST.match(self.text(sub)):
                parent = sub.parent
                if (
                    parent is not None
                    and _has_variable(parent)
                    and self.text(node).startswith("[[")
                ):
                    self.problem(
                        "it compares shell variables arithmetically inside [[ ]] (bash runs "
                        "code hidden in such a value)"
                    )
        self.words_inside(node, scope, depth)

    def arithmetic(self, node: Node, scope: Scope, depth: int) -> None:
        if _has_variable(node):
            self.problem(
                "it does arithmetic on values known only at run time (bash runs code hidden "
                "in such a value)"
            )
        if node.type in ("command_substitution", "process_substitution"):
            self.nested(node, scope, depth)
        else:
            self.words_inside(node, scope, depth)

    # --- simple commands ------------------------------------------------------------

    def command(self, node: Node, scope: Scope, depth: int) -> None:
        words: list[Word] = []
        assignments: list[Assignment] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                assignments.append(self.assignment(child, scope, depth))
            elif kind == "command_name":
                inner = child.children[0] if child.children else child
                words.append(self.word(inner, scope, depth))
            elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                self.redirect(child, scope, depth)
            elif child.is_named:
                words.append(self.word(child, scope, depth))
        cwds = scope.cwds
        if words and words[0].value in _NAVIGATION and not assignments:
            self.navigate(words, scope)
        self.commands.append(SimpleCommand(tuple(words), tuple(assignments), cwds, self.text(node)))
        self.count()

    def navigate(self, words: list[Word], scope: Scope) -> None:
        """Follow cd / pushd / popd: the folder after it may be the new one or the old one."""
        name = words[0].value
        args = [w for w in words[1:] if not (w.value or "").startswith("-") or w.value == "-"]
        if name == "popd" or (args and (not args[0].static or args[0].value == "-")):
            target: str | None = None
        elif not args:
            target = "~" if name == "cd" else None
        else:
            target = args[0].value
        new = {_join(cwd, target) for cwd in scope.cwds}
        scope.cwds = scope.cwds | frozenset(new)

    def redirect(self, node: Node, scope: Scope, depth: int) -> None:
        kind = node.type
        if kind == "herestring_redirect" or kind == "heredoc_redirect":
            self.words_inside(node, scope, depth)
            return
        if kind != "file_redirect":
            self.words_inside(node, scope, depth)
            return
        operator = next((self.text(c) for c in node.children if not c.is_named), "")
        destination = node.child_by_field_name("destination")
        if destination is None or operator in (">&-", "<&-"):
            return  # closing a descriptor
        if operator in (">&", "<&") and destination.type == "number":
            return  # a copy of another descriptor (2>&1)
        if operator.endswith("&") and self.text(destination) == "-":
            return
        target = self.word(destination, scope, depth)
        writes = operator in _REDIRECT_WRITES
        reads = operator in _REDIRECT_READS
        if not writes and not reads:
            self.problem(f"it uses the redirection {operator!r}, which the checker does not know")
            writes = True
        self.redirects.append(
            Redirect(operator, target, writes, reads, scope.cwds, self.text(node))
        )
        self.count()

    # --- words --------------------------------------------------------------------

    def word(self, node: Node, scope: Scope, depth: int) -> Word:
        """A word's static value, walking any command inside it."""
        text = self.text(node)
        value, glob = self.value(node, scope, depth, quoted=False)
        if value is not None and not glob and _BRACE.search(self.unquoted_text(node)):
            value = None  # {a,b} becomes several words
        return Word(text, value, glob)

    def value(
        self, node: Node, scope: Scope, depth: int, *, quoted: bool
    ) -> tuple[str | None, bool]:
        """A word part's static value (``None``: known only at run time) and whether it is
        a glob, from the reader of its kind; commands inside it are walked."""
        if depth > MAX_DEPTH:
            self.problem("it is nested too deeply to check")
            return None, False
        kind = node.type
        if kind in _RUN_TIME_WALKERS:
            _RUN_TIME_WALKERS[kind](self, node, scope, depth)
            return None, False
        reader = _VALUE_READERS.get(kind)
        if reader is not None:
            return reader(self, node, scope, depth, quoted)
        if kind == "ERROR" or node.is_missing:
            self.problem("the shell would not parse it as written (a syntax error)")
        else:
            self.problem(f"it uses a kind of word the checker does not know ({kind})")
        self.words_inside(node, scope, depth)
        return None, False

    def plain_value(
        self, node: Node, scope: Scope, depth: int, quoted: bool
    ) -> tuple[str | None, bool]:
        """A word or a number: its text unescaped; a glob where it is not quoted."""
        raw = self.text(node)
        return unescape_word(raw), (not quoted and has_glob(raw))

    def quoted_value(
        self, node: Node, scope: Scope, depth: int, quoted: bool
    ) -> tuple[str | None, bool]:
        """'…', $'…', $(…)-free "…": known unless an expansion is inside."""
        kind = node.type
        if kind == "raw_string":
            return self.text(node)[1:-1], False
        if kind == "ansi_c_string":
            return ansi_c(self.text(node)[2:-1]), False
        parts: list[str] = []
        known = True
        for child in node.children:
            if child.type == "string_content":
                parts.append(unescape_double(self.text(child)))
            elif child.is_named:
                known = False
                self.inside(child, scope, depth + 1)
        return ("".join(parts) if known else None), False

    def concatenation_value(
        self, node: Node, scope: Scope, depth: int, quoted: bool
    ) -> tuple[str | None, bool]:
        """Parts side by side: known when each is; a glob when any is."""
        parts = []
        known, glob = True, False
        for child in node.children:
            v, g = self.value(child, scope, depth + 1, quoted=quoted)
            glob = glob or g
            if v is None:
                known = False
            else:
                parts.append(v)
        return ("".join(parts) if known else None), glob

    def extglob_value(
        self, node: Node, scope: Scope, depth: int, quoted: bool
    ) -> tuple[str | None, bool]:
        return self.text(node), True

    def expansion(self, node: Node, scope: Scope, depth: int) -> None:
        text = self.text(node)
        if "@" in text and re.search(r"@[PEAKaUuLQk]\}\Z", text):
            self.problem(f"`{text}` transforms a value in a way that can run code")
        for child in node.children:
            if child.type == "subscript":
                self.arithmetic(child, scope, depth)
        self.words_inside(node, scope, depth)

    def nested(self, node: Node, scope: Scope, depth: int) -> None:
        """$(…), `…`, <(…), >(…): a script of its own, in a subshell."""
        inner = scope.copy()
        for child in node.children:
            if child.is_named:
                self.statement(child, inner, depth + 1)

    def words_inside(self, node: Node, scope: Scope, depth: int) -> None:
        """Find the commands hidden anywhere inside ``node`` (substitutions, expansions)."""
        for child in node.children:
            self.inside(child, scope, depth + 1)

    def inside(self, node: Node, scope: Scope, depth: int) -> None:
        """A node within a word: run what it runs, report what cannot be understood."""
        if depth > MAX_DEPTH:
            self.problem("it is nested too deeply to check")
            return
        kind = node.type
        if kind in ("command_substitution", "process_substitution"):
            self.nested(node, scope, depth)
        elif kind == "arithmetic_expansion":
            self.arithmetic(node, scope, depth)
        elif kind == "expansion":
            self.expansion(node, scope, depth)
        else:
            if kind == "ERROR" or node.is_missing:
                self.problem("the shell would not parse it as written (a syntax error)")
            self.words_inside(node, scope, depth)

    def unquoted_text(self, node: Node) -> str:
        """The parts of a word outside quotes (where braces expand)."""
        if node.type in ("word",):
            return self.text(node)
        if node.type == "concatenation":
            return "".join(self.unquoted_text(c) for c in node.children)
        return "\0"


# --- what walks each kind of node -------------------------------------------------------

_REDIRECT_KINDS = ("file_redirect", "heredoc_redirect", "herestring_redirect")
_PATTERN_KINDS = ("word", "concatenation", "string", "raw_string", "extglob_pattern")

_STATEMENT_WALKERS: dict[str, Callable[[Walk, Node, Scope, int], None]] = {
    "command": Walk.command,
    "redirected_statement": Walk.redirected,
    **dict.fromkeys(
        ("program", "list", "compound_statement", "do_group", "else_clause"), Walk.block
    ),
    "subshell": Walk.subshell,
    "pipeline": Walk.pipeline,
    "negated_command": Walk.statements,
    **dict.fromkeys(
        ("if_statement", "elif_clause", "while_statement", "case_statement"), Walk.compound
    ),
    "case_item": Walk.case_item,
    "for_statement": Walk.for_loop,
    "c_style_for_statement": Walk.c_style_for_loop,
    "function_definition": Walk.function,
    "variable_assignment": Walk.assignments_of,
    "variable_assignments": Walk.assignments_of,
    "declaration_command": Walk.declaration,
    "unset_command": Walk.unset,
    "test_command": Walk.test,
    **dict.fromkeys(_REDIRECT_KINDS, Walk.redirect),
    "heredoc_body": Walk.words_inside,
}
"""The walker of each kind of statement; a kind not here is reported, then searched."""

_RUN_TIME_WALKERS: dict[str, Callable[[Walk, Node, Scope, int], None]] = {
    "command_substitution": Walk.nested,
    "process_substitution": Walk.nested,
    "arithmetic_expansion": Walk.arithmetic,
    "expansion": Walk.expansion,
    "simple_expansion": Walk.words_inside,
    "array": Walk.words_inside,
    "brace_expression": Walk.words_inside,
}
"""Word parts whose value only run time knows: the walk looks inside them for commands."""

_VALUE_READERS: dict[str, Callable[[Walk, Node, Scope, int, bool], tuple[str | None, bool]]] = {
    "word": Walk.plain_value,
    "number": Walk.plain_value,
    "raw_string": Walk.quoted_value,
    "ansi_c_string": Walk.quoted_value,
    "string": Walk.quoted_value,
    "translated_string": Walk.quoted_value,
    "concatenation": Walk.concatenation_value,
    "extglob_pattern": Walk.extglob_value,
}
"""The reader of each kind of word part whose value may be known before it runs."""


# --- helpers ---------------------------------------------------------------------------


def _descendants(node: Node, depth: int) -> list[Node]:
    out: list[Node] = []
    stack = [(node, depth)]
    while stack:
        current, d = stack.pop()
        if d > MAX_DEPTH:
            continue
        out.append(current)
        stack.extend((c, d + 1) for c in current.children)
    return out


def _has_variable(node: Node) -> bool:
    """Whether an arithmetic context uses a value only run time knows (``x``, ``$x``,
    ``a[i]``, ``$(…)``): bash evaluates such a value as arithmetic in turn, subscripts and
    their command substitutions included."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in (
            "variable_name",
            "simple_expansion",
            "expansion",
            "subscript",
            "command_substitution",
            "process_substitution",
        ):
            return True
        if current.type == "word" and re.fullmatch(rb"[A-Za-z_][A-Za-z0-9_]*", current.text or b""):
            return True  # a bare name inside (( )) is a variable
        stack.extend(current.children)
    return False


def _join(cwd: str | None, target: str | None) -> str | None:
    if cwd is None or target is None:
        return None
    if target.startswith("~"):
        return target
    return os.path.normpath(os.path.join(cwd, target))
