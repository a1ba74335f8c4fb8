"""Secret masking: what looks like a credential never reaches the model.

Two signals: a *name* that says secret (``api_key``, ``DB_PASSWORD``, ``authToken``…)
and a *value* that looks like one (provider key formats, bearer tokens, private key
blocks, passwords in URLs, literal values assigned to a secret-named key). Masked
values keep a short prefix so the user can tell which key was meant.

Names are read word by word (``snake_case``, ``kebab-case``, ``camelCase``), so
``passengers``, ``max_tokens``, ``author`` or ``token_ids`` are not mistaken for
secrets, while ``db_pass``, ``apiKey`` and ``GITHUB_TOKEN`` are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from .redacted import Edit, Pass, fold

MASK = "•••"

# --- names ------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

# Words that say "secret" on their own.
_SECRET_WORDS = frozenset(
    {
        "password",
        "passwords",
        "passwd",
        "passphrase",
        "pass",
        "secret",
        "secrets",
        "credential",
        "credentials",
        "creds",
        "auth",
        "authorization",
        "bearer",
        "cookie",
        "cookies",
        "jwt",
        "apikey",
        "apikeys",
        "authtoken",
        "accesstoken",
        "privatekey",
        "secretkey",
    }
)
# Unambiguous words that are secret even inside a longer word (``mypassword``).
_SECRET_PARTS = ("password", "passwd", "passphrase", "credential", "apikey", "secretkey")
# "key" is a secret only after one of these (api_key, AWS_ACCESS_KEY_ID, signingKey).
_KEY_QUALIFIERS = frozenset(
    {"api", "access", "private", "secret", "session", "signing", "encryption", "master"}
    | {"client", "license", "app", "auth", "account", "service", "subscription", "ssh"}
)
# "pass" is a secret unless a word beside it says it is about passing (tests, people).
_PASS_COUNTING = frozenset(
    {"rate", "rates", "count", "counts", "fail", "fails", "failed", "through", "num", "n"}
    | {"total", "ratio", "percent", "pct", "mark", "grade", "score", "by"}
)
# "token" is a secret unless a word beside it says it counts or indexes (NLP tokens).
_TOKEN_COUNTING = frozenset(
    {"count", "counts", "max", "min", "num", "n", "len", "length", "limit", "limits"}
    | {"id", "ids", "type", "types", "usage", "budget", "index", "indices", "pos"}
    | {"position", "positions", "embedding", "embeddings", "level", "logprobs", "total"}
)


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name)]


def is_secret_name(name: str) -> bool:
    """Whether a variable or key name says it holds a secret."""
    if not name:
        return False
    words = _words(name)
    if not words:
        return False
    joined = "".join(words)
    if any(part in joined for part in _SECRET_PARTS):
        return True
    for i, word in enumerate(words):
        if word == "pass":
            if not _PASS_COUNTING.intersection(words):
                return True
            continue
        if word in _SECRET_WORDS:
            return True
        if word in ("key", "keys") and i > 0 and words[i - 1] in _KEY_QUALIFIERS:
            return True
        if word == "token" and not _TOKEN_COUNTING.intersection(words):
            return True
        if word == "tokens" and i > 0 and words[i - 1] in ("access", "auth", "api", "refresh"):
            return True
    return False


# --- values -----------------------------------------------------------------------------

# Value shapes of well-known credentials. Every pattern runs in linear time on any text (a
# tool result or a model's input may be megabytes of one character): no unbounded run is
# tried from every position of another run, and what may repeat is bounded.
_VALUE_PATTERNS = [
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),  # Anthropic
    re.compile(r"sk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{20,}"),  # OpenAI
    re.compile(r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),  # Stripe
    re.compile(r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),  # SendGrid
    re.compile(r"(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"),  # GitHub
    re.compile(r"glpat-[A-Za-z0-9_\-]{20,}"),  # GitLab
    re.compile(r"xox[abprs]-[A-Za-z0-9\-]{10,}"),  # Slack
    re.compile(r"(?:AKIA|ASIA)[0-9A-Z]{16}"),  # AWS access key id
    re.compile(r"AIza[0-9A-Za-z_\-]{35}"),  # Google API key
    re.compile(r"hf_[A-Za-z0-9]{30,}"),  # Hugging Face
    re.compile(  # JWT
        r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"
    ),
    re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/\-]{16,}=*"),  # Authorization: Bearer …
]
# The lines of a PEM private key block; a block is a BEGIN line and the END line after it.
_PEM_MARK = re.compile(r"-----(?P<end>BEGIN|END) [A-Z ]{0,40}PRIVATE KEY-----")
_PEM_LIMIT = 20_000
"""Most characters between BEGIN and END taken as one key (keys are a few kilobytes)."""
# The password of a URL: scheme://user:PASSWORD@host
_URL_PASSWORD = re.compile(
    r"(?P<head>(?<![a-zA-Z0-9+.\-])[a-zA-Z][a-zA-Z0-9+.\-]{0,40}://[^\s:/@]+:)(?P<value>[^\s@/]+)(?=@)"
)
# key = value / key: value / "key": "value" with a secret-sounding key (checked by name).
_ASSIGNMENT = re.compile(
    r"""(?ix)
    (?P<key>(?<![\w.\-])[\w.\-]{0,40}
        (?:pass|pwd|secret|token|key|credential|creds|auth|bearer|cookie|jwt)[\w.\-]{0,40})
    (?P<sep>(?P<q1>["']?)\s*[:=]\s*(?P<q2>["']?))
    (?P<value>[^\s"',;}{)\]]{6,})
    """
)
# ("password", "hunter2") / ['token', 'abc…']: a pair whose first item names a secret.
_PAIR = re.compile(
    r"""(?P<head>(?P<q1>['"])(?P<key>[\w.\-]{2,40})(?P=q1)\s*,\s*(?P<q2>['"]))"""
    r"""(?P<value>[^'"\n]{4,500}?)(?P=q2)"""
)
# "password hunter2-x" (a .netrc line, a printed name/value table): the word, blanks, and a
# value with a digit or symbol (so prose such as "password reset" is left alone).
_SPACED = re.compile(
    r"(?i)(?<![\w.\-])(?P<head>password|passwd|passphrase|pwd)(?P<sep>[ \t]{1,20})"
    r"(?P<value>[^\s\"']{6,200})"
)
_SYMBOL_OR_DIGIT = re.compile(r"[\d!@#$%^&*+=?~]")
# A .pgpass line: host:port:database:user:password (at a line start, or after a gutter tab).
_PGPASS = re.compile(
    r"(?m)(?<![^\n\t])(?P<head>[^\s:]{1,200}:(?:\d{1,5}|\*):[^\s:]{1,200}:[^\s:]{1,200}:)(?P<value>\S{1,200})$"
)
_CODE_LIKE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?P<call>[(\[])?$")
_LITERAL_WORDS = frozenset({"none", "null", "true", "false", "undefined", "nil"})


def mask_value(value: str) -> str:
    """A masked rendering that keeps at most a short prefix."""
    keep = value[:4] if len(value) >= 12 else ""
    return f"{keep}{MASK}"


def _mask_assignment(m: re.Match[str]) -> str:
    value = m.group("value")
    if m.string[m.start() - 1 : m.start()] == "‹" or value.startswith("‹secret:"):
        return m.group(0)  # a ‹secret:NAME› left by the pass that knows the values
    if MASK in value or not is_secret_name(m.group("key")):
        return m.group(0)
    if not m.group("q2") and _reads_as_code(value):
        return m.group(0)  # `token = getpass()`, `key=cfg.api_key`, `password=password`
    return m.group("key") + m.group("sep") + mask_value(value)


def _reads_as_code(value: str) -> bool:
    """Whether an unquoted value is an expression rather than a literal secret."""
    code = _CODE_LIKE.match(value)
    if code is None:
        return False
    return bool(
        code.group("call")
        or "." in value
        or value.lower() in _LITERAL_WORDS
        or is_secret_name(value)
    )


def mask_secrets(text: str) -> str:
    """``text`` with anything that looks like a credential masked."""
    if not text:
        return text
    return fold(text, MASK_PASSES, keep_map=False).text


def pattern_pass(pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str]) -> Pass:
    """A pass replacing each match of ``pattern`` as ``pattern.sub(replace, …)`` would."""

    def edits(text: str) -> Iterator[Edit]:
        for m in pattern.finditer(text):
            new = replace(m)
            if new != m.group(0):
                yield m.start(), m.end(), new

    return edits


def _mask_spaced(m: re.Match[str]) -> str:
    value = m.group("value")
    if MASK in value or value.startswith("‹") or not _SYMBOL_OR_DIGIT.search(value):
        return m.group(0)
    return m.group("head") + m.group("sep") + mask_value(value)


def _private_keys(text: str) -> Iterator[Edit]:
    """Each BEGIN … END PRIVATE KEY block masked; one pass over the markers (a regex
    searching for each BEGIN's END would rescan the text once per BEGIN)."""
    if "PRIVATE KEY-----" not in text:
        return
    begin: re.Match[str] | None = None
    for mark in _PEM_MARK.finditer(text):
        if mark.group("end") == "BEGIN":
            begin = mark
        elif begin is not None and mark.start() - begin.end() <= _PEM_LIMIT:
            yield begin.start(), mark.end(), mask_value(text[begin.start() : mark.end()])
            begin = None


def _mask_pair(m: re.Match[str]) -> str:
    value = m.group("value")
    if MASK in value or value.startswith("‹secret:") or not is_secret_name(m.group("key")):
        return m.group(0)
    return m.group("head") + mask_value(value) + m.group("q2")


def looks_secret(value: str) -> bool:
    """Whether a string value itself looks like a credential."""
    return (
        any(p.search(value) for p in _VALUE_PATTERNS)
        or bool(_URL_PASSWORD.search(value))
        or any(True for _ in _private_keys(value))
    )


# --- finding fast ------------------------------------------------------------------------
#
# A pattern that begins with a lookbehind or a class is tried by the regex engine at every
# position of the text: about a second per megabyte for the assignment pattern, and a
# search over a workspace reads many megabytes. So the slow passes try their pattern only
# where a match can begin, found with a literal the match must hold (``://``, a port
# between colons, a secret-sounding word), and give exactly the edits ``finditer`` would:
# every place a match can begin is tried, in order, from where the last match ended.


class Anchored:
    """A pass like :func:`pattern_pass`, trying ``pattern`` only at ``starts(text)``
    (ascending; None: at every position, as ``finditer`` does)."""

    def __init__(
        self,
        pattern: re.Pattern[str],
        replace: Callable[[re.Match[str]], str],
        starts: Callable[[str], Iterable[int] | None],
    ) -> None:
        self.pattern = pattern
        self.replace = replace
        self.starts = starts
        self.everywhere = pattern_pass(pattern, replace)
        """The same pass trying every position (what it must equal; benchmarks, tests)."""

    def __call__(self, text: str) -> Iterator[Edit]:
        places = self.starts(text)
        if places is None:
            yield from self.everywhere(text)
            return
        done = 0
        tried = -1
        for start in places:
            if start < done or start == tried:
                continue
            tried = start
            m = self.pattern.match(text, start)  # a lookbehind still sees the text before
            if m is None:
                continue
            new = self.replace(m)
            if new != m.group(0):
                yield m.start(), m.end(), new
            done = m.end()


_KEY_WORD = re.compile(  # a word of _ASSIGNMENT's key, with the separator after it
    r"""(?:pass|pwd|secret|token|key|credential|creds|auth|bearer|cookie|jwt)"""
    r"""(?=[\w.\-]{0,40}["']?\s*[:=])"""
)
_KEY_CHAR = re.compile(r"[\w.\-]")
_FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"
"""The only characters a case-insensitive pattern matches with an ASCII letter (İ ı ſ K)."""
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_PORT = re.compile(r":(?=(?:\d{1,5}|\*):)")


def _run_start(
    text: str, end: int, chars: frozenset[str] | re.Pattern[str], longest: int
) -> int | None:
    """Where the run of ``chars`` ending at ``end`` begins, if at most ``longest`` before."""
    start = end
    while start > 0 and (
        text[start - 1] in chars
        if isinstance(chars, frozenset)
        else chars.match(text, start - 1) is not None
    ):
        start -= 1
        if end - start > longest:
            return None
    return start


_last_lowered: tuple[str, str | None] = ("", "")
_LOWERED_KEPT = 2_000_000
"""Longest text kept with its lower case between passes (memory a kernel holds on to)."""


def _lowered(text: str) -> str | None:
    """``text`` in lower case, position for position, where a search of it finds what a
    case-insensitive pattern finds in ``text`` (None when a character folds otherwise).
    The passes after one that changed nothing get the same text: it is lowered once."""
    global _last_lowered
    last, low = _last_lowered
    if last is text:
        return low
    low = None if any(ch in text for ch in _FOLDS_TO_ASCII) else text.lower()
    if len(text) <= _LOWERED_KEPT:
        _last_lowered = (text, low)
    return low


def _assignment_starts(text: str) -> Iterator[int] | None:
    """A key = value match begins where a run of key characters begins, at most 40 before
    a secret-sounding word that has the separator at most 40 key characters after it."""
    low = _lowered(text)
    if low is None:
        return None  # the engine's own way
    return (
        start
        for m in _KEY_WORD.finditer(low)
        if (start := _run_start(low, m.start(), _KEY_CHAR, 40)) is not None
    )


def _spaced_starts(text: str) -> Iterator[int] | None:
    low = _lowered(text)
    return None if low is None else (m.start() for m in re.finditer("pass|pwd", low))


def _url_password_starts(text: str) -> Iterator[int]:
    """A scheme (1 to 41 characters, all of it: the lookbehind) right before ``://``."""
    at = text.find("://")
    while at >= 0:
        start = _run_start(text, at, _SCHEME_CHARS, 41)
        if start is not None and start < at:
            yield start
        at = text.find("://", at + 1)


def _pgpass_starts(text: str) -> Iterator[int]:
    """A line (or a gutter's tab) whose first colon opens the port field."""
    for port in _PORT.finditer(text):
        start = port.start()
        while start > 0 and start > port.start() - 200:
            ch = text[start - 1]
            if ch == ":" or ch.isspace():
                break
            start -= 1
        if start < port.start() and (start == 0 or text[start - 1] in "\n\t"):
            yield start


def _literal_starts(literal: str, shift: int) -> Callable[[str], Iterator[int]]:
    def starts(text: str) -> Iterator[int]:
        at = text.find(literal)
        while at >= 0:
            if at + shift >= 0:
                yield at + shift
            at = text.find(literal, at + 1)

    return starts


def _stripe_starts(text: str) -> Iterator[int]:
    return (m.start() - 2 for m in re.finditer("_(?:live|test)_", text) if m.start() >= 2)


def _bearer_starts(text: str) -> Iterator[int] | None:
    low = _lowered(text)
    return None if low is None else _literal_starts("bearer ", 7)(low)


def _masked_whole(m: re.Match[str]) -> str:
    return mask_value(m.group(0))


_VALUE_STARTS: dict[int, Callable[[str], Iterable[int] | None]] = {
    2: _stripe_starts,
    10: _literal_starts("eyJ", 0),
    11: _bearer_starts,
}
"""The value patterns (by their place in the list) that begin with no literal of their own."""

MASK_PASSES: tuple[Pass, ...] = (
    _private_keys,
    *(
        Anchored(p, _masked_whole, _VALUE_STARTS[i])
        if i in _VALUE_STARTS
        else pattern_pass(p, _masked_whole)
        for i, p in enumerate(_VALUE_PATTERNS)
    ),
    Anchored(
        _URL_PASSWORD,
        lambda m: m.group(0) if MASK in m.group("value") else m.group("head") + MASK,
        _url_password_starts,
    ),
    pattern_pass(_PAIR, _mask_pair),
    Anchored(_SPACED, _mask_spaced, _spaced_starts),
    Anchored(_PGPASS, lambda m: m.group("head") + mask_value(m.group("value")), _pgpass_starts),
    Anchored(_ASSIGNMENT, _mask_assignment, _assignment_starts),
)
"""What :func:`mask_secrets` does, pass by pass (see :mod:`jupyter_agent.secrets.redacted`)."""
