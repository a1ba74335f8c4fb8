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
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

MAX_SOURCE = 100_000
"""Longer command lines are not analysed (they ask)."""
MAX_DEPTH = 100
"""Deeper nesting is not analysed (it asks): the walk must never exhaust the stack."""
MAX_PARTS = 300
"""A line with more simple commands and redirections than this is judged on its first ones
and asks: the walk (on the kernel's event loop) stays short whatever the model sends."""

_LANGUAGE = Language(tree_sitter_bash.language())

# --- results --------------------------------------------------------------------------


@dataclass(frozen=True)
class Word:
    """One shell word."""

    text: str
    """As written."""
    value: str | None
    """After quote removal, when known before running; ``None`` when only run time knows."""
    glob: bool = False
    """Holds unquoted ``*``, ``?`` or ``[``: the shell replaces it with matching file names."""

    @property
    def static(self) -> bool:
        """Known exactly before running."""
        return self.value is not None and not self.glob


@dataclass(frozen=True)
class Assignment:
    """``NAME=value``, for one command or for the rest of the line."""

    name: str
    value: Word
    text: str


@dataclass(frozen=True)
class Redirect:
    """A redirection to or from a file (not ``2>&1``-style descriptor copies)."""

    operator: str
    target: Word
    writes: bool
    reads: bool
    cwds: frozenset[str | None]
    text: str


@dataclass(frozen=True)
class SimpleCommand:
    words: tuple[Word, ...]
    """The command name and its arguments."""
    assignments: tuple[Assignment, ...]
    """``NAME=value`` words before the name: the command's own environment."""
    cwds: frozenset[str | None]
    text: str


@dataclass(frozen=True)
class Script:
    commands: tuple[SimpleCommand, ...]
    redirects: tuple[Redirect, ...]
    assignments: tuple[Assignment, ...]
    """Variables set for the rest of the line (``x=1``, ``export``, ``declare``, ``for x``)."""
    functions: frozenset[str]
    """Names of the functions the line defines (their bodies are among ``commands``)."""
    problems: tuple[str, ...]
    """What could not be understood; each one makes the line ask."""


# --- parsing --------------------------------------------------------------------------


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
    walk = _Walk(data)
    try:
        walk.statements(tree.root_node, _Scope(frozenset({"."})), 0)
    except RecursionError:
        walk.problem("it is nested too deeply to check")
    except _TooMany:
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


class _TooMany(Exception):
    """The line has more parts than :data:`MAX_PARTS`: the walk stops."""


@dataclass
class _Scope:
    """Where the following commands may run (relative to the line's start)."""

    cwds: frozenset[str | None]

    def copy(self) -> _Scope:
        return _Scope(self.cwds)


_REDIRECT_WRITES = {">", ">>", ">|", "&>", "&>>", ">&", "<>"}
_REDIRECT_READS = {"<", "<>", "<&"}
_ARITHMETIC_TEST = re.compile(r"-(eq|ne|lt|le|gt|ge)\Z")
_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_GLOB = re.compile(r"[*?\[]")
_NAVIGATION = frozenset({"cd", "pushd", "popd"})


