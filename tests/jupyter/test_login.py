"""``%agent login`` and the panel's set-up state, in a real kernel through jupyter_client.

The key is typed where the frontend hides it (getpass on the kernel's stdin channel: an
``input_request`` with ``password``), so it is never in a cell, an output or the notebook.
"""

from __future__ import annotations

import json
import stat

import pytest
from kernels import Kernel

from jupyter_agent.secrets import credentials

pytestmark = pytest.mark.slow  # real kernels

KEY = "sk-ant-api03-LOGINLOGINLOGIN-0123456789abcdef"


def test_without_a_key_the_panel_says_so_before_anything_is_typed(kernel: Kernel) -> None:
    kernel.ok("%agent")
    comm = kernel.panel_comm()
    kernel.state_of(comm, "model_ready", False)
    setup = [
        m["content"]["data"]["state"]["model_setup"]
        for m in kernel.seen
        if m["msg_type"] == "comm_msg" and "model_setup" in m["content"]["data"].get("state", {})
    ]
    assert setup[-1].startswith("No Anthropic API key found")


def test_login_asks_hidden_saves_owner_only_and_the_key_reaches_nothing_else(
    kernel: Kernel,
) -> None:
    kernel.ok("%agent")
    comm = kernel.panel_comm()
    requests = kernel.answering("%agent login", [KEY, "y"])
    assert requests[0]["password"] is True  # typed where it is not shown
    assert requests[1]["password"] is False
    kernel.state_of(comm, "model_ready", True)
    path = credentials.credentials_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())[credentials.FIELD] == KEY
    # Not in the kernel's environment, so not in its children's either.
    check = kernel.ok(
        "import os, subprocess, sys\n"
        "from jupyter_agent import credentials as _c\n"
        "_k = _c.session_key()\n"
        "print(_k is not None, _k in os.environ.values(),\n"
        "      _k in subprocess.run([sys.executable, '-c', 'import os; print(os.environ)'],\n"
        "                           capture_output=True, text=True).stdout)"
    )
    assert check.stdout.strip() == "True False False"
    assert KEY not in json.dumps(kernel.seen, default=str)  # no output, trait or message shows it

    out = kernel.ok("%agent logout")
    assert "Removed the saved key" in out.stdout
    assert not path.exists()


def test_login_without_saving_keeps_the_key_in_memory_only(kernel: Kernel) -> None:
    kernel.answering("%agent login", [KEY, ""])
    assert not credentials.credentials_file().exists()
    out = kernel.ok(
        "from jupyter_agent import credentials as _c\nprint(_c.session_key() is not None)"
    )
    assert out.stdout.strip() == "True"
    assert KEY not in json.dumps(kernel.seen, default=str)


def test_login_refuses_a_key_on_its_line_without_echoing_it(kernel: Kernel) -> None:
    result = kernel.run(f"%agent login {KEY}")
    assert "never put a key in a cell" in result.stderr
    said = [m for m in result.messages if m["msg_type"] != "execute_input"]  # the cell itself
    assert KEY not in json.dumps(said, default=str)
