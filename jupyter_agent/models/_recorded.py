"""The model string a session records, and which model a saved session goes on with.

A session file lives in the workspace, and a cloned repository can plant one. So the model
it names is taken as a name only: it may pick a provider the user already has (a built-in
one, or one named in their own settings), and an ``openai-compatible:NAME@URL`` only at an
address the user's own configuration names (a ``[providers]`` entry, a ``[models]``
string, ``JUPYTER_AGENT_MODEL``, ``OPENAI_BASE_URL``). Any other address would send the
conversation, and the user's key, wherever the file says; "on this machine" is no
exception, since on a shared host another user's program may listen there.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from ._base import Model
from ._catalog import _ALIAS, PROVIDER_TYPES, ModelStringError, ProviderConfig, parse_model
from ._catalog import model_string as _model_string

_LONGEST = 1000
"""A recorded string longer than any real one is not read (a file may say anything)."""


def recorded_string(
    given: str | Model, model: Model, providers: Mapping[str, ProviderConfig]
) -> str:
    """The model string a session records for ``model``, chosen as ``given``; empty when
    it cannot be written again (a Model of the user's own class, a replay) or should not
    be (an address carrying credentials)."""
    if isinstance(given, str):
        spec = parse_model(given, providers)
        written = str(spec)
        url = spec.config.base_url if spec.provider not in providers else None
    else:  # the built-in models say which string makes them; a class of the user's cannot
        say = getattr(model, "model_string", None)
        written = (say() if callable(say) else None) or ""
        url = getattr(model, "base_url", None) if written.startswith("openai-compatible:") else None
    if written == "scripted" or (url and _carries_credentials(url)):
        return ""
    return written


def vouched_addresses(
    providers: Mapping[str, ProviderConfig], strings: Iterable[str | None]
) -> set[str]:
    """The server addresses the user's own configuration names: its providers', those in
    its model ``strings`` (``[models]``), ``JUPYTER_AGENT_MODEL``'s and ``OPENAI_BASE_URL``."""
    found = {c.base_url for c in providers.values() if c.base_url}
    for text in (*strings, os.environ.get("JUPYTER_AGENT_MODEL")):
        try:
            url = parse_model(text, providers).config.base_url if text else None
        except ModelStringError:
            continue
        if url:
            found.add(url)
    if os.environ.get("OPENAI_BASE_URL"):
        found.add(os.environ["OPENAI_BASE_URL"])
    return {u.rstrip("/") for u in found}


def resumed_model(
    recorded: str | None,
    provider: str,
    name: str,
    providers: Mapping[str, ProviderConfig],
    vouched: set[str] | frozenset[str] = frozenset(),
) -> tuple[str | None, str]:
    """The model string a saved session goes on with (None: the default model), and when
    that is not the model it ran on, a sentence saying why (else ``""``).

    ``recorded``: the session's model string (``""``: none could be written; None in
    sessions saved before it was kept); ``provider`` and ``name``: the model it last ran
    on; ``providers``: the ``[providers]`` of the user's settings; ``vouched``: the
    addresses it names (:func:`vouched_addresses`)."""
    ran_on = recorded if recorded is not None else _model_string(provider, name) or ""
    if not ran_on:
        if provider in ("", "scripted"):
            return None, ""
        return None, f"This session ran on {name[:80]} at a server whose address it did not keep."
    if len(ran_on) > _LONGEST:
        return None, "This session names a model no settings could name."
    prefix, colon, _ = ran_on.partition(":")
    if colon and _ALIAS.match(prefix) and prefix not in providers and prefix not in PROVIDER_TYPES:
        return None, (
            f"This session ran on {ran_on}, and your settings name no provider {prefix!r} now."
        )
    try:
        spec = parse_model(ran_on, providers)
    except ModelStringError:
        return None, f"This session names a model that is not one now ({ran_on[:80]})."
    url = spec.config.base_url
    if spec.provider not in providers and url and url.rstrip("/") not in vouched:
        return None, (
            f"This session ran on {ran_on}: a session file cannot choose the server your "
            "conversation and key go to. Name the server in your settings ([providers] or "
            "[models] choices) to go on there by itself, or pass it as the model."
        )
    return ran_on, ""


def _carries_credentials(url: str) -> bool:
    try:
        parts = urlsplit(url)
        return bool(parts.username or parts.password or parts.query)
    except ValueError:
        return True  # not well formed: not kept
