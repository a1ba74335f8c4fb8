"""A real JupyterHub: two users, alice and bob, each with a JupyterLab of their own that the
hub spawns (``SimpleLocalProcessSpawner``: one Unix account for both, this process's, as in
containers and some hub spawners), behind configurable-http-proxy; and an administrator's
policy the hub gives every server (``$JUPYTER_AGENT_POLICY``, through
``c.Spawner.environment``).

What must hold, through the hub's URL in Chromium:

- Each user's agent works: it inserts a cell and runs it, live in the page.
- Sharing a Unix account, a user's agent cannot read the other's agent credentials file
  nor a file in their dot-folders: the file tools refuse, the panel says so, and the
  content reaches neither the page nor the model.
- The policy holds: a disabled tool is never offered, and refused when named anyway; a
  model of a provider it does not allow is refused, naming the policy.

One hub serves the module's tests (it starts in a few seconds; each user's server spawns
once, at their first login).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from browser_pages import PAGE_TIMEOUT, browser_page
from lab_server import LAB_SETTINGS, ROOT, LabServer, serve_the_built_extension
from notebook_ui import NotebookUI, open_notebook_in
from panel_ui import call, start, status
from playwright.sync_api import expect

HUB_START_TIMEOUT = 60.0  # s: the hub (and its proxy) answering /hub/api
SPAWN_TIMEOUT = 90_000  # ms: a user's server spawning after their login
PROXY = ROOT / "js" / "node_modules" / ".bin" / "configurable-http-proxy"
PASSWORD = "hub-test-password"
USERS = ("alice", "bob")
POLICY = """\
disabled_tools = ["execute_command"]
providers = ["anthropic"]
"""
SECRET = "sk-ant-bobs-own-key-never-shown"
NOTE = "bob's private note, never shown to alice"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Hub:
    url: str
    """The hub's public URL (the proxy's)."""
    homes: Path
    """Each user's home is ``homes / name``."""
    policy: Path
    log: Path
    process: subprocess.Popen[bytes]
    runtime: Path
    """Each user's server's runtime folder is ``runtime / name``."""

    def lab(self, user: str) -> LabServer:
        """The user's JupyterLab, as the browser tests' helpers take it (rooted in their
        home; its log is the hub's, which the spawned servers write to)."""
        return LabServer(
            url=f"{self.url}/user/{user}",
            root=self.homes / user,
            log=self.log,
            process=self.process,
            runtime=self.runtime / user,
        )


