"""Secrets by value: one pass over everything a tool returns, before anyone sees it.

Masking by shape (:mod:`jupyter_agent.secrets.shapes`) catches what looks like a key. This pass
catches what *is* one, because it knows the values: the kernel's environment variables
that look secret (by name: ``*_KEY``, ``*_TOKEN``, ``*_PAT``, ``*_PASS``, ``*_DSN``…, and
the password inside any ``…URL`` variable), the model client's own key, and values the
user registers (``agent.secrets.add(value)``). Each is replaced by ``‹secret:NAME›``
wherever it appears — also split over lines or quoted pieces, and base64-encoded — in
every tool result, progress line, diff and echoed input, before the model, the events,
the panel or the session files get them. Then the shape patterns run on what is left.

The same passes, as a :class:`Masker`, give tools the text as the model would see it with
a map back to the real text (:meth:`Masker.view`): a search or an edit's match runs on
that, so no answer of a tool depends on what the model cannot read.
"""

from __future__ import annotations

import base64
import functools
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .redacted import Pass, Redacted, fold
from .shapes import MASK_PASSES, is_secret_name, pattern_pass

MIN_LENGTH = 8
"""Shorter values are not looked for (they would match ordinary text)."""

_SECRET_SUFFIXES = ("_PAT", "_PASS", "_PWD", "_DSN", "_CREDS", "_AUTH")
_URL_PASSWORD = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+:(?P<pw>[^\s@/]+)@")
_BETWEEN = r"(?:\n {0,12}\d{1,9}\t|[\s\"'\\+]){0,40}"
"""What may stand between the characters of a secret split over lines or string pieces:
blanks, quotes, ``+``, and a numbered line's gutter (``read_file`` shows ``   12\t``).
Bounded, so that no text makes the search slow."""


def environment_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Secret values in the environment, by the name that holds them."""
    found: dict[str, str] = {}
    for name, value in (os.environ if environ is None else environ).items():
        if not value:
            continue
        upper = name.upper()
        if is_secret_name(name) or upper.endswith(_SECRET_SUFFIXES):
            found[name] = value
        password = _URL_PASSWORD.match(value)
        if password:
            found[f"{name} password"] = password.group("pw")
    return found


class Secrets:
    """The secret values one agent knows, and the pass that hides them.

    ``sources`` are called at every pass (the environment can change while the kernel
    runs: ``%env OPENAI_API_KEY=…``); ``add`` registers more values by hand.
    """

    def __init__(self, *sources: Callable[[], Mapping[str, str]]) -> None:
        self._sources = list(sources) or [environment_secrets]
        self._added: dict[str, str] = {}
        self._lock = threading.Lock()
        self._key: tuple[tuple[str, str], ...] = ()
        self._passes_now: tuple[Pass, ...] = MASK_PASSES

    def add(self, value: str, name: str = "registered") -> None:
        """Hide ``value`` from now on (it shows as ``‹secret:name›``)."""
        if value:
            self._added[value] = name

    def add_source(self, source: Callable[[], Mapping[str, str]]) -> None:
        self._sources.append(source)

    def values(self) -> dict[str, str]:
        """Every known value → the name it is shown by (the longest names win no ties)."""
        known: dict[str, str] = {}
        for source in self._sources:
            try:
                pairs = source()
            except Exception:  # a source that cannot answer hides nothing more
                continue
            for name, value in pairs.items():
                known.setdefault(value, name)
        for value, name in self._added.items():
            known.setdefault(value, name)
        return {v: n for v, n in known.items() if len(v) >= MIN_LENGTH}

    def redact(self, text: str) -> str:
        """``text`` with every known secret, and every credential-shaped value, hidden."""
        if not text:
            return text
        return self.masker().redact(text)

    def masker(self) -> Masker:
        """This redaction as it stands now, to run over many texts (the values are read
        once, not for each text)."""
        return Masker(self._passes())

    def redact_data(self, data: Any) -> Any:
        """:meth:`redact` over the strings of a JSON-like value (tool inputs, payloads)."""
        if isinstance(data, str):
            return self.redact(data)
        if isinstance(data, Mapping):
            return {k: self.redact_data(v) for k, v in data.items()}
        if isinstance(data, (list, tuple)):
            return type(data)(self.redact_data(v) for v in data)
        return data

    # --- the pattern --------------------------------------------------------------

    def _passes(self) -> tuple[Pass, ...]:
        """The known values' pass (if any are known), then the credential shapes'."""
        known = self.values()
        key = tuple(sorted(known.items()))
        with self._lock:
            if key != self._key:
                self._key = key
                names: dict[str, str] = {}
                alternatives = []
                for value, name in sorted(known.items(), key=lambda p: -len(p[0])):
                    for form in _forms(value):
                        names.setdefault(_squash(form), name)
                        alternatives.append(_spread(form))
                pattern = re.compile("|".join(alternatives)) if alternatives else None
                known_pass = (
                    (pattern_pass(pattern, functools.partial(_replace, names)),)
                    if pattern is not None
                    else ()
                )
                self._passes_now = (*known_pass, *MASK_PASSES)
            return self._passes_now  # the same tuple while the values stay the same


class Masker:
    """One agent's redaction as it stood at one moment: the same passes for every text a
    tool call reads (a search over many files, an edit and its diff)."""

    def __init__(self, passes: Sequence[Pass]) -> None:
        self.passes = passes if isinstance(passes, tuple) else tuple(passes)
        """The passes, in order; the same tuple for as long as the secrets are the same."""

    def redact(self, text: str) -> str:
        """``text`` as the model sees it."""
        return fold(text, self.passes, keep_map=False).text if text else text

    def view(self, text: str) -> Redacted:
        """``text`` as the model sees it, with where each hidden span lies in ``text``."""
        return fold(text, self.passes)


def _replace(names: Mapping[str, str], match: re.Match[str]) -> str:
    return f"‹secret:{names.get(_squash(match.group(0)), 'secret')}›"


def _forms(value: str) -> Iterable[str]:
    """The value, and the stable middle of its base64 encoding at each of three offsets."""
    yield value
    raw = value.encode("utf-8", "surrogatepass")
    if len(raw) < 12:
        return
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode()
        start = (offset * 4 + 2) // 3 + (1 if offset else 0)  # chars touched by what precedes
        middle = encoded[start : len(encoded) - 4]  # and by what follows (or padding)
        if len(middle) >= 12:
            yield middle
        urlsafe = middle.replace("+", "-").replace("/", "_")
        if urlsafe != middle and len(urlsafe) >= 12:
            yield urlsafe


def _spread(value: str) -> str:
    """A pattern for ``value`` that also matches it split over lines or string pieces."""
    return _BETWEEN.join(re.escape(ch) for ch in value)


def _squash(text: str) -> str:
    return re.sub(_BETWEEN, "", text)
