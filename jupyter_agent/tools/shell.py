"""The shell tool: run a command in the workspace, streaming its output.

Before a command runs, its line is parsed (:mod:`jupyter_agent.commands`): the rules
judge each program in it, and :func:`_assess` refuses writes outside the workspace and
asks about anything the rules may not decide (see :mod:`jupyter_agent.commands.hazards`).

A command runs in bash (``/bin/sh`` where there is none: the line was parsed as bash),
inside the OS sandbox (:class:`~jupyter_agent.commands.OsSandbox`) when the machine has
one, in a process group of its own, with no stdin and without the environment variables
that look like secrets. Whatever ends it early — its timeout, or the user's Stop (a
cancel of the agent's task) — ends the whole group: SIGTERM, then SIGKILL two seconds
later, and the process is awaited. In the sandbox's PID namespace that also ends what
the command started in the background, ``setsid`` and double forks included; so does
the command's own end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from .._tasks import to_the_end
from ..approvals import ChangedSinceShown, CommandPreview, Grant, ProgramPreview, file_key
from ..commands import (
    NO_FILE_EFFECTS,
    CommandLine,
    OsSandbox,
    Protected,
    SandboxSettings,
    analyze,
    command_hazards,
    sensitive_reach,
    with_git_overrides,
)
from ..errors import ToolDenied, ToolError
from ..permissions import Hazard, Permission
from ..workspace.access import Sensitive, WorkspaceAccess
from ..workspace.autorun import autorun_for
from ..workspace.provenance import WrittenFiles, code_digest
from ..workspace.system_programs import system_program
from ._process_tree import any_alive, close_pipes, descendants, group_alive, signal_group
from ._shell_output import CommandOutput
from ._tool import ToolContext, ToolOutput, tool
from ._workspace_access import workspace_access

MAX_TIMEOUT = 1800.0
KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL."""
EXIT_GRACE = 1.0
"""How long output may go on after the command exits (background children holding it)."""
PROGRESS_INTERVAL = 0.1
"""At most ten progress events a second."""

SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
"""An environment variable whose name contains one of these never reaches a command."""


def command_env(
    base: Mapping[str, str] | None = None, *, read_only: bool = False
) -> dict[str, str]:
    """The environment a command gets: ``base`` (os.environ) minus secret-looking names,
    with git's configuration set so a planted one cannot run code (more of it when the
    line only reads: :mod:`jupyter_agent.os_sandbox.git_overrides`)."""
    env = {
        name: value
        for name, value in (os.environ if base is None else base).items()
        if not any(part in name.upper() for part in SECRET_NAME_PARTS)
    }
    # No pager and no prompt can wait for input that never comes.
    env.update(PAGER="cat", GIT_PAGER="cat", GIT_TERMINAL_PROMPT="0", PYTHONUNBUFFERED="1")
    # No start file runs, no function comes in from the environment, `cd` means the folder.
    for name in [n for n in env if n.startswith("BASH_FUNC_")] + ["BASH_ENV", "ENV", "CDPATH"]:
        env.pop(name, None)
    return with_git_overrides(env, read_only=read_only)


def _summary(a: Mapping[str, Any]) -> str:
    where = a.get("working_dir", ".")
    return f"Run: {a.get('command', '')}" + (f" (in {where})" if where not in (".", "") else "")


_SHELL = system_program("bash")


def os_sandbox_for(ctx: ToolContext) -> OsSandbox:
    """The agent's OS sandbox (an :class:`OsSandbox` resource), or a default one for the
    workspace (kept, so its private /tmp lasts from one command to the next)."""
    found = ctx.resources.get(OsSandbox)
    if found is not None:
        return found
    key = os.path.realpath(ctx.workspace)
    if key not in _DEFAULT_SANDBOXES:
        _DEFAULT_SANDBOXES[key] = workspace_os_sandbox(Path(key))
    return _DEFAULT_SANDBOXES[key]


_DEFAULT_SANDBOXES: dict[str, OsSandbox] = {}


def workspace_os_sandbox(workspace: Path, **options: Any) -> OsSandbox:
    """An OS sandbox for ``workspace`` that keeps its autorun places read-only, git's
    redirects and the home folder's code-running files among them (looked for again at
    every launch: a walk of the writable folders, so launch from a thread), after making
    the empty folders that let it mount them (:meth:`Autorun.prepare`)."""
    settings = options.get("settings") or SandboxSettings()

    def protected() -> Protected:
        autorun = autorun_for(workspace, settings.writable)
        autorun.prepare()
        return Protected(autorun.protected(), autorun.fills())

    return OsSandbox(workspace, protected=protected, **options)


