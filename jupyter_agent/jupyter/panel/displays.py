"""Where the panel is shown: one display per ``%agent`` cell, the newest live, the others
records of what happened while they were live.

The live display is an ``ipywidgets.Output`` (the *slot*) holding a view of the panel.
When a later cell shows the panel, the display shown before is frozen: its slot's
content becomes a static record of the runs started while it was live (text/plain and
escaped text/html, :mod:`~jupyter_agent.jupyter.panel.record`), and the same record replaces
the display itself (``update_display_data``). JupyterLab routes a display update only to
the cell whose request is running, so the slot is what a widget frontend sees change;
nbclient maps display ids across cells, so the update is what it stores.

Without a widget frontend (nbconvert, nbclient, papermill) the live display's
``text/plain`` is the transcript of its own runs as
:class:`~jupyter_agent.agent.render.TextRenderer` writes it (with the record's HTML beside it),
refreshed after a plan, a question, an approval request and the end of a run, as long as
no view has said hello. No message tells the kernel that a frontend cannot show widgets;
a view that renders says hello, so the fallback is refreshed only while none has, and
only once the display is TEXT_GRACE seconds old or at a cell's start or end (a view
rendering in JupyterLab says hello well within that). A widget frontend never gets those
updates: re-sending a widget's display re-creates its views, which would drop what the
user types.
"""

from __future__ import annotations

import io
import time
import uuid
from collections.abc import Callable
from typing import Any

from ... import events as ev
from ...agent.render import TextRenderer
from .record import Recorder, record_html

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
TEXT_FALLBACK_LIMIT = 20_000
"""Characters of transcript kept in the text/plain fallback (the end of it)."""
TEXT_GRACE = 2.0
"""Seconds a new display has to say hello (be a widget) before its text is refreshed."""


