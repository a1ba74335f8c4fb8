"""Where a kernel runs, seen from its notebook: in the notebook's folder, or apart from it.

A kernel the Jupyter server starts runs in the notebook's folder, on the server's host. A
remote kernel (a gateway started it: Jupyter Kernel Gateway, Enterprise Gateway) runs in a
folder of its own, often on another host: the agent's workspace is that folder, so its file
tools, its commands, its saved sessions and file mode see the kernel host's files, not the
server's, while the notebook itself is reached live through the frontend. The frontend
names the notebook (its path on the server, the server's root); the kernel looks whether
that notebook is in its own folder. It says what it found, never more: a name it could not
check is not claimed.
"""

from __future__ import annotations

import os
import posixpath
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ...secrets.environment import gateway_kernel


@dataclass(frozen=True)
class Apart:
    """A kernel that does not run in its notebook's folder (see the module doc)."""

    folder: Path
    """The kernel's folder: the agent's workspace."""
    host: str
    """The kernel's host name."""
    notebook: str
    """The notebook as the server names it (relative to its root)."""
    server_folder: str
    """The notebook's folder on the server, as the server names it ('' not said)."""
    gateway: str | None
    """The gateway that started the kernel, when its environment says so."""

    def notice(self, app: str) -> str:
        """What the user hears once: where the kernel runs, and what works from there."""
        started = f", started by {self.gateway}," if self.gateway else ""
        on_server = f" ({self.server_folder} on the Jupyter server)" if self.server_folder else ""
        return (
            f"This kernel{started} runs in {self.folder} on {self.host}, not in the folder "
            f"of {self.notebook}{on_server}. The agent works on the notebook live in {app} "
            "(reading, editing and running its cells, with this kernel's variables), but its "
            f"file tools, commands and saved sessions see {self.folder} on the kernel's "
            "host: files beside the notebook on the server are not there. Put the files "
            "the agent needs where the kernel runs, or load them in a cell."
        )

    def missing_note(self) -> str:
        """After "x does not exist": why a file beside the notebook is not found."""
        return (
            f"The workspace is this kernel's folder, {self.folder} on {self.host}, not the "
            f"notebook's folder on the Jupyter server: files beside {self.notebook} there "
            "are not here."
        )

    def describe(self) -> str:
        """A clause for the notebook's description (the panel's line, the model's prompt)."""
        return (
            f"this kernel runs apart from it (in {self.folder} on {self.host}), so files "
            "beside the notebook on the server are not in the workspace"
        )


def kernel_apart(
    server_path: str,
    server_root: str = "",
    *,
    folder: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Apart | None:
    """How this kernel runs apart from the notebook the frontend calls ``server_path``
    (relative to the server's root ``server_root``, as the page names it); None when the
    notebook is in the kernel's ``folder`` (default: the working folder), by its path from
    there or by its name."""
    env = os.environ if environ is None else environ
    here = Path.cwd() if folder is None else folder
    given = Path(server_path)
    if not given.is_absolute() and ((here / given).is_file() or (here / given.name).is_file()):
        return None
    server_folder = env.get("KERNEL_WORKING_DIR", "")
    if not server_folder and server_root:
        inside = posixpath.dirname(server_path.replace(os.sep, "/"))
        server_folder = posixpath.join(server_root, inside) if inside else server_root
    return Apart(
        folder=here,
        host=socket.gethostname(),
        notebook=server_path,
        server_folder=server_folder,
        gateway=gateway_kernel(env),
    )