@dataclass
class _Walk:
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
            raise _TooMany

    # --- statements ---------------------------------------------------------------

    def statements(self, node: Node, scope: _Scope, depth: int) -> None:
        """Walk a node holding statements (a program, a body, a list)."""
        if depth > MAX_DEPTH:
            self.problem("it is nested too deeply to check")
            return
        for child in node.children:
            self.statement(child, scope, depth + 1)

    def statement(self, node: Node, scope: _Scope, depth: int) -> None:
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
        if kind == "command":
            self.command(node, scope, depth)
        elif kind == "redirected_statement":
            # tree-sitter-bash hangs `a && b > f` and `a | b > f` on the whole list or
            # pipeline, while the shell opens f for b, after a's `cd`: judging the
            # redirection after the body, in every folder met so far, covers both.
            body = node.child_by_field_name("body")
            if body is not None:
                self.statement(body, scope, depth + 1)
            for child in node.children:
                if child is not body:
                    self.redirect(child, scope, depth)
        elif kind in ("program", "list", "compound_statement", "do_group", "else_clause"):
            if kind == "compound_statement" and node.child_count and node.children[0].type == "((":
                self.arithmetic(node, scope, depth)
            else:
                self.statements(node, scope, depth)
        elif kind == "subshell":
            self.statements(node, scope.copy(), depth)  # a `cd` inside stays inside
        elif kind == "pipeline":
            # Each part of a pipeline runs in a subshell of its own.
            for child in node.children:
                self.statement(child, scope.copy(), depth + 1)
        elif kind == "negated_command":
            self.statements(node, scope, depth)
        elif kind in ("if_statement", "elif_clause", "while_statement", "case_statement"):
            self.compound(node, scope, depth)
        elif kind == "case_item":
            for child in node.children:
                if (
                    child.type
                    in ("word", "concatenation", "string", "raw_string", "extglob_pattern")
                    or not child.is_named
                ):
                    self.words_inside(child, scope, depth)
                else:
                    self.statement(child, scope, depth + 1)
        elif kind == "for_statement":
            variable = node.child_by_field_name("variable")
            if variable is not None:
                name = self.text(variable)
                self.assignments.append(Assignment(name, Word(name, None), self.text(node)))
            for child in node.children:
                if child.type == "do_group":
                    self.statement(child, scope, depth + 1)
                elif child is not variable:
                    self.words_inside(child, scope, depth)
        elif kind == "c_style_for_statement":
            for child in node.children:
                if child.type == "do_group" or child.type == "compound_statement":
                    self.statement(child, scope, depth + 1)
                elif child.is_named:
                    self.arithmetic(child, scope, depth)
        elif kind == "function_definition":
            name = node.child_by_field_name("name")
            if name is not None:
                self.functions.add(self.text(name))
            body = node.child_by_field_name("body")
            if body is not None:
                # The body runs whenever the function is called: judge it here, in a copy.
                self.statement(body, scope.copy(), depth + 1)
            for child in node.children:
                if child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                    self.redirect(child, scope, depth)
        elif kind in ("variable_assignment", "variable_assignments"):
            for assignment in self.assignment_nodes(node):
                self.assignments.append(self.assignment(assignment, scope, depth))
        elif kind == "declaration_command":
            self.declaration(node, scope, depth)
        elif kind == "unset_command":
            self.words_inside(node, scope, depth)
        elif kind == "test_command":
            self.test(node, scope, depth)
        elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            self.redirect(node, scope, depth)
        elif kind == "heredoc_body":
            self.words_inside(node, scope, depth)
        else:
            self.problem(f"it uses shell syntax the checker does not know ({kind})")
            self.words_inside(node, scope, depth)

    def compound(self, node: Node, scope: _Scope, depth: int) -> None:
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

    def assignment(self, node: Node, scope: _Scope, depth: int) -> Assignment:
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

    def declaration(self, node: Node, scope: _Scope, depth: int) -> None:
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

    def test(self, node: Node, scope: _Scope, depth: int) -> None:
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

    def arithmetic(self, node: Node, scope: _Scope, depth: int) -> None:
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

    def command(self, node: Node, scope: _Scope, depth: int) -> None:
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

    def navigate(self, words: list[Word], scope: _Scope) -> None:
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

    def redirect(self, node: Node, scope: _Scope, depth: int) -> None:
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

    def word(self, node: Node, scope: _Scope, depth: int) -> Word:
        """A word's static value, walking any command inside it."""
        text = self.text(node)
        value, glob = self.value(node, scope, depth, quoted=False)
        if value is not None and not glob and _BRACE.search(self.unquoted_text(node)):
            value = None  # {a,b} becomes several words
        return Word(text, value, glob)

    def value(
        self, node: Node, scope: _Scope, depth: int, *, quoted: bool
    ) -> tuple[str | None, bool]:
        if depth > MAX_DEPTH:
            self.problem("it is nested too deeply to check")
            return None, False
        kind = node.type
        if kind == "word" or kind == "number":
            raw = self.text(node)
            return _unescape_word(raw), (not quoted and _has_glob(raw))
        if kind == "raw_string":
            return self.text(node)[1:-1], False
        if kind == "ansi_c_string":
            return _ansi_c(self.text(node)[2:-1]), False
        if kind in ("string", "translated_string"):
            parts: list[str] = []
            known = True
            for child in node.children:
                if child.type == "string_content":
                    parts.append(_unescape_double(self.text(child)))
                elif child.is_named:
                    known = False
                    self.inside(child, scope, depth + 1)
            return ("".join(parts) if known else None), False
        if kind == "concatenation":
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
        if kind in ("command_substitution", "process_substitution"):
            self.nested(node, scope, depth)
            return None, False
        if kind == "arithmetic_expansion":
            self.arithmetic(node, scope, depth)
            return None, False
        if kind == "expansion":
            self.expansion(node, scope, depth)
            return None, False
        if kind in ("simple_expansion", "array", "brace_expression"):
            self.words_inside(node, scope, depth)
            return None, False
        if kind == "extglob_pattern":
            return self.text(node), True
        if kind == "ERROR" or node.is_missing:
            self.problem("the shell would not parse it as written (a syntax error)")
        else:
            self.problem(f"it uses a kind of word the checker does not know ({kind})")
        self.words_inside(node, scope, depth)
        return None, False

    def expansion(self, node: Node, scope: _Scope, depth: int) -> None:
        text = self.text(node)
        if "@" in text and re.search(r"@[PEAKaUuLQk]\}\Z", text):
            self.problem(f"`{text}` transforms a value in a way that can run code")
        for child in node.children:
            if child.type == "subscript":
                self.arithmetic(child, scope, depth)
        self.words_inside(node, scope, depth)

    def nested(self, node: Node, scope: _Scope, depth: int) -> None:
        """$(…), `…`, <(…), >(…): a script of its own, in a subshell."""
        inner = scope.copy()
        for child in node.children:
            if child.is_named:
                self.statement(child, inner, depth + 1)

    def words_inside(self, node: Node, scope: _Scope, depth: int) -> None:
        """Find the commands hidden anywhere inside ``node`` (substitutions, expansions)."""
        for child in node.children:
            self.inside(child, scope, depth + 1)

    def inside(self, node: Node, scope: _Scope, depth: int) -> None:
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


