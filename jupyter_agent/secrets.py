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
    text = _mask_private_keys(text)
    for pattern in _VALUE_PATTERNS:
        text = pattern.sub(lambda m: mask_value(m.group(0)), text)
    text = _URL_PASSWORD.sub(
        lambda m: m.group(0) if MASK in m.group("value") else m.group("head") + MASK, text
    )
    text = _PAIR.sub(_mask_pair, text)
    text = _SPACED.sub(_mask_spaced, text)
    text = _PGPASS.sub(lambda m: m.group("head") + mask_value(m.group("value")), text)
    return _ASSIGNMENT.sub(_mask_assignment, text)


def _mask_spaced(m: re.Match[str]) -> str:
    value = m.group("value")
    if MASK in value or value.startswith("‹") or not _SYMBOL_OR_DIGIT.search(value):
        return m.group(0)
    return m.group("head") + m.group("sep") + mask_value(value)


def _mask_private_keys(text: str) -> str:
    """Each BEGIN … END PRIVATE KEY block masked; one pass over the markers (a regex
    searching for each BEGIN's END would rescan the text once per BEGIN)."""
    if "PRIVATE KEY-----" not in text:
        return text
    out: list[str] = []
    done = 0
    begin: re.Match[str] | None = None
    for mark in _PEM_MARK.finditer(text):
        if mark.group("end") == "BEGIN":
            begin = mark
        elif begin is not None and mark.start() - begin.end() <= _PEM_LIMIT:
            out.append(text[done : begin.start()])
            out.append(mask_value(text[begin.start() : mark.end()]))
            done, begin = mark.end(), None
    out.append(text[done:])
    return "".join(out)


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
        or _mask_private_keys(value) != value
    )
