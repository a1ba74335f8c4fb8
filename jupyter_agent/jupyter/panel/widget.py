"""The agent panel: one anywidget UI for a kernel's agent, inline under a cell or docked.

Every message and trait between the kernel and a view (``static/panel.js``, built from
``js/src/panel``) is defined in :mod:`~jupyter_agent.jupyter.panel.protocol`. Traffic is
split by purpose:

- **State** lives in small synced traits (status, detail, role, busy, usage, context,
  pending ids, running_code, kernel_id, dock…), written only by the kernel. The browser
  never sets a trait; it sends commands.
- **The transcript** travels as custom messages. A view that renders sends ``hello`` (again
  after a page reload); the kernel answers with a ``snapshot``: the transcript so far, each
  stream merged into one entry and each finished text block as its whole text
  (:class:`~jupyter_agent.jupyter.panel.transcript.Transcript`). Then every view gets live
  ``events`` batches, about 30 a second at most, consecutive pieces of a stream merged; a
  batch that is only streamed text goes as ``text``, and streamed text shorter than 32
  characters waits up to 0.1 s for more. State, usage and context events only set traits.
  A ``snapshot`` for no view (after a session was resumed) replaces every view's
  transcript. What an event changes in the traits is worked out by
  :func:`~jupyter_agent.jupyter.panel.state.apply`, a pure function; the panel assigns it.
- **Commands** from a view are validated, then carried out by their handler
  (:mod:`~jupyter_agent.jupyter.panel.commands`); each gets a ``reply``. A search of past
  sessions (the session picker's search box) runs in a worker thread and is answered when
  it is done, the matches in its reply. :meth:`AgentPanel.receive` is that path, public:
  a test drives the panel through it and reads what views would get from
  :attr:`AgentPanel.outbox`.

The panel lives on the agent's loop (in a kernel, the agent's own thread): events are
shown and commands carried out there. Comm messages arrive on the kernel's shell thread,
or on a subshell's (the lab extension's control channel, or JupyterLab's comms over
subshells); every one is handed to the agent's loop before it touches the agent, so a
Stop clicked during a busy cell reaches the agent at once where a subshell carried it.

**Where it shows** (:mod:`._displays`): one display per ``%agent`` cell, the newest live
and the others frozen into records of what happened while they were live (the runs
started then, as text and escaped HTML: :mod:`~jupyter_agent.jupyter.panel.record`), and a
``text/plain`` fallback of the live display's own runs for frontends without widgets
(nbconvert, nbclient, papermill).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import anywidget
import traitlets as t
from pydantic import ValidationError

from ... import events as ev
from ...agent import Agent
from ...agent._home import at_home, on_loop, schedule
from ...config.trust import TrustPrompt
from ...errors import AgentError, SessionError
from ...models import context_window
from ...models._local import LOCAL_MODELS
from ...permissions import Permission
from ...sessions.index import SearchError
from ...sessions.notebooks import ThisNotebook, where
from ...sessions.store import Session, SessionMetadata
from ..bridge.comms import answer_on_the_senders_subshell
from .commands import carry_out, notebook_of
from .displays import PanelDisplays
from .protocol import (
    Events,
    FoundSession,
    Hello,
    KernelMessage,
    PanelContext,
    Reply,
    Snapshot,
    StreamedText,
    ViewMessageAdapter,
    in_transcript,
    to_entry,
    why_invalid,
)
from .setup import model_notes, model_setup, offered_models
from .state import NOTHING, PanelFacts, PanelUpdate, Recheck, TraitChanges, apply, context_of, short
from .transcript import Transcript, history_entries

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
FLUSH_INTERVAL = 1 / 30
"""Seconds between two transcript batches: about 30 a second."""
TEXT_BATCH = 32
TEXT_HOLD = 0.1
"""Streamed text shorter than TEXT_BATCH characters waits up to TEXT_HOLD seconds for more."""
TEXT_REFRESH = (
    ev.PlanEvent,
    ev.QuestionEvent,
    ev.PermissionRequestEvent,
    ev.CompletedEvent,
    ev.StoppedEvent,
    ev.ErrorEvent,
)
"""Events after which a frontend without widgets gets the transcript again."""
URGENT = (*TEXT_REFRESH, ev.AnswerEvent, ev.PermissionResponseEvent, ev.RequestInputTimeoutEvent)
"""Events sent at once rather than with the next batch: the user waits for them."""


class AgentPanel(anywidget.AnyWidget):
    """The panel of one agent. Create it with the agent; show it with :meth:`show`."""

    # Built from js/src/panel (TypeScript) by `npm run build:panel`, part of every build;
    # the sdist and the wheel carry it. js/test/panel-build.test.ts fails when it is stale.
    _esm = STATIC / "panel.js"
    _css = STATIC / "panel.css"

    status = t.Unicode("idle").tag(sync=True)
    """The run's state (idle, running, thinking, tool_executing, waiting_user, …)."""
    detail = t.Unicode("").tag(sync=True)
    """What the state is about: the tool being run, what the agent waits for, a stop message."""
    stop_reason = t.Unicode("").tag(sync=True)
    busy = t.Bool(False).tag(sync=True)
    role = t.Unicode("planner").tag(sync=True)
    roles = t.List(t.Dict()).tag(sync=True)
    """``[{"name", "description"}]``: the roles the selector offers."""
    model_name = t.Unicode("").tag(sync=True)
    model_label = t.Unicode("").tag(sync=True)
    models = t.List(t.Dict()).tag(sync=True)
    """What the model picker lists (the current model first)."""
    model_notes = t.Unicode("").tag(sync=True)
    """What the current model's provider lacks (no images, no caching, unknown price)."""
    """A caption the panel must show (e.g. that the model is a scripted replay)."""
    session_id = t.Unicode("").tag(sync=True)
    sessions = t.List(t.Dict()).tag(sync=True)
    """Saved sessions in the workspace for the session picker: this notebook's first, then
    other notebooks', then those whose notebook is not known; the newest first in each."""
    notebook = t.Unicode("").tag(sync=True)
    """The notebook bridge's description: which notebook, and how edits reach it."""
    bridge_mode = t.Unicode("").tag(sync=True)
    """live, file, connecting, or empty when the agent has no notebook."""
    usage = t.Dict().tag(sync=True)
    context = t.Dict().tag(sync=True)
    """How full the model's context window is (the gauge); empty while the conversation is."""
    max_steps = t.Int(30).tag(sync=True)
    pending_question = t.Unicode("").tag(sync=True)
    pending_approval = t.Unicode("").tag(sync=True)
    running_code = t.Bool(False).tag(sync=True)
    """The agent is running code in this kernel: Stop must also interrupt the kernel."""
    kernel_id = t.Unicode("").tag(sync=True)
    dock = t.Unicode("inline").tag(sync=True)
    """Where the user asked for the panel: inline, or side (the lab extension docks it)."""
    widget_id = t.Unicode("").tag(sync=True)
    """This widget's model id, for the lab extension to make a view of it in the sidebar."""
    sandbox = t.Unicode("").tag(sync=True)
    """What confines the agent's shell commands, in a few words for the header."""
    sandbox_detail = t.Unicode("").tag(sync=True)
    sandboxed = t.Bool(False).tag(sync=True)
    model_ready = t.Bool(True).tag(sync=True)
    """The model can be called (a key was found and not rejected)."""
    model_setup = t.Unicode("").tag(sync=True)
    """Why it cannot yet, in a sentence: the view shows the set-up box (never the key)."""
    pausing = t.Bool(False).tag(sync=True)
    """The user paused the run (it waits at its next step or tool call)."""
    waiting_task = t.Unicode("").tag(sync=True)
    """A task given while the model could not be called (``%agent plan`` before any key):
    the set-up box shows it, and it starts once the model can be called."""
    plan_ready = t.Bool(False).tag(sync=True)
    """The last run ended by submitting a plan, which awaits the user's review."""
    trust = t.Any(None).tag(sync=True)
    """The trust prompt (:class:`~jupyter_agent.config.trust.TrustPrompt`): what trusting the
    workspace's settings would enable; ``None`` when nothing waits for trust."""

    def __init__(
        self,
        agent: Agent,
        *,
        kernel_id: str = "",
        resume: Callable[[str], Agent] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        here: ThisNotebook | None = None,
    ) -> None:
        # The trust prompt is in the first state a view gets: it shows before anything else.
        super().__init__(kernel_id=kernel_id, trust=_trust_prompt(agent))
        self.widget_id = self.model_id
        answer_on_the_senders_subshell(self.comm)
        try:
            self._loop = loop or asyncio.get_running_loop()
        except RuntimeError:
            self._loop = asyncio.get_event_loop_policy().get_event_loop()
        self._resume = resume
        self.here = here
        """The notebook the agent works on (its sessions are listed first; resuming one of
        another notebook asks); set again when the notebook is renamed. None: not known."""
        self._agent: Agent | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self.transcript = Transcript()
        self._flush_handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._last_flush = 0.0
        self.views_seen = 0
        """How many views said hello (a page reload or another display makes one more)."""
        self.made_at = time.monotonic()
        self.received: deque[tuple[float, str]] = deque(maxlen=8)
        """The newest messages the comm delivered (when, what): for a failure's report."""
        self.displays = PanelDisplays(
            self.model_id, self._header, self._notebook_line, lambda: self.views_seen
        )
        self._tool = ""
        self._waiting: tuple[str, str] | None = None
        """The task (and role) ``waiting_task`` shows."""
        self._later: set[asyncio.Task[None]] = set()
        """Commands answered once their work is done (kept, so none is collected early)."""
        self._model_strings: dict[str, str] = {}
        """The picker's choices (shown masked) by what they show: their model strings."""
        self.outbox: Callable[[KernelMessage], None] | None = None
        """Where messages to the views go instead of the comm: a test sets a list's
        ``append`` here to read what a view would receive."""
        self.on_msg(self._on_msg)
        self.bind(agent)

    # --- the agent ---------------------------------------------------------------------

    @property
    def agent(self) -> Agent:
        assert self._agent is not None
        return self._agent

    @property
    def home(self) -> asyncio.AbstractEventLoop:
        """The loop the panel lives on (the agent's): its traits are set there only, a
        magic's refresh (main thread) handed over (``at_home``); traitlets and the
        transcript are not made for two threads at once."""
        return self._loop

    @at_home
    def bind(self, agent: Agent) -> None:
        """Show ``agent`` (a new one after a resume): its history, then its live events."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._agent = agent
        self.transcript = Transcript()
        if agent.running and agent.handle is not None:
            seed = [to_entry(e) for e in agent.handle.events_so_far if in_transcript(e)]
        else:
            seed = history_entries(agent.history, agent)
        for entry in seed:
            self.transcript.add(entry, live=False)
        self._unsubscribe = agent.subscribe(self._on_event)
        if self._cells_changed not in agent.cells.listeners:
            agent.cells.listeners.append(self._cells_changed)
        run = agent.handle
        self.refresh()
        self.busy = agent.running
        self.status = agent.state.value
        self.detail = short(run.stop_message) if run is not None and run.done else ""
        self.stop_reason = (run.stop_reason or "") if run is not None else ""
        self.plan_ready = run is not None and run.done and _ended_with_plan(run.events_so_far)
        self.pending_question = self.pending_approval = ""
        self.pausing = run is not None and not run.done and run.pause_requested
        self.running_code = False
        self.refresh_context()
        self.refresh_notebook()
        self.refresh_sessions()
        if self.views_seen:
            self._post(Snapshot(type="snapshot", view=None, entries=self.transcript.snapshot()))

    def _stop_interrupts_kernel(self) -> bool:
        """Whether Stop must also interrupt the kernel from the frontend (the kernel reads
        no click while a cell runs synchronous code): the agent runs code, or a cell it
        started still runs and Stop interrupts cells (``[cells] on_stop``). With
        ``leave_running`` a cell's run is the user's to keep: only the agent stops."""
        cells = self.agent.cells
        tool = self.agent.tools.get(self._tool) if self._tool else None
        running = tool is not None and Permission.EXECUTE_CODE in tool.permissions
        running = running or bool(cells.running())
        return self.busy and running and cells.policy.on_stop == "interrupt"

    def _cells_changed(self) -> None:
        """A cell the agent started began or ended (on the loop)."""
        if self.busy:
            self.running_code = self._stop_interrupts_kernel()

    @at_home
    def refresh(self) -> None:
        """Show the agent's settings again (after a magic changed its role, model, limits)."""
        agent = self.agent
        self.roles = [{"name": r.name, "description": r.description} for r in agent.roles.values()]
        self.role = agent.role
        self.model_name = agent.model.name
        self.model_label = agent.model.label or ""
        self.session_id = agent.session.id
        self.max_steps = agent.limits.max_steps
        confinement = agent.command_sandbox.status()
        self.sandbox = confinement.summary
        self.sandbox_detail = confinement.detail
        self.sandboxed = confinement.active
        self.trust = _trust_prompt(agent)
        self.refresh_model()

    @at_home
    def refresh_model(self) -> None:
        """Say whether the model can be called, and if not why (the set-up box), and
        what the picker offers."""
        model = self.agent.model
        problem = model_setup(model, headline=True)
        self.model_setup = problem
        self.model_ready = not problem
        if not problem:
            self._start_waiting_task()
        self.model_name = model.name
        self.model_label = model.label or ""
        self.model_notes = model_notes(model)
        self._show_models()
        # Ollama's models join the list once it has answered (in a thread, if it runs).
        LOCAL_MODELS.refresh(self._local_models_changed)

    @at_home
    def keep_task(self, task: str, role: str) -> None:
        """Keep ``task`` (for ``role``) until the model can be called, then start it: a
        first ``%agent plan …`` before any key is not lost."""
        self._waiting = (task, role)
        self.waiting_task = task
        self.refresh_model()

    def _start_waiting_task(self) -> None:
        waiting, self._waiting = self._waiting, None
        self.waiting_task = ""
        if waiting is not None and not self.agent.running:
            task, role = waiting
            self.agent.start(task, role=role)

    def _local_models_changed(self) -> None:
        """From the thread that asked Ollama: list its models, on the loop."""
        schedule(self._loop, self._show_models)

    def _show_models(self) -> None:
        offered = offered_models(self.agent)
        self._model_strings = {choice["id"]: given for given, choice in offered}
        self.models = [dict(choice) for _, choice in offered]

    @at_home
    def refresh_context(self) -> None:
        """Set the gauge from the current or last run's count, else estimate it from what
        the model would see now (a resumed session: no request counted yet)."""
        agent = self.agent
        if not any(m.context is None for m in agent.session.history):
            self.context = {}
            return
        run = agent.handle
        counted = [e for e in run.events_so_far if isinstance(e, ev.ContextEvent)] if run else []
        if counted:
            self.context = dict(context_of(counted[-1]))
            return
        self.context = dict(
            PanelContext(
                used_tokens=agent.context.estimate_idle(agent),
                window=context_window(agent.model, agent.context.policy.window),
                cached_tokens=0,
                estimated=True,
            )
        )

    @at_home
    def refresh_notebook(self) -> None:
        """Show how the agent reaches its notebook (after the bridge connected)."""
        bridge = self.agent.notebook
        if bridge is None:
            self.notebook, self.bridge_mode = "", ""
            return
        self.notebook = bridge.describe()
        self.bridge_mode = getattr(bridge, "mode", "") or ""

    @at_home
    def refresh_sessions(self) -> None:
        """List the saved sessions again: this notebook's first, then other notebooks',
        then those whose notebook is not known (newest first in each)."""
        try:
            saved = Agent.sessions(self.agent.workspace)
        except OSError:
            saved = []
        order = {"here": 0, "other": 1, "unknown": 2}
        listed = [self._saved(m) for m in saved if m.parent_session_id is None]
        listed.sort(key=lambda s: order[s["where"]])  # stable: newest first in each
        self.sessions = listed[:30]

    def _saved(self, meta: SessionMetadata) -> dict[str, Any]:
        """A session as the ``sessions`` trait lists it (a SavedSession)."""
        notebook, place, open_path = notebook_of(self.here, meta.notebook)
        return {
            "id": meta.session_id,
            "title": meta.title or "(untitled)",
            "updated": meta.updated_at,
            "state": meta.state,
            "runs": meta.runs,
            "notebook": notebook,
            "where": place,
            "open_path": open_path,
        }

    # --- events → traits and transcript (on the loop's thread) -----------------------

    def _on_event(self, event: ev.Event) -> None:
        self.displays.add(event)
        update = apply(self._facts(), event)
        if update is not NOTHING:  # most events (streamed text) change no trait
            self._show(update)
        if not in_transcript(event):
            return
        if isinstance(event, ev.RetryEvent):
            self.transcript.drop_partial_turn()
        self.transcript.add(to_entry(event))
        if isinstance(event, URGENT):
            self.flush()
        else:
            self._schedule_flush()
        if isinstance(event, TEXT_REFRESH):
            self.displays.refresh_text()

    def _facts(self) -> PanelFacts:
        """What :func:`apply` reads beside the event (made for every event: kept cheap)."""
        agent = self.agent
        return PanelFacts(
            self._tool,
            not agent.model.is_replay,  # a replay costs nothing: no dollars shown
            agent.session.usage,
            self.context.get("estimated", True),
        )

    def _show(self, update: PanelUpdate) -> None:
        """Assign what an event changed, then look up again what it asks for."""
        self.assign(update.traits)
        if update.tool is not None:
            self._tool = update.tool
        if not update.recheck:
            return
        if Recheck.RUNNING_CODE in update.recheck:
            self.running_code = self._stop_interrupts_kernel()
        if Recheck.SESSIONS in update.recheck:
            self.refresh_sessions()
        if Recheck.CONTEXT in update.recheck:
            self.refresh_context()
        if Recheck.MODEL in update.recheck:
            self.refresh_model()

    def assign(self, traits: TraitChanges) -> None:
        """Set synced traits (what every view shows)."""
        for name, value in traits.items():
            setattr(self, name, value)

    def _schedule_flush(self, delay: float | None = None) -> None:
        if not on_loop(self._loop):  # a magic, on the main thread
            schedule(self._loop, self._schedule_flush, delay)
            return
        if self._flush_handle is not None:
            return
        if delay is None:
            delay = self._last_flush + FLUSH_INTERVAL - time.monotonic()
        if delay <= 0:
            self._flush_handle = self._loop.call_soon(self._flush)
        else:
            self._flush_handle = self._loop.call_later(delay, self._flush)

    def flush(self) -> None:
        """Send the transcript entries gathered so far to every view now."""
        self._flush(force=True)

    def _flush(self, *, force: bool = False) -> None:
        """Send the entries gathered since the last batch (to every view); unless
        ``force``, a trickle of text waits a little for more."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        transcript = self.transcript
        if not transcript.pending:
            return
        now = time.monotonic()
        held = now - transcript.pending_since
        if not force and held < TEXT_HOLD and transcript.pending_is_short_text(TEXT_BATCH):
            # A trickle of text (a model writing slowly): wait for a few words more
            # rather than send each token with a message's overhead.
            self._schedule_flush(min(TEXT_HOLD - held, FLUSH_INTERVAL))
            return
        batch = transcript.take()
        self._last_flush = now
        if len(batch) == 1 and batch[0]["kind"] == "text_delta" and "phase" not in batch[0]:
            self._post(StreamedText(type="text", n=batch[0]["n"], text=batch[0]["text"]))
        else:
            self._post(Events(type="events", entries=batch))

    def _post(self, content: KernelMessage) -> None:
        if self.outbox is not None:
            self.outbox(content)
        elif self.comm is not None:  # else closed
            self.send(content)

    # --- messages from the browser -------------------------------------------------------

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """From the comm (any thread): carried out on the agent's loop."""
        if isinstance(content, dict):
            what = content.get("name") or content.get("type")
            self.received.append((time.monotonic(), str(what)[:40]))
            schedule(self._loop, self.receive, content)

    def receive(self, content: dict[str, Any]) -> None:
        """Carry out a message from a view, as the comm delivers it (on the loop's thread).

        This is the path every view's message takes: validated against the protocol, then
        a ``hello`` is answered with a snapshot and a command with a ``reply`` (at once, or
        when its work is done). A test drives the panel through it, reading what the views
        would get from :attr:`outbox`."""
        try:
            message = ViewMessageAdapter.validate_python(content)
        except ValidationError as exc:
            error = why_invalid(content, exc)
            log.warning("panel: %s", error)
            cid = content.get("id")
            self._post(
                Reply(type="reply", id=cid if isinstance(cid, str) else None, ok=False, error=error)
            )
            return
        if isinstance(message, Hello):
            self._hello(message)
            return
        ok, failure = True, None  # type: tuple[bool, str | None]
        try:
            later = carry_out(self, message)
        except (AgentError, ValueError, KeyError, TypeError) as exc:
            text = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            ok, failure = False, str(text) or type(exc).__name__
        except Exception as exc:
            log.exception("panel command %r failed", message.name)
            ok, failure = False, f"{type(exc).__name__}: {exc}"
        else:
            if later is not None:  # answered when its work is done, off the loop
                task = self._loop.create_task(self._reply_later(message.id, later))
                self._later.add(task)
                task.add_done_callback(self._later.discard)
                return
        self._post(Reply(type="reply", id=message.id, ok=ok, error=failure))

    def _hello(self, message: Hello) -> None:
        """A view rendered (again after a page reload): it gets the transcript so far."""
        self.views_seen += 1
        self.flush()
        self.refresh_sessions()
        entries = self.transcript.snapshot()
        self._post(Snapshot(type="snapshot", view=message.view, entries=entries))

    async def _reply_later(self, cid: str, work: Coroutine[Any, Any, list[FoundSession]]) -> None:
        try:
            found = await work
        except SearchError as exc:
            self._post(Reply(type="reply", id=cid, ok=False, error=str(exc)))
        except Exception as exc:
            log.exception("panel command %s failed", cid)
            self._post(Reply(type="reply", id=cid, ok=False, error=f"{type(exc).__name__}: {exc}"))
        else:
            self._post(Reply(type="reply", id=cid, ok=True, error=None, found=found))

    # --- what commands use (panel_commands.CommandTarget) -----------------------------

    def pending(self) -> tuple[str, str]:
        """The ids of the agent's own question and approval that wait (empty: none)."""
        return self.pending_question, self.pending_approval

    def resume_session(self, session_id: str, here: bool = False) -> None:
        """Show and continue the saved session ``session_id`` in this panel; one of another
        notebook only ``here`` (the user chose to go on with it in this notebook)."""
        if self._resume is None:
            raise ValueError("This panel cannot resume sessions.")
        if self.agent.running:
            raise ValueError("Stop the running agent before resuming another session.")
        if not here:
            self._check_notebook(session_id)
        self.bind(self._resume(session_id))

    def _check_notebook(self, session_id: str) -> None:
        """Refuse to resume a session of another notebook without the user's choice."""
        try:
            notebook = Session.metadata_of(self.agent.workspace, session_id).notebook
        except SessionError:
            return  # the resume itself says what is wrong
        if where(self.here, notebook) == "other":
            raise ValueError(
                f"That session worked on {notebook}, not on this notebook: continue it here "
                f"(its cell references are dropped), or open {notebook}."
            )

    def model_string(self, choice: str) -> str:
        """A picker's choice shows its model string masked; the string itself stayed here."""
        return self._model_strings.get(choice, choice)

    @at_home
    def trusted(self, applied: TrustPrompt) -> None:
        """Say in the transcript what applies now that the user trusted the folder."""
        # A TrustedEntry, as the wire carries it.
        self.transcript.add({"kind": "trusted", "applied": applied.model_dump(mode="json")})
        self._schedule_flush(0)

    # --- showing it --------------------------------------------------------------------

    def _header(self) -> str:
        agent = self.agent
        label = f" — {agent.model.label}" if agent.model.label else ""
        header = f"jupyter_agent · {agent.role} · {agent.model.name}{label}"
        return header + f" · session {agent.session.id}"

    def _notebook_line(self) -> str:
        bridge = self.agent.notebook
        return f"notebook: {bridge.describe()}" if bridge is not None else ""

    def text(self) -> str:
        """The live display's text/plain fallback (see :mod:`._displays`)."""
        return self.displays.text()

    def bundle(self) -> dict[str, Any]:
        return self.displays.bundle()

    def _repr_mimebundle_(self, **_: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.bundle(), {}

    def show(self) -> str:
        """Display a view of the panel under the current cell; returns its display id.
        The display shown before becomes the record of what happened while it was live."""
        return self.displays.show()

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        self.displays.close()
        super().close()


def _trust_prompt(agent: Agent) -> dict[str, Any] | None:
    """The ``trust`` trait: the agent's trust prompt as the wire carries it (a key written
    in the settings file named, not shown: the trait may be saved with the notebook)."""
    prompt = agent.trust_prompt
    if prompt is None:
        return None
    return prompt.hiding(agent.secrets.redact).model_dump(mode="json")


def _ended_with_plan(events: list[ev.Event]) -> bool:
    """Whether a run's events end with it completed on a plan for review."""
    ends = (ev.CompletedEvent, ev.StoppedEvent, ev.ErrorEvent)
    last = next((e for e in reversed(events) if isinstance(e, ends)), None)
    return isinstance(last, ev.CompletedEvent) and last.plan_ready
