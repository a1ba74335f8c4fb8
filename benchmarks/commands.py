"""Shell command benchmarks, measured in one run.

    .venv/bin/python benchmarks/commands.py [--rounds 40]

Prints:

* how long judging a command line takes before it runs: parsing it with tree-sitter-bash
  and reading what each program does (``analyze``), uncached, for lines an agent writes and
  for a long one; plus the checks of its paths against the workspace (``command_hazards``);
* what the OS sandbox costs a command: ``execute_command`` run through the tool with the
  sandbox (bubblewrap) and without it, interleaved, median of ``--rounds``, and the
  ratio, for ``true`` and for a small real command;
* what finding the places to keep read-only adds to each launch (git's redirects in every
  repository of the workspace, a walk bounded at ``WALK_ENTRIES`` entries; the home
  folder's code-running files when the workspace is the home folder): the launch alone,
  with and without them, for workspaces of a few files, of 5,000 files with nested
  repositories, and larger than the walk's bound.

Nothing is asserted: machines here are shared and noisy, and the numbers are measured
side by side in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_agent.commands import OsSandbox, SandboxSettings, analyze, command_hazards  # noqa: E402
from jupyter_agent.commands._syntax import parse_script  # noqa: E402
from jupyter_agent.tools import ToolContext  # noqa: E402
from jupyter_agent.tools.shell import execute_command, workspace_os_sandbox  # noqa: E402
from jupyter_agent.workspace.access import WorkspaceAccess  # noqa: E402
from jupyter_agent.workspace.git_redirects import WALK_ENTRIES  # noqa: E402

LINES = {
    "simple": "ls -la",
    "typical": "cd src && python -m pytest -q tests/test_io.py 2>&1 | tail -20",
    "compound": "git status --short && git diff --stat; find . -name '*.csv' | xargs wc -l "
    "> counts.txt",
    "long (200 commands)": "; ".join(f"echo {i} >> log{i % 7}.txt" for i in range(200)),
}


def micros(fn, repeat: int = 200) -> float:
    """Median microseconds of ``fn()``."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def judging(workspace: Path) -> None:
    print("Judging a command line (uncached), median:")
    sandbox = WorkspaceAccess(workspace)
    for label, line in LINES.items():

        def fresh(line: str = line) -> None:
            parse_script.cache_clear()
            analyze.cache_clear()
            analyze(line)

        parse = micros(fresh, 50 if len(line) > 1000 else 200)
        checks = micros(
            lambda line=line: command_hazards(analyze(line), cwd=workspace, sandbox=sandbox)
        )
        print(
            f"  {label:<22} {len(line):>6} chars   analyze {parse:8.0f} µs   "
            f"path checks {checks:7.0f} µs"
        )


async def run(ctx: ToolContext, command: str) -> float:
    started = time.perf_counter()
    out = await execute_command.call(ctx, {"command": command})
    assert not out.is_error, out.text
    return time.perf_counter() - started


async def sandbox_cost(workspace: Path, rounds: int) -> None:
    confined = ToolContext(workspace=workspace)
    confined.resources.insert(OsSandbox(workspace), OsSandbox)
    unconfined = ToolContext(workspace=workspace)
    unconfined.resources.insert(OsSandbox(workspace, SandboxSettings(enabled=False)), OsSandbox)
    status = confined.resources[OsSandbox].status()
    print(
        f"\nexecute_command with and without the OS sandbox ({status.mechanism}), "
        f"{rounds} rounds interleaved:"
    )
    if not status.active:
        print(f"  no sandbox here: {status.detail}")
        return
    (workspace / "data.csv").write_text("a,b\n" + "1,2\n" * 1000)
    for command in ("true", "wc -l data.csv && git --version"):
        timings: dict[str, list[float]] = {"sandboxed": [], "unconfined": []}
        await run(confined, command)  # warm: the probe, the private /tmp
        for _ in range(rounds):
            timings["sandboxed"].append(await run(confined, command))
            timings["unconfined"].append(await run(unconfined, command))
        s, u = (statistics.median(timings[k]) * 1e3 for k in ("sandboxed", "unconfined"))
        print(
            f"  {command:<32} sandboxed {s:6.1f} ms   unconfined {u:6.1f} ms   "
            f"ratio {s / u:.2f}×   (+{s - u:.1f} ms)"
        )


def _tree(root: Path, files: int, repos: int) -> None:
    """``files`` files in folders of 50, and ``repos`` nested repositories among them."""
    import subprocess

    for i in range(files):
        folder = root / f"d{i // 2500}" / f"s{(i // 50) % 50}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.csv").write_text("a\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for r in range(repos):
        subprocess.run(["git", "init", "-q", str(root / f"d0/s{r}/vendor{r}")], check=True)


def protection_cost(base: Path, rounds: int) -> None:
    print(f"\nA launch (no process), median of {rounds}: what finding the protected places adds")
    shapes = {
        "a few files, one repository": (20, 0),
        "5,000 files, 3 nested repositories": (5_000, 3),
        f"{WALK_ENTRIES * 6 // 5:,} files (past the walk's bound)": (WALK_ENTRIES * 6 // 5, 0),
    }
    import os

    for label, (files, repos) in shapes.items():
        ws = base / label.split()[0].replace(",", "")
        ws.mkdir()
        _tree(ws, files, repos)
        for name, sandbox in (
            ("bare", OsSandbox(ws)),
            ("protected", workspace_os_sandbox(ws)),
        ):
            sandbox.status()
            times = []
            for _ in range(rounds):
                started = time.perf_counter()
                sandbox.launch(["true"], ws).close()
                times.append(time.perf_counter() - started)
            sandbox.close()
            print(f"  {label:<42} {name:<10} {statistics.median(times) * 1e3:7.1f} ms")
    home = base / "home"
    home.mkdir()
    before = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        sandbox = workspace_os_sandbox(home)
        sandbox.status()
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            launch = sandbox.launch(["true"], home)
            launch.close()
            times.append(time.perf_counter() - started)
        sandbox.close()
        mounts = launch.argv.count("--ro-bind")
        print(
            f"  {'the workspace is the home folder':<42} {'protected':<10} "
            f"{statistics.median(times) * 1e3:7.1f} ms   ({mounts} read-only mounts)"
        )
    finally:
        if before is not None:
            os.environ["HOME"] = before


async def main(rounds: int = 40) -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        judging(workspace)
        await sandbox_cost(workspace, rounds)
    with tempfile.TemporaryDirectory() as folder:
        protection_cost(Path(folder), max(5, rounds // 4))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    asyncio.run(main(parser.parse_args().rounds))
