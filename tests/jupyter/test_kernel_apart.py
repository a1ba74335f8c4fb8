"""A remote kernel (a gateway started it, in a folder of its own): how it tells that it runs
apart from its notebook, what it says about it, and where a missing key must be set.

The whole path (JupyterLab behind a real Kernel Gateway, the agent editing live) is
tests/browser/test_remote_kernel.py; these are its pure parts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_agent import Agent, MissingAPIKey
from jupyter_agent.jupyter.kernel.remote import kernel_apart
from jupyter_agent.secrets.environment import (
    JUPYTER_ENVIRONMENT,
    gateway_kernel,
    gateway_key_note,
    key_environment,
)
from jupyter_agent.workspace.access import WorkspaceAccess

GATEWAY = {"KERNEL_GATEWAY": "1", "KERNEL_WORKING_DIR": "/srv/lab/reports"}


def test_a_kernel_in_its_notebooks_folder_is_not_apart(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "g.ipynb").write_text("{}")
    assert kernel_apart("reports/g.ipynb", "/srv", folder=tmp_path, environ={}) is None
    # The server's root elsewhere: the kernel runs in the notebook's own folder.
    assert kernel_apart("reports/g.ipynb", "/srv", folder=tmp_path / "reports", environ={}) is None


def test_a_kernel_whose_folder_lacks_its_notebook_says_where_both_are(tmp_path: Path) -> None:
    apart = kernel_apart("reports/g.ipynb", "/srv/lab", folder=tmp_path, environ=GATEWAY)
    assert apart is not None
    assert apart.folder == tmp_path
    assert apart.gateway == "Jupyter Kernel Gateway"
    # The gateway client's KERNEL_WORKING_DIR is the notebook's folder on the server.
    assert apart.server_folder == "/srv/lab/reports"
    notice = apart.notice("JupyterLab")
    assert notice.startswith(
        f"This kernel, started by Jupyter Kernel Gateway, runs in {tmp_path} on {apart.host}, "
        "not in the folder of reports/g.ipynb (/srv/lab/reports on the Jupyter server)."
    )
    assert "live in JupyterLab" in notice
    assert "file tools, commands and saved sessions see" in notice


def test_without_a_gateways_word_the_server_folder_comes_from_the_pages_root(
    tmp_path: Path,
) -> None:
    apart = kernel_apart("reports/g.ipynb", "~/lab", folder=tmp_path, environ={})
    assert apart is not None
    assert (apart.server_folder, apart.gateway) == ("~/lab/reports", None)
    assert "started by" not in apart.notice("JupyterLab")
    # Nothing said about the server's folder that was not said.
    unknown = kernel_apart("g.ipynb", "", folder=tmp_path, environ={})
    assert unknown is not None
    assert "on the Jupyter server)" not in unknown.notice("JupyterLab")


def test_a_missing_file_says_the_workspace_is_the_kernels_folder(tmp_path: Path) -> None:
    apart = kernel_apart("g.ipynb", "/srv/lab", folder=tmp_path, environ=GATEWAY)
    assert apart is not None
    access = WorkspaceAccess(tmp_path)
    access.missing_note = apart.missing_note()
    said = access.missing_message("server_only.csv", tmp_path / "server_only.csv")
    assert said.startswith(
        f"'server_only.csv' does not exist. The workspace is this kernel's folder, {tmp_path} "
        f"on {apart.host}, not the notebook's folder on the Jupyter server"
    )


def test_a_gateway_kernel_is_told_by_its_environment() -> None:
    assert gateway_kernel({"KERNEL_GATEWAY": "1"}) == "Jupyter Kernel Gateway"
    # Enterprise Gateway and others: the Jupyter server's gateway client sent the folder.
    assert gateway_kernel({"KERNEL_WORKING_DIR": "/srv/lab"}) == "a kernel gateway"
    # A kernel the server started itself has JPY_SESSION_NAME (and all of its environment).
    assert gateway_kernel({"KERNEL_WORKING_DIR": "/x", "JPY_SESSION_NAME": "/x/a.ipynb"}) is None
    assert gateway_kernel({}) is None
    assert key_environment({}) == JUPYTER_ENVIRONMENT
    assert gateway_key_note({}) == ""


async def test_the_missing_key_advice_on_a_gateway_names_what_decides(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KERNEL_GATEWAY", "1")
    agent = Agent("planner", "claude-sonnet-4-6", workspace=workspace)
    with pytest.raises(MissingAPIKey) as raised:
        agent.start("go")
    said, headline = str(raised.value), raised.value.headline
    assert JUPYTER_ENVIRONMENT not in said
    assert "ANTHROPIC_API_KEY in the environment of Jupyter Kernel Gateway" in said
    assert "env_process_whitelist" in said
    # The set-up box shows the headline beside its own list, which says "the environment
    # Jupyter starts in": the headline says why that does not reach this kernel.
    assert headline.startswith("No Anthropic API key found. This kernel was started by ")
    assert "the environment Jupyter starts in does not reach it" in headline
    assert "env_process_whitelist (KG_ENV_PROCESS_WHITELIST)" in headline