def _assess(ctx: ToolContext, args: Mapping[str, Any]) -> list[Hazard]:
    """What no rule may decide about this command (see :mod:`jupyter_agent.commands.hazards`)."""
    sandbox = workspace_access(ctx)
    cwd = sandbox.resolve(str(args.get("working_dir", ".")), must_exist=True)
    os_sandbox = os_sandbox_for(ctx)
    return command_hazards(
        analyze(str(args["command"])),
        cwd=cwd,
        sandbox=sandbox,
        written=ctx.resources.get(WrittenFiles),
        scratch=os_sandbox.scratch(),
        writable=os_sandbox.roots()[1:] if os_sandbox.status().active else (),
        path_env=command_env().get("PATH"),
    )


_DOES = {
    "inert": "changes nothing",
    "reads": "only reads",
    "writes": "writes files",
    "runs_code": "runs code",
    "unknown": "not known to our analysis",
}


async def _preview(ctx: ToolContext, args: Mapping[str, Any]) -> CommandPreview:
    """The command about to run: each program with what our analysis says it does, and
    what the OS sandbox lets it do."""
    command = str(args["command"])
    line, reach = await asyncio.to_thread(_analyzed, ctx, command, args)
    programs = [
        ProgramPreview(
            text=inv.text,
            program=inv.program,
            effect=inv.kind,
            note=_note(
                inv.effect.problem or inv.effect.note or _DOES[inv.kind], reach.get(inv.text)
            ),
            writes=[w.value if w.value is not None else w.text for w in inv.effect.writes],
        )
        for inv in line.invocations
    ]
    status = await asyncio.to_thread(os_sandbox_for(ctx).status)
    return CommandPreview(
        command=command,
        working_dir=str(args.get("working_dir", ".")),
        programs=programs,
        redirects=[r.text for r in line.redirects if r.writes],
        sandbox=status.summary,
    )


def _analyzed(
    ctx: ToolContext, command: str, args: Mapping[str, Any]
) -> tuple[CommandLine, dict[str, list[Sensitive]]]:
    """The line's analysis, and the sensitive locations each of its programs reaches."""
    line = analyze(command)
    sandbox = workspace_access(ctx)
    try:
        cwd = sandbox.resolve(str(args.get("working_dir", ".")), must_exist=True)
    except ToolError:
        cwd = sandbox.root
    return line, sensitive_reach(line, cwd, sandbox)


def _note(does: str, reach: list[Sensitive] | None) -> str:
    """What a program does, for its card: never "only reads" when it reaches a sensitive
    location (a read of someone's credentials is not a harmless read)."""
    if not reach:
        return does
    places = ", ".join(p.place for p in reach[:3]) + (" …" if len(reach) > 3 else "")
    if does in (_DOES["reads"], NO_FILE_EFFECTS):
        return f"reaches a sensitive location: {places}"
    return f"{does}; reaches a sensitive location: {places}"


@tool(
    category="execute",
    permissions={Permission.EXECUTE_COMMANDS},
    summary=_summary,
    assess=_assess,
    preview=_preview,
)
async def execute_command(
    ctx: ToolContext, command: str, working_dir: str = ".", timeout: float = 60
) -> ToolOutput:
    """Run a shell command (bash) in the workspace and return its exit code and output
    (stdout and stderr together, in order). Long output keeps its first and last parts
    (200 lines / 30 KB in all). The command gets no input (stdin is empty): use
    non-interactive flags (e.g. `-y`). Secret-looking environment variables (names with
    KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL) are removed. Where the machine allows it,
    commands run in a sandbox: they can write only inside the workspace (not into .git/
    internals or .jupyter_agent/) and in a private /tmp that lasts for the session, and
    when the command ends, or times out, every process it started ends too: start a
    long-lived server from a notebook cell instead.

    Args:
        command: The shell command line.
        working_dir: Folder to run it in, relative to the workspace root.
        timeout: Seconds before the command is killed (at most 1800).
    """
    if not command.strip():
        raise ToolError("The command is empty.")
    if not 0 < timeout <= MAX_TIMEOUT:
        raise ToolError(f"timeout must be more than 0 and at most {MAX_TIMEOUT:.0f} seconds.")
    sandbox = workspace_access(ctx)
    cwd = sandbox.resolve(working_dir, must_exist=True)
    if not cwd.is_dir():
        raise ToolError(f"working_dir {working_dir!r} is a file, not a folder.")
    async with _as_approved(ctx, command, working_dir):
        return await _launched(ctx, command, cwd, sandbox, timeout)


SHELL_TOOLS = (execute_command,)
"""The shell tools, in the order the model sees them."""


# --- the code a command runs is the code approved ----------------------------------------