def _hub_config(base: Path, homes: Path, runtime: Path, policy: Path, ports: list[int]) -> str:
    """jupyterhub_config.py: the hub, its proxy and the users' servers on loopback ports;
    each server a JupyterLab as the browser tests start it, with the extension of this
    tree and the policy file."""
    port, hub_port, proxy_api_port = ports
    if not PROXY.exists():
        pytest.fail(
            f"{PROXY.relative_to(ROOT)} is missing: JupyterHub's proxy comes from js/'s "
            "devDependencies; run `npm install` in js/ (make install does)",
            pytrace=False,
        )
    settings = base / "lab-settings"
    for name, values in LAB_SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(values))
    config = base / "lab-config"
    (config / "labconfig").mkdir(parents=True)
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"buildCheck": False, "buildAvailable": False})
    )
    jupyter_path = serve_the_built_extension(base)
    bin_folder = Path(sys.executable).parent
    environment = {
        "PATH": os.pathsep.join([str(bin_folder), os.environ.get("PATH", "/usr/bin:/bin")]),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "JUPYTER_AGENT_POLICY": str(policy),
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        **({"JUPYTER_PATH": jupyter_path} if jupyter_path else {}),
    }
    lab_options = [
        "--allow-root",  # both users are this process's account, root on CI machines
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        "--KernelManager.transport=ipc",
    ]
    if _has("jupyter_server_ydoc"):  # jupyter-collaboration: off, as most people run it
        lab_options.append("--YDocExtension.disable_rtc=True")
    return f"""\
c = get_config()  # noqa
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.db_url = {f"sqlite:///{base / 'jupyterhub.sqlite'}"!r}
c.JupyterHub.cookie_secret_file = {str(base / "cookie_secret")!r}
c.ConfigurableHTTPProxy.command = [{str(PROXY)!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.pid_file = {str(base / "proxy.pid")!r}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {PASSWORD!r}
c.Authenticator.allowed_users = {set(USERS)!r}
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {str(homes / "{username}")!r}
c.Spawner.ip = "127.0.0.1"
c.Spawner.default_url = "/lab"
c.Spawner.cmd = [{str(bin_folder / "jupyterhub-singleuser")!r}]
c.Spawner.args = {lab_options!r}
c.Spawner.start_timeout = 90
c.Spawner.http_timeout = 90
c.Spawner.environment = {{
    **{environment!r},
    # Each user's runtime folder: short (a kernel's Unix socket path must fit in 107 bytes)
    # and known to the test, which ends any server left running.
    "JUPYTER_RUNTIME_DIR": lambda spawner: {str(runtime)!r} + "/" + spawner.user.name,
}}
"""


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _wait_for_hub(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + HUB_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"jupyterhub exited with {process.returncode}; log:\n"
                + log.read_text(errors="replace")[-4000:]
            )
        try:
            with urllib.request.urlopen(f"{url}/hub/api", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise RuntimeError("jupyterhub did not answer; log:\n" + log.read_text()[-4000:])


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """JupyterHub on a free loopback port, its users alice and bob (any login with the
    password), each home a folder of ``homes``; stopped, with every server it spawned,
    after the module."""
    if not _has("jupyterhub"):
        pytest.fail(
            "jupyterhub is not installed: it is in the test extra (pip install -e '.[test]')",
            pytrace=False,
        )
    base = tmp_path_factory.mktemp("jupyterhub")
    homes = base / "homes"
    runtime = Path(tempfile.mkdtemp(prefix="hub-"))
    policy = base / "policy.toml"
    policy.write_text(POLICY)
    ports = [_free_port() for _ in range(3)]
    (base / "jupyterhub_config.py").write_text(_hub_config(base, homes, runtime, policy, ports))
    log = base / "hub.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(base / "jupyterhub_config.py")],
            cwd=base,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    hub = Hub(f"http://127.0.0.1:{ports[0]}", homes, policy, log, process, runtime)
    try:
        _wait_for_hub(hub.url, process, log)
        yield hub
    finally:
        _end(process)
        _end_left_over(base / "proxy.pid", runtime)
        shutil.rmtree(runtime, ignore_errors=True)


def _end(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM: the hub stops the users' servers and its proxy on the way out."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)


def _end_left_over(proxy_pid: Path, runtime: Path) -> None:
    """The proxy and the users' servers, if the hub left any running (each is a session of
    its own): the proxy's pid file, each server's ``jpserver-PID.json``."""
    pids = [int(proxy_pid.read_text())] if proxy_pid.exists() else []
    pids += [int(p.stem.split("-")[1]) for p in runtime.glob("*/jpserver-*.json")]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(pid, signal.SIGTERM)


def log_in(page: Any, hub: Hub, user: str) -> None:
    """Sign in at the hub's login page; the user's server spawns (the first time) and the
    page lands in their JupyterLab."""
    page.goto(f"{hub.url}/hub/login")
    page.locator("#username_input").fill(user)
    page.locator("#password_input").fill(PASSWORD)
    page.locator("#login_submit").click()
    try:
        page.wait_for_url(re.compile(rf"/user/{user}/lab"), timeout=SPAWN_TIMEOUT)
        page.wait_for_function(
            "async () => window.jupyterapp?.name === 'JupyterLab'"
            " && (await window.jupyterapp.restored, true)",
            timeout=PAGE_TIMEOUT,
        )
    except Exception as error:
        raise AssertionError(
            f"{user}'s JupyterLab did not open through the hub (the page is at {page.url}); "
            f"hub log:\n" + hub.log.read_text(errors="replace")[-4000:]
        ) from error


# Turns the kernel reads from the user's home; the run of the inserted cell is added in the
# kernel (its id is the one the insert answered with).
SETUP = """\
%load_ext jupyter_agent
import re
from jupyter_agent import ScriptedModel
from jupyter_agent.models.scripted import tool_turn

def run_inserted(request):
    inserted = re.search(r"Inserted code cell ([\\w-]+)", str(request.messages[-1]))
    return tool_turn("run_cell", cell_id=inserted.group(1))

turns = ScriptedModel.load("turns.json")
turns.insert(1, run_inserted)
m = ScriptedModel(turns)"""

# What the model saw: the tools it was offered, and whether a secret reached it.
SEEN = """\
offered = {t["name"] for t in m.requests[0].tools}
print("offered execute_command:", "execute_command" in offered, "read_file:", "read_file" in offered)
print("secret reached the model:", any(%r in str(r.messages) for r in m.requests))"""


def work_live(notebook: NotebookUI, panel: Any, said: str) -> None:
    """The agent's cell, run once approved, shows live in the page with its output."""
    card = panel.get_by_role("region", name=re.compile(r"^Approval: ")).first
    expect(card).to_contain_text(said)
    card.get_by_role("button", name="Allow", exact=True).click()
    expect(status(panel)).to_contain_text("completed")
    inserted = notebook.cells.nth(1)
    expect(inserted).to_contain_text(f"print({said!r})")
    expect(inserted.locator(".jp-OutputArea-output")).to_have_text(said)


def tool_row(panel: Any, index: int, tool: str) -> Any:
    """The ``index``-th row of ``tool``'s calls in the transcript, opened."""
    row = panel.locator(f'.ja-tool[data-tool="{tool}"]').nth(index)
    row.locator("summary").first.click()
    return row


def test_alices_agent_works_through_the_hub_and_cannot_reach_bobs_files(
    browser: Any, hub: Hub, request: pytest.FixtureRequest
) -> None:
    alice, bob = hub.homes / "alice", hub.homes / "bob"
    # Bob's agent credentials and a dot-folder of his (the hub creates a home at spawn).
    (bob / ".jupyter_agent").mkdir(parents=True, exist_ok=True)
    (bob / ".jupyter_agent" / "credentials.json").write_text(
        json.dumps({"anthropic": {"api_key": SECRET}})
    )
    (bob / ".private").mkdir(exist_ok=True)
    (bob / ".private" / "notes.txt").write_text(NOTE)
    alice.mkdir(parents=True, exist_ok=True)
    said = "hello from alice's server"
    (alice / "turns.json").write_text(
        json.dumps(
            [
                call("insert_cell", source=f"print({said!r})", after="cell-0"),
                call("read_file", path=str(bob / ".jupyter_agent" / "credentials.json")),
                call("read_file", path=str(bob / ".private" / "notes.txt")),
                call("execute_command", command=f"cat {bob}/.private/notes.txt"),
                call("task_complete", summary="Ran a cell; bob's files stay his."),
            ]
        )
    )
    lab = hub.lab("alice")
    with browser_page(browser, lab, request) as page:
        log_in(page, hub, "alice")
        notebook = open_notebook_in(page, lab, "mine.ipynb", ["x = 1", ""])
        notebook.run_cell(SETUP)
        panel = start(notebook, "%agent act --model $m Add a cell, and look at bob's files")
        work_live(notebook, panel, said)

        # Both reads refused, each saying why; nothing of bob's reaches the page.
        credentials = tool_row(panel, 0, "read_file")
        expect(credentials).to_contain_text("agent credentials file")
        # Here bob's home is no home the agent knows of (not under /home): outside alice's
        # workspace is reason enough (tests/test_other_homes.py covers another home's dot-files).
        notes = tool_row(panel, 1, "read_file")
        expect(notes).to_contain_text(f"Refused '{bob / '.private' / 'notes.txt'}'")
        # The disabled tool: not offered, and refused when named anyway.
        command = tool_row(panel, 0, "execute_command")
        expect(command).to_contain_text(
            re.compile(r"disabled by the administrator's policy|Unknown tool 'execute_command'")
        )
        expect(page.locator("body")).not_to_contain_text(SECRET)
        expect(page.locator("body")).not_to_contain_text(NOTE)
        seen = notebook.run_cell(SEEN % SECRET)
        assert "offered execute_command: False read_file: True" in seen, seen
        assert "secret reached the model: False" in seen, seen
        assert NOTE not in seen and SECRET not in seen

        # A model of a provider the policy does not allow, refused naming the policy.
        out = notebook.run_cell("%agent model openai:gpt-5", allow_error=True)
        assert "administrator's policy" in out, out
        assert str(hub.policy) in out, out
        assert "openai" in out, out


def test_bobs_agent_works_too_and_cannot_read_alices_credentials(
    browser: Any, hub: Hub, request: pytest.FixtureRequest
) -> None:
    alice, bob = hub.homes / "alice", hub.homes / "bob"
    (alice / ".jupyter_agent").mkdir(parents=True, exist_ok=True)
    (alice / ".jupyter_agent" / "credentials.json").write_text(
        json.dumps({"anthropic": {"api_key": "sk-ant-alices-key-never-shown"}})
    )
    bob.mkdir(parents=True, exist_ok=True)
    (bob / "data.csv").write_text("region,sales\nnorth,7\n")
    said = "hello from bob's server"
    (bob / "turns.json").write_text(
        json.dumps(
            [
                call("insert_cell", source=f"print({said!r})", after="cell-0"),
                call("read_file", path="data.csv"),
                call("read_file", path=str(alice / ".jupyter_agent" / "credentials.json")),
                call("task_complete", summary="Ran a cell, read my data."),
            ]
        )
    )
    lab = hub.lab("bob")
    with browser_page(browser, lab, request) as page:
        log_in(page, hub, "bob")
        notebook = open_notebook_in(page, lab, "his.ipynb", ["y = 2", ""])
        notebook.run_cell(SETUP)
        panel = start(notebook, "%agent act --model $m Add a cell and read my data")
        work_live(notebook, panel, said)
        expect(tool_row(panel, 0, "read_file")).to_contain_text("north,7")
        expect(tool_row(panel, 1, "read_file")).to_contain_text("agent credentials file")
        expect(page.locator("body")).not_to_contain_text("sk-ant-alices-key-never-shown")
