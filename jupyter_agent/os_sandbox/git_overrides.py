"""git's configuration, set through the environment of every command the agent runs, so that
a configuration planted in a repository cannot make git run code through it.

git ≥ 2.31 reads ``GIT_CONFIG_COUNT`` / ``GIT_CONFIG_KEY_<n>`` / ``GIT_CONFIG_VALUE_<n>`` as
if given with ``-c``: after every configuration file, so these values win over any file's
(included ones too). They reach every git the command starts, a script's or make's included.

- :data:`ALWAYS`, for every command: settings that change what git may *run*, never what it
  computes or writes. ``core.fsmonitor`` is a cache (git runs its command at every
  ``git status``); the pager is never used without a terminal; ``ext::`` remotes run a
  command. A command that commits still runs the user's own hooks.
- :data:`READ_ONLY`, for lines whose every program only reads (``git status``, ``git log``,
  ``git ls-remote``…: what a read-only rule lets run unasked): no hooks at all (``git
  status`` runs ``post-index-change`` when it refreshes the index), and the defaults for the
  programs a read can run (ssh for ``ls-remote``, credential helpers, askpass, gpg for
  ``log --show-signature``). Not for other lines, where a user's own ssh command, signing
  program or hooks are part of the work.

Not covered by values (git has no value that turns them off): ``diff.external`` and the
filter and diff drivers an attributes file picks. A nested repository whose configuration
sets them asks before git runs there (:mod:`.hazards`), and the OS sandbox keeps every
repository's configuration read-only (:mod:`jupyter_agent.workspace.git_redirects`).

A command line that would take these away (``env -i``, ``env -u GIT_CONFIG_COUNT``, ``unset
GIT_CONFIG_COUNT``, an assignment to one) asks: :func:`guarded`.
"""

from __future__ import annotations

from collections.abc import Mapping

ALWAYS: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("protocol.ext.allow", "never"),
)
READ_ONLY: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),
    ("core.sshCommand", "ssh"),
    ("credential.helper", ""),  # an empty value empties the list of helpers
    ("core.askPass", ""),
    ("log.showSignature", "false"),
    ("gpg.program", "gpg"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("gpg.x509.program", "gpgsm"),
)


def with_git_overrides(env: Mapping[str, str], *, read_only: bool) -> dict[str, str]:
    """``env`` with the overrides appended after any ``GIT_CONFIG_COUNT`` entries it has
    (later entries win), and without ``GIT_CONFIG_PARAMETERS`` (git reads it after them)."""
    out = {k: v for k, v in env.items() if k != "GIT_CONFIG_PARAMETERS"}
    count = out.get("GIT_CONFIG_COUNT", "0")
    start = int(count) if count.isdigit() and int(count) < 1000 else 0
    pairs = ALWAYS + (READ_ONLY if read_only else ())
    for offset, (key, value) in enumerate(pairs):
        out[f"GIT_CONFIG_KEY_{start + offset}"] = key
        out[f"GIT_CONFIG_VALUE_{start + offset}"] = value
    out["GIT_CONFIG_COUNT"] = str(start + len(pairs))
    return out


def guarded(name: str) -> bool:
    """Whether a command that removes the variable ``name`` would undo the overrides."""
    return name.startswith("GIT_CONFIG")