@contextlib.asynccontextmanager
async def _as_approved(ctx: ToolContext, command: str, working_dir: str) -> AsyncIterator[None]:
    """Right before the spawn, the code the command runs is what its approval saw: each file
    the card bound is as the card was shown for, and no other workspace code changed since
    the call was decided. Until the command ends, the agent's own writers (a sibling
    subagent's file tools included) refuse to change the files the card bound."""
    grant = ctx.approval
    bound = [b.path for b in grant.files() if b.path is not None] if grant is not None else []
    written = ctx.resources.get(WrittenFiles)
    args = {"command": command, "working_dir": working_dir}
    if written is None or not bound:
        await asyncio.to_thread(_check_what_runs, ctx, args, grant)
        yield
        return
    async with written.running(bound, command):
        await asyncio.to_thread(_check_what_runs, ctx, args, grant)
        yield


def _check_what_runs(ctx: ToolContext, args: Mapping[str, Any], grant: Grant | None) -> None:
    """Raise :class:`ChangedSinceShown` when the code ``args`` runs is not what the call's
    approval saw (see :func:`_as_approved`)."""
    for bound in grant.files() if grant is not None else []:
        if bound.path is not None and code_digest(bound.path) != bound.digest:
            raise ChangedSinceShown(bound.what, key=bound.key)
    if ctx.run is None:
        return  # called from code, not decided by an agent's run: nothing to hold it to
    sandbox = workspace_access(ctx)
    for hazard in _assess(ctx, args):
        if hazard.action == "refuse":
            raise ToolDenied(hazard.reason)
        for path in hazard.paths:
            key = file_key(os.path.abspath(path))
            shown = grant.get(key) if grant is not None else None
            if shown is None or code_digest(path) != shown.digest:
                raise ChangedSinceShown(sandbox.relative(path), key=key)
        if not hazard.paths and (grant is None or hazard.reason not in grant.warnings):
            raise ChangedSinceShown("what the command would touch", key="")


async def _launched(
    ctx: ToolContext, command: str, cwd: Path, sandbox: WorkspaceAccess, timeout: float
) -> ToolOutput:
    """Run ``command`` in ``cwd``, confined, and return what it did."""
    os_sandbox = os_sandbox_for(ctx)
    confined = os_sandbox.status().active
    argv = (
        [_SHELL, "--noprofile", "--norc", "-c", command] if _SHELL else ["/bin/sh", "-c", command]
    )
    # The launch walks the workspace for git's redirects: off the event loop.
    try:
        launch, cancelled = await to_the_end(asyncio.to_thread(os_sandbox.launch, argv, cwd))
    except OSError as exc:
        raise ToolError(f"Could not set up the sandbox: {exc.strerror or exc}.") from None
    if cancelled:
        launch.close()
        raise asyncio.CancelledError
    line = analyze(command)
    read_only = bool(line.invocations) and all(
        inv.kind in ("reads", "inert") for inv in line.invocations
    )

    output = CommandOutput()
    started = time.monotonic()
    try:
        proc = await _spawn(launch.argv, cwd, launch.pass_fds, command_env(read_only=read_only))
    except OSError as exc:
        launch.close()
        raise ToolError(f"Could not start the command: {exc.strerror or exc}.") from None

    streamer = asyncio.create_task(_stream_progress(ctx, output))
    try:
        outcome = await _supervise(proc, output, timeout)
    except BaseException:
        # Stop (CancelledError) or anything else: end the whole group, then re-raise.
        _, cancelled_again = await to_the_end(_kill_group(proc))
        if cancelled_again:
            raise asyncio.CancelledError from None
        raise
    finally:
        close_pipes(proc)
        launch.close()
        _record_writes(ctx, command, cwd, sandbox)
        streamer.cancel()
        await asyncio.wait([streamer])
    output.close()
    await _send_progress(ctx, output)
    duration = time.monotonic() - started

    code = proc.returncode
    took = _seconds(duration)
    if outcome == "timeout":
        killed = (
            "the command and all its child processes were killed"
            if confined  # the PID namespace ends with it, detached processes included
            else "the command's process group was killed (a process that left it, with "
            "setsid, may still run)"
        )
        status = f"[timed out after {_seconds(timeout)}: {killed}]"
    elif code is not None and code < 0:
        status = f"[killed by signal {_signal_name(-code)} after {took}]"
    else:
        status = f"[exit code {code} after {took}]"
    if outcome == "held":
        status = status[:-1] + "; background processes it left holding its output were killed]"
    body = output.text() or "(no output)"
    failed = None
    if outcome == "timeout" or code != 0:
        last = next((s for s in reversed(body.splitlines()) if s.strip()), "")
        failed = status.strip("[]") + (f": {last.strip()}" if last and code else "")
    return ToolOutput(
        f"{body}\n{status}",
        data={
            "exit_code": code,
            "duration": round(duration, 3),
            "timed_out": outcome == "timeout",
            "omitted_lines": output.omitted,
            "sandboxed": confined,
        },
        is_error=outcome == "timeout",
        error_line=failed,
    )


