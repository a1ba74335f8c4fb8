"""The user's API keys (Anthropic's, OpenAI's), kept out of notebooks, workspaces and child
processes.

A real model finds its key in this order: the ``api_key`` given in code, the environment
(``ANTHROPIC_API_KEY`` or ``OPENAI_API_KEY``, as the SDKs read them), a key given for this
session (the panel's key field, ``%agent login``), then the user's credentials file
(``~/.jupyter_agent/credentials.json``, beside the user's own settings), which holds one
key per provider.

Invariants this module keeps:

- A session key lives in this process's memory only. It is never put in ``os.environ``:
  the agent's shell commands inherit the environment.
- The credentials file is written only when the user asks, atomically, created owner-only
  (0600) in an owner-only folder (0700), never in a workspace. It is not read when others
  may read it or when it is a symbolic link: :class:`CredentialsError` says why and what to
  do.
- The key itself is never in a message of this module, nor of any error it raises.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

from ..admin_policy import current_policy
from ..errors import AgentError
from ..workspace.paths import PathRefused, Root, read_limited

CREDENTIALS = Path(".jupyter_agent") / "credentials.json"
"""In the home folder: the saved key."""
LOCATION_VARIABLE = "JUPYTER_AGENT_CREDENTIALS"
"""An environment variable naming another credentials file (tests use it)."""
PROVIDERS = ("anthropic", "openai")
"""The providers whose key may be given for a session or saved."""
FIELD = "anthropic_api_key"
"""The saved Anthropic key's field; another provider's is ``<provider>_api_key``."""
SECRET_NAME = "the model's API key"
"""How a hidden key shows in a redacted text: ``‹secret:the model's API key›``."""


class CredentialsError(AgentError):
    """The credentials file is unsafe or unreadable; the message says what to do."""


_lock = threading.Lock()
_session_keys: dict[str, str] = {}
_file_cache: tuple[tuple[int, int, int, int], dict[str, str]] | None = None


def field(provider: str) -> str:
    """The credentials file's field holding ``provider``'s key."""
    if provider not in PROVIDERS:
        raise ValueError(f"no key is kept for {provider!r} (only for {', '.join(PROVIDERS)})")
    return f"{provider}_api_key"


def credentials_file() -> Path:
    """Where a saved key is kept: ``~/.jupyter_agent/credentials.json``."""
    given = os.environ.get(LOCATION_VARIABLE)
    return Path(given).expanduser() if given else Path.home() / CREDENTIALS


def check_key(key: str) -> str:
    """``key`` without surrounding blanks; ValueError (naming no part of it) if it cannot be
    a key."""
    key = key.strip()
    if not key:
        raise ValueError("Enter an API key first.")
    if any(ch.isspace() for ch in key) or not key.isprintable():
        raise ValueError("That does not look like an API key: it has spaces or line breaks.")
    return key


def _keys_given_allowed() -> None:
    """The administrator's policy may say keys come only from the environment."""
    policy = current_policy()
    if policy.keys_from_environment:
        raise CredentialsError(
            f"Your administrator's policy ({policy.where}) takes API keys only from the "
            "environment the server gives the kernel: a key cannot be typed or saved here."
        )


def use_for_session(key: str, provider: str = "anthropic") -> None:
    """Keep ``key`` in this process's memory for this session (never in the environment)."""
    field(provider)  # a provider whose key is kept
    _keys_given_allowed()
    _session_keys[provider] = check_key(key)


def forget_session_key(provider: str = "anthropic") -> None:
    _session_keys.pop(provider, None)


def session_key(provider: str = "anthropic") -> str | None:
    return _session_keys.get(provider)


def save_key(key: str, provider: str = "anthropic") -> Path:
    """Save ``key`` for the user: owner-only, atomic, beside the other providers' saved
    keys. Returns the file's path."""
    key = check_key(key)
    name = field(provider)
    _keys_given_allowed()
    try:
        kept = _saved_keys()
    except CredentialsError:
        kept = {}  # an unsafe or broken file is replaced, not read
    path = credentials_file()
    data = json.dumps({**kept, name: key}, indent=1) + "\n"
    disk = Root(path.anchor or "/")  # through the path gate, like every file of the agent
    disk.make_folder(path.parent, mode=0o700)
    disk.write(path, data.encode(), mode=0o600)
    return path


def remove_saved_key() -> Path | None:
    """Delete the credentials file; returns its path, or None when there was none."""
    path = credentials_file()
    try:
        Root(path.parent).remove(path.name)
    except FileNotFoundError:
        return None
    return path


def saved_key(provider: str = "anthropic") -> str | None:
    """``provider``'s key in the credentials file, or None when there is none.

    Raises :class:`CredentialsError` when the file is a symbolic link, is not the user's,
    may be read by others, or cannot be read as a credentials file.
    """
    return _saved_keys().get(field(provider))


def _saved_keys() -> dict[str, str]:
    """The keys in the credentials file by field (empty when there is no file)."""
    global _file_cache
    path = credentials_file()
    try:  # no link followed, only a regular file (the path gate)
        fd = Root(path.parent, links="none").open_file(path.name)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        if os.path.islink(path):
            raise CredentialsError(
                f"{path} is a symbolic link: a key is not read through one. Remove it, then "
                "save the key again (the panel's key field, or %agent login)."
            ) from None
        if isinstance(exc, PathRefused):
            raise CredentialsError(f"{exc} Remove it.") from None
        raise CredentialsError(f"{path} could not be read: {exc.strerror}.") from None
    try:
        info = os.fstat(fd)
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise CredentialsError(
                f"{path} belongs to another user: it is not used. Remove it, then save the "
                "key again."
            )
        if info.st_mode & 0o077:
            mode = stat.S_IMODE(info.st_mode)
            raise CredentialsError(
                f"{path} may be read by other users (mode {mode:o}): it is not used. Run "
                f"`chmod 600 {path}`, or remove it and save the key again."
            )
        version = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_dev)
        with _lock:
            cached = _file_cache
        if cached is not None and cached[0] == version:
            return cached[1]
        raw, _ = read_limited(fd, 64 * 1024)
    finally:
        os.close(fd)
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    keys = (
        {
            name: value.strip()
            for name, value in data.items()
            if name in map(field, PROVIDERS) and isinstance(value, str) and value.strip()
        }
        if isinstance(data, dict)
        else {}
    )
    if not keys:
        raise CredentialsError(
            f"{path} holds no key ({FIELD!r} is missing): remove it, then save the key again."
        )
    with _lock:
        _file_cache = (version, keys)
    return keys


def stored_key(provider: str = "anthropic") -> str | None:
    """``provider``'s key given for this session, else its saved one (None when neither
    is there; always None when the administrator's policy takes keys from the environment
    only). Raises :class:`CredentialsError` for an unsafe credentials file."""
    if current_policy().keys_from_environment:
        return None
    return _session_keys.get(provider) or saved_key(provider)


def stored_secrets() -> dict[str, str]:
    """The stored keys by the name they are hidden under (a source for
    :class:`~jupyter_agent.secrets.redaction.Secrets`): a key the agent could come across by
    reading the file, or in a model's client, is hidden even when no model uses it."""
    found: dict[str, str] = {}
    for provider, key in _session_keys.items():
        found[SECRET_NAME if provider == "anthropic" else f"the {provider} API key"] = key
    try:
        saved = _saved_keys()
    except CredentialsError:
        saved = {}
    for name, key in saved.items():
        if key not in found.values():
            found[f"the saved API key ({name})" if name != FIELD else "the saved API key"] = key
    return found