def _has_glob(raw: str) -> bool:
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            i += 2
            continue
        if _GLOB.match(c):
            return True
        i += 1
    return False


def _unescape_word(raw: str) -> str:
    """An unquoted word's value: a backslash quotes the next character; \\<newline> vanishes."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw):
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _unescape_double(raw: str) -> str:
    """Inside double quotes a backslash quotes only $ ` " \\ and newline."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw) and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _ansi_c(body: str) -> str | None:
    """The value of $'…' (bash's escapes); ``None`` for an escape the checker does not know."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        if e in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[e])
            i += 2
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert m is not None
            out.append(chr(int(m.group(), 8) & 0xFF))
            i += 1 + len(m.group())
        elif e in "xuU":
            size = {"x": 2, "u": 4, "U": 8}[e]
            m = re.match(rf"[0-9A-Fa-f]{{1,{size}}}", body[i + 2 :])
            if m is None:
                return None
            try:
                out.append(chr(int(m.group(), 16)))
            except ValueError:
                return None
            i += 2 + len(m.group())
        else:
            return None  # \cX and the like
    return "".join(out)


def _join(cwd: str | None, target: str | None) -> str | None:
    if cwd is None or target is None:
        return None
    if target.startswith("~"):
        return target
    return os.path.normpath(os.path.join(cwd, target))