# --- running -------------------------------------------------------------------------


async def _supervise(
    proc: asyncio.subprocess.Process, output: CommandOutput, timeout: float
) -> str:
    """Read the output until the command ends: 'exited', 'timeout' or 'held'.

    'held': the command exited, but processes it started in the background kept its
    output open; they are killed after a short grace rather than waited for.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    assert proc.stdout is not None
    reader = asyncio.create_task(_pump(proc.stdout, output))
    try:
        exited_at: float | None = None
        while not reader.done():
            now = loop.time()
            if now >= deadline:
                await _kill_group(proc)
                await asyncio.wait({reader}, timeout=0.5)  # what was written before the kill
                return "timeout"
            # proc.wait() only returns once the output is closed; returncode is set at exit.
            if proc.returncode is not None:
                exited_at = exited_at or now
                if now - exited_at >= EXIT_GRACE:
                    await _kill_group(proc)
                    await asyncio.wait({reader}, timeout=0.5)
                    return "held"
            await asyncio.wait({reader}, timeout=min(0.05, deadline - now))
        # The output is closed: the command has exited, or is about to.
        waiter = asyncio.ensure_future(proc.wait())
        await asyncio.wait({waiter}, timeout=max(0.0, deadline - loop.time()))
        if not waiter.done():
            waiter.cancel()
            await _kill_group(proc)
            return "timeout"
        return "exited"
    finally:
        reader.cancel()


async def _pump(stream: asyncio.StreamReader, output: CommandOutput) -> None:
    while chunk := await stream.read(65536):
        output.feed(chunk)


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """End the command's process group and every process it started (in the OS sandbox they
    live in a session of their own, ended with it by the kernel a moment after the sandbox
    dies): SIGTERM, SIGKILL after a grace, then wait until none of them runs."""
    pgid = proc.pid
    tree = descendants(pgid)
    loop = asyncio.get_running_loop()
    if group_alive(pgid) or any_alive(tree):
        signal_group(pgid, signal.SIGTERM)
        deadline = loop.time() + KILL_GRACE
        # Nothing signals the end of a group's orphans: poll.
        while (group_alive(pgid) or any_alive(tree)) and loop.time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
        if group_alive(pgid):
            signal_group(pgid, signal.SIGKILL)
        for pid in tree:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()  # outside a group (no killpg on this platform)
    # Not proc.wait(): called before the exit it also waits for the output to close,
    # which a process that left the group (setsid) may hold open for ever.
    deadline = loop.time() + 1.0
    while (proc.returncode is None or any_alive(tree)) and loop.time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.01)


def _record_writes(ctx: ToolContext, command: str, cwd: Path, sandbox: WorkspaceAccess) -> None:
    """Remember the workspace files the line wrote by name, so running one asks again."""
    written = ctx.resources.get(WrittenFiles)
    if written is None:
        return
    for use in analyze(command).writes():
        if not use.target.static or use.target.value is None:
            continue
        for folder in use.cwds:
            if folder is None:
                continue
            base = os.path.expanduser(folder) if folder.startswith("~") else folder
            target = os.path.expanduser(use.target.value)
            path = os.path.normpath(os.path.join(cwd, base, target))
            if sandbox.relative(path) != path:  # inside the workspace
                written.add(path)


async def _spawn(
    argv: list[str],
    cwd: Path,
    pass_fds: tuple[int, ...] = (),
    env: Mapping[str, str] | None = None,
) -> asyncio.subprocess.Process:
    """Start the command in a process group of its own.

    A cancel can land after the fork but before the process object exists; asyncio then
    kills the shell alone, and what it started lives on. So the spawn is finished even
    then, and the whole group ended, before the cancel goes on.
    """
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=cwd,
            env=dict(env) if env is not None else command_env(),
            start_new_session=True,  # its own process group: killed as one
            pass_fds=pass_fds,
        )
    )
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        if spawn.done() and spawn.cancelled():
            raise
        try:
            proc, _ = await to_the_end(spawn)
        except Exception:
            raise asyncio.CancelledError from None
        await to_the_end(_kill_group(proc))
        close_pipes(proc)
        raise


# --- output --------------------------------------------------------------------------


async def _stream_progress(ctx: ToolContext, output: CommandOutput) -> None:
    while True:
        await asyncio.sleep(PROGRESS_INTERVAL)
        await _send_progress(ctx, output)


async def _send_progress(ctx: ToolContext, output: CommandOutput) -> None:
    if output.pending:
        await ctx.progress(output.take_pending())


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 100 else f"{value:.0f} s"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
