"""Secret masking: what looks like a credential never reaches the model.

Two signals: a *name* that says secret (``api_key``, ``DB_PASSWORD``, ``auth_token``…)
and a *value* that looks like one (provider key formats, bearer tokens, private key
blocks, long random-looking strings assigned to a secret-named key). Masked values
keep a short prefix so the user can tell which key was meant.
"""

from __future__ import annotations

import re

MASK = "•••"

_SECRET_NAME = re.compile(
    r"(?i)(pass(word|wd|phrase)?|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|"
    r"credential|auth|bearer|session[_-]?key|client[_-]?secret|signature|cookie)"
)
_HARMLESS_NAME = re.compile(
    r"(?i)^(max_tokens|tokens?|token_count|n_tokens|num_tokens|tokenizer|author|authors?)$"
)

# Value shapes of well-known credentials.
_VALUE_PATTERNS = [
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),  # Anthropic
    re.compile(r"sk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{20,}"),  # OpenAI, Stripe
    re.compile(r"(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"),  # GitHub
    re.compile(r"xox[abprs]-[A-Za-z0-9\-]{10,}"),  # Slack
    re.compile(r"AKIA[0-9A-Z]{16}"),  # AWS access key id
    re.compile(r"AIza[0-9A-Za-z_\-]{35}"),  # Google API key
    re.compile(r"hf_[A-Za-z0-9]{30,}"),  # Hugging Face
    re.compile(r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),  # JWT
    re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/\-]{16,}=*"),  # Authorization: Bearer …
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL),
]
# key = value / key: value / "key": "value" with a secret-sounding key.
_ASSIGNMENT = re.compile(
    r"""(?ix)
    (?P<key>[\w.\-]*(?:pass(?:word|wd)?|secret|token|api[_-]?key|apikey|access[_-]?key|
        private[_-]?key|credential|auth)[\w.\-]*)
    (?P<sep>["']?\s*[:=]\s*["']?)
    (?P<value>[^\s"',;}{]{6,})
    """
)


def is_secret_name(name: str) -> bool:
    """Whether a variable or key name says it holds a secret."""
    return bool(_SECRET_NAME.search(name)) and not _HARMLESS_NAME.match(name)


def mask_value(value: str) -> str:
    """A masked rendering that keeps at most a short prefix."""
    keep = value[:4] if len(value) >= 12 else ""
    return f"{keep}{MASK}"


def mask_secrets(text: str) -> str:
    """``text`` with anything that looks like a credential masked."""
    if not text:
        return text
    for pattern in _VALUE_PATTERNS:
        text = pattern.sub(lambda m: mask_value(m.group(0)), text)
    return _ASSIGNMENT.sub(
        lambda m: (
            m.group("key")
            + m.group("sep")
            + (m.group("value") if MASK in m.group("value") else mask_value(m.group("value")))
        ),
        text,
    )


def looks_secret(value: str) -> bool:
    """Whether a string value itself looks like a credential."""
    return any(p.search(value) for p in _VALUE_PATTERNS)
