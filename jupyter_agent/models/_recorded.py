"""The model string a session records, and which model a saved session goes on with.

A session file lives in the workspace, and a cloned repository can plant one. So the model
it names is taken as a name only: it may pick a provider the user already has (a built-in
one, or one named in their own settings), never an address of its own. An
``openai-compatible:NAME@URL`` recorded by the user is honoured when the server is on this
machine; any other address would send the conversation, and the user's key, wherever the
file says.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
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


def resumed_model(
    recorded: str | None, provider: str, name: str, providers: Mapping[str, ProviderConfig]
) -> tuple[str | None, str]:
    """The model string a saved session goes on with (None: the default model), and when
    that is not the model it ran on, a sentence saying why (else ``""``).

    ``recorded``: the session's model string (``""``: none could be written; None in
    sessions saved before it was kept); ``provider`` and ``name``: the model it last ran
    on; ``providers``: the ``[providers]`` of the user's settings."""
    ran_on = recorded if recorded is not None else _model_string(provider, name) or ""
    if not ran_on:
        if provider in ("", "scripted"):
            return None, ""
        return None, f"This session ran on {name} at a server whose address it did not keep."
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
    if spec.provider not in providers and url and not _on_this_machine(url):
        return None, (
            f"This session ran on {ran_on}: a session file cannot choose the server your "
            "conversation and key go to (one on this machine, or one named in your "
            "settings' [providers], it can)."
        )
    return ran_on, ""


def _on_this_machine(url: str) -> bool:
    try:
        host = urlsplit(url).hostname or ""
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:  # not an address, or not a well-formed URL
        return False


def _carries_credentials(url: str) -> bool:
    try:
        parts = urlsplit(url)
        return bool(parts.username or parts.password or parts.query)
    except ValueError:
        return True  # not well formed: not kept