class PanelDisplays:
    """The displays of one panel (whose model is ``model_id``): ``header()`` names the
    agent, ``notebook()`` its notebook (for the text), ``views_seen()`` counts the views
    that said hello."""

    def __init__(
        self,
        model_id: str,
        header: Callable[[], str],
        notebook: Callable[[], str],
        views_seen: Callable[[], int],
    ) -> None:
        self._model_id = model_id
        self._header = header
        self._notebook = notebook
        self._views_seen = views_seen
        self.ids: list[str] = []
        """Every display shown, oldest first; the last is the live one."""
        self._slot: Any = None
        """The live display's ipywidgets.Output, which holds the panel's view."""
        self._slots: list[Any] = []
        self._record = Recorder()
        """The events shown since the live display was shown (its record when frozen)."""
        self._record_start = 0
        """Where the live display's transcript begins in the text transcript."""
        self._shown_at = 0.0
        self._shell: Any = None
        self._text_stale = False
        self._text = io.StringIO()
        self._renderer = TextRenderer(self._text, color=False)

    def add(self, event: ev.Event) -> None:
        """An event of the agent: into the text transcript and the live display's record."""
        self._renderer(event)
        self._record(event)

    def text(self) -> str:
        """The live display's text/plain fallback: a header and the transcript of what
        happened since it was shown (all of it before any display)."""
        body = self._text.getvalue()[self._record_start :]
        if len(body) > TEXT_FALLBACK_LIMIT:
            body = "…" + body[-TEXT_FALLBACK_LIMIT:]
        if not body:
            body = "(The live panel needs a widget frontend; this text shows the transcript.)\n"
        notebook = self._notebook()
        header = f"{self._header()}\n{notebook}" if notebook else self._header()
        return f"{header}\n{body}".rstrip("\n")

    def bundle(self) -> dict[str, Any]:
        """The panel's own display bundle: its text and its widget view."""
        return {
            "text/plain": self.text(),
            WIDGET_MIME: {"version_major": 2, "version_minor": 1, "model_id": self._model_id},
        }

    def show(self) -> str:
        """Display a view of the panel under the current cell; returns its display id.

        The display shown before becomes the record of what happened while it was live."""
        import ipywidgets
        from IPython import get_ipython
        from IPython.display import display

        self._freeze()
        display_id = uuid.uuid4().hex
        self.ids.append(display_id)
        self._record = Recorder()
        self._record_start = self._text.tell()
        self._slot = ipywidgets.Output()
        self._slots.append(self._slot)
        self._slot.outputs = (
            {"output_type": "display_data", "data": self.bundle(), "metadata": {}},
        )
        self._shown_at = time.monotonic()
        display(self._live_bundle(), raw=True, display_id=display_id)
        shell = get_ipython()
        if shell is not None and self._shell is None:
            self._shell = shell
            shell.events.register("pre_run_cell", self._on_cell)
            shell.events.register("post_run_cell", self._on_cell)
        return display_id

    def _live_bundle(self, *, html: bool = False) -> dict[str, Any]:
        """The live display: its slot (a widget frontend shows the panel in it) and its text
        (with ``html``, also the record so far, for a frontend without widgets)."""
        bundle: dict[str, Any] = {"text/plain": self.text()}
        if html:
            bundle["text/html"] = record_html(self._record.events, header=self._header())
        model_id = self._slot.model_id if self._slot is not None else self._model_id
        bundle[WIDGET_MIME] = {"version_major": 2, "version_minor": 1, "model_id": model_id}
        return bundle

    def _freeze(self) -> None:
        """Replace the live display, if any, by the record of what happened while it was
        live: in its slot (a widget frontend) and as the display itself (nbclient)."""
        if not self.ids or self._slot is None:
            return
        note = "The run goes on in the live panel below." if self._record.running else ""
        text = self.text() + (f"\n({note})" if note else "")
        html = record_html(self._record.events, header=self._header(), note=note)
        bundle = {"text/plain": text, "text/html": html}
        self._slot.outputs = ({"output_type": "display_data", "data": bundle, "metadata": {}},)
        self._slot = None
        self._update_display(self.ids[-1], bundle)

    def _text_fallback_wanted(self) -> bool:
        return bool(self.ids) and not self._views_seen() and not widget_frontend_connected()

    def refresh_text(self) -> None:
        """The transcript changed in a way a reader without widgets should see."""
        self._text_stale = True
        if self._text_fallback_wanted() and time.monotonic() - self._shown_at >= TEXT_GRACE:
            self._publish_text()

    def _on_cell(self, *_: Any) -> None:
        # nbclient reads only the messages of the cell it runs: a transcript refreshed
        # between cells, or during one too early, reaches it at the next cell's start or
        # this cell's end.
        if self._text_stale and self._text_fallback_wanted():
            self._text_stale = False
            self._publish_text()

    def _publish_text(self) -> None:
        if self._slot is not None:
            self._update_display(self.ids[-1], self._live_bundle(html=True))

    def _update_display(self, display_id: str, bundle: dict[str, Any]) -> None:
        from IPython import get_ipython
        from IPython.display import update_display

        # The agent's task carries the parent header of the cell that started it, long
        # finished; send the update as part of the latest request instead (e.g. a cell
        # running ``await h.wait()``), which is the one a client is listening to.
        pub: Any = getattr(self._shell or get_ipython(), "display_pub", None)
        latest = getattr(pub, "_parent_header_global", None)  # ipykernel ≥ 6.26
        token = pub.set_thread_parent(latest) if latest else None
        try:
            update_display(bundle, raw=True, display_id=display_id)
        finally:
            if token is not None:
                pub.reset_thread_parent(token)

    def close(self) -> None:
        if self._shell is not None:
            self._shell.events.unregister("pre_run_cell", self._on_cell)
            self._shell.events.unregister("post_run_cell", self._on_cell)
            self._shell = None
        for slot in self._slots:
            slot.close()
        self._slots.clear()
        self._slot = None


def widget_frontend_connected() -> bool:
    """Whether a widget manager opened ipywidgets' control comm to this kernel (JupyterLab
    does when it restores widgets, e.g. after a page reload; not on first render)."""
    import ipywidgets

    return getattr(ipywidgets.Widget, "_control_comm", None) is not None
