/**
 * The agent side panel: the active notebook's agent panel, docked in
 * JupyterLab's right sidebar.
 *
 * The panel itself is the kernel's anywidget (jupyter_agent.jupyter.panel.widget);
 * this widget only finds it and renders another view of it with the
 * notebook's own widget renderer, so inline and docked views show one state.
 * It follows the active notebook, and asks that notebook's kernel for its
 * panel (which loads the extension there when needed), unless a view of that
 * panel already spoke through the agent's control channel: then its id is known
 * here, and the sidebar shows it at once, even while the kernel runs a cell.
 */
import type { ISessionContext } from '@jupyterlab/apputils';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { MimeModel, type IRenderMime } from '@jupyterlab/rendermime';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { LabIcon } from '@jupyterlab/ui-components';
import { Signal } from '@lumino/signaling';
import { Panel, Widget } from '@lumino/widgets';

import { PANEL_EXPRESSION, WIDGET_VIEW_MIME, panelModelId } from './model';
import type { IKernelControls } from './tokens';

/** The sidebar's widget id, also its layout-restorer name. */
export const SIDEBAR_ID = 'jupyter-agent-sidebar';

/** Views of the panel inside this attribute know they are docked (panel.js). */
const SIDE_ATTRIBUTE = 'data-jupyter-agent-side';

/** The panel's message input (panel.js). */
const MESSAGE_INPUT = 'textarea.ja-message';

/** How long an activation waits for the panel's view to focus its input. */
const FOCUS_WAIT_MS = 15000;

export const agentIcon = new LabIcon({
  name: 'jupyter-agent:agent',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<g class="jp-icon3" fill="#616161">' +
    '<path d="M11 2h2v3h4a3 3 0 0 1 3 3v9a3 3 0 0 1-3 3H7a3 3 0 0 1-3-3V8a3 3 0 0 1 3-3h4zM7 7a1 1 0 0 0-1 1v9a1 1 0 0 0 1 1h10a1 1 0 0 0 1-1V8a1 1 0 0 0-1-1z"/>' +
    '<circle cx="9" cy="12" r="1.5"/><circle cx="15" cy="12" r="1.5"/>' +
    '<path d="M1 10h2v5H1zM21 10h2v5h-2z"/></g></svg>'
});

export class AgentSidebar extends Panel {
  constructor(
    notebooks: INotebookTracker,
    controls: IKernelControls | null = null
  ) {
    super();
    this._notebooks = notebooks;
    this._controls = controls;
    this.id = SIDEBAR_ID;
    this.addClass('jp-AgentSidebar');
    this.node.setAttribute(SIDE_ATTRIBUTE, '');
    this.title.icon = agentIcon;
    this.title.caption = 'Agent';
    this._header.addClass('jp-AgentSidebar-header');
    this._message.addClass('jp-AgentSidebar-message');
    this._message.node.setAttribute('role', 'status');
    this.addWidget(this._header);
    this.addWidget(this._message);
    notebooks.currentChanged.connect(this._onCurrentChanged, this);
  }

  /** The notebook whose agent this shows, if any. */
  get notebook(): NotebookPanel | null {
    return this._notebook;
  }

  /**
   * Whether activating the sidebar (its tab, 'Agent: Open panel') focuses the panel's
   * message input; off while a run docks itself (`%agent --side`), so the notebook the
   * user works in keeps the focus.
   */
  focusOnActivate = true;

  /**
   * Show `notebook`'s agent panel; `modelId` when the caller knows it (a view
   * asked to dock), else the kernel is asked. Showing the same one again is a
   * no-op.
   */
  async showAgentOf(
    notebook: NotebookPanel | null,
    modelId?: string
  ): Promise<void> {
    // Already shown, or on its way: a view asking to dock again (every render of
    // an inline view of a docked panel does) changes nothing.
    if (
      notebook !== null &&
      notebook === this._notebook &&
      (modelId === undefined
        ? this._modelId !== null || this._pending
        : modelId === this._modelId)
    ) {
      return;
    }
    const turn = ++this._turn;
    this._setNotebook(notebook);
    this._clearView();
    if (notebook === null) {
      this._say('Open a notebook to work with its agent.');
      return;
    }
    this._pending = true;
    this._modelId = modelId ?? null;
    const name = notebook.context.localPath.split('/').pop() ?? '';
    try {
      await notebook.sessionContext.ready;
      const kernel = notebook.sessionContext.session?.kernel ?? null;
      if (kernel === null) {
        throw new Error(`${name} has no kernel: start one to use its agent`);
      }
      modelId ??= this._controls?.panelOf(kernel.id) ?? undefined;
      if (modelId === undefined) {
        this._say(
          kernel.status === 'busy'
            ? `Waiting for ${name}'s kernel to finish the running cell…`
            : `Starting the agent in ${name}'s kernel…`
        );
        modelId = await askForPanel(kernel);
      }
      if (turn !== this._turn) {
        return; // another notebook became active meanwhile
      }
      this._modelId = modelId;
      const rendermime = notebook.content.rendermime;
      if (!rendermime.mimeTypes.includes(WIDGET_VIEW_MIME)) {
        throw new Error(
          'showing the agent panel needs Jupyter widgets (ipywidgets) where Jupyter runs'
        );
      }
      const view = rendermime.createRenderer(WIDGET_VIEW_MIME);
      const data = { model_id: modelId, version_major: 2, version_minor: 1 };
      await view.renderModel(
        new MimeModel({ data: { [WIDGET_VIEW_MIME]: data } })
      );
      if (turn !== this._turn) {
        view.dispose();
        return;
      }
      this._say('');
      this._view = view;
      view.addClass('jp-AgentSidebar-view');
      this.addWidget(view);
    } catch (error) {
      if (turn === this._turn) {
        this._modelId = null;
        this._say(error instanceof Error ? error.message : String(error));
      }
    } finally {
      if (turn === this._turn) {
        this._pending = false;
      }
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._clearView();
    this._stopFocusWait();
    Signal.disconnectReceiver(this);
    super.dispose();
  }

  /** Activated: focus the message input once the panel's view is there. */
  protected onActivateRequest(): void {
    if (this.focusOnActivate) {
      this._focusInput();
    }
  }

  /**
   * Focus the panel's message input, now or when the view that holds it arrives (the
   * kernel may still be starting the agent); a later activation, or the user focusing
   * something else in the sidebar, cancels the wait.
   */
  private _focusInput(): void {
    this._stopFocusWait();
    const tryFocus = (): boolean => {
      const input = this.node.querySelector<HTMLElement>(MESSAGE_INPUT);
      if (input === null || !this.isVisible) {
        return false;
      }
      input.focus();
      return true;
    };
    if (tryFocus()) {
      return;
    }
    const observer = new MutationObserver(() => {
      const active = document.activeElement;
      if (
        active !== null &&
        active !== document.body &&
        this.node.contains(active)
      ) {
        this._stopFocusWait(); // the user chose something in the sidebar meanwhile
      } else if (tryFocus()) {
        this._stopFocusWait();
      }
    });
    observer.observe(this.node, { childList: true, subtree: true });
    const timer = setTimeout(() => this._stopFocusWait(), FOCUS_WAIT_MS);
    this._focusWait = { observer, timer };
    // The view may be there already while the sidebar is still being shown.
    requestAnimationFrame(() => {
      if (this._focusWait?.observer === observer && tryFocus()) {
        this._stopFocusWait();
      }
    });
  }

  private _stopFocusWait(): void {
    if (this._focusWait !== null) {
      this._focusWait.observer.disconnect();
      clearTimeout(this._focusWait.timer);
      this._focusWait = null;
    }
  }

  protected onAfterShow(): void {
    // Hidden, the sidebar stops following; shown again, it catches up.
    void this.showAgentOf(this._notebooks.currentWidget);
  }

  private _onCurrentChanged(
    _: INotebookTracker,
    notebook: NotebookPanel | null
  ): void {
    // The tracker keeps the last notebook current while another kind of
    // widget has the focus, so the panel stays until a notebook replaces it.
    if (this.isVisible && notebook !== null) {
      void this.showAgentOf(notebook);
    }
  }

  private _setNotebook(notebook: NotebookPanel | null): void {
    if (notebook === this._notebook) {
      return;
    }
    const old = this._notebook;
    if (old !== null) {
      old.sessionContext.statusChanged.disconnect(this._onStatus, this);
      old.sessionContext.kernelChanged.disconnect(this._onKernelChanged, this);
      old.disposed.disconnect(this._onNotebookDisposed, this);
    }
    this._notebook = notebook;
    this._restarting = false;
    this._header.node.textContent = notebook
      ? `Agent of ${notebook.context.localPath.split('/').pop()}`
      : 'Agent';
    if (notebook !== null) {
      notebook.sessionContext.statusChanged.connect(this._onStatus, this);
      notebook.sessionContext.kernelChanged.connect(
        this._onKernelChanged,
        this
      );
      notebook.disposed.connect(this._onNotebookDisposed, this);
    }
  }

  /** A restart ends the kernel's agent; once the new kernel is idle, show its agent. */
  private _onStatus(context: ISessionContext, status: Kernel.Status): void {
    if (status === 'restarting' || status === 'autorestarting') {
      this._restarting = true;
      this._clearView();
      this._say('The kernel is restarting…');
    } else if (this._restarting && status === 'idle') {
      this._restarting = false;
      this._reshow(context);
    }
  }

  private _onKernelChanged(context: ISessionContext): void {
    this._clearView();
    this._reshow(context);
  }

  private _reshow(context: ISessionContext): void {
    const notebook = this._notebook;
    if (
      notebook !== null &&
      notebook.sessionContext === context &&
      this.isVisible
    ) {
      void this.showAgentOf(notebook);
    } else {
      this._say('Show this panel again to see the agent of the new kernel.');
    }
  }

  private _onNotebookDisposed(): void {
    const next = this._notebooks.currentWidget;
    void this.showAgentOf(next === this._notebook ? null : next);
  }

  private _clearView(): void {
    this._view?.dispose();
    this._view = null;
    this._modelId = null;
  }

  private _say(text: string): void {
    this._message.node.textContent = text;
    this._message.setHidden(text === '');
  }

  private _notebooks: INotebookTracker;
  private _controls: IKernelControls | null;
  private _notebook: NotebookPanel | null = null;
  private _view: IRenderMime.IRenderer | null = null;
  private _modelId: string | null = null;
  private _turn = 0;
  /** A view is being made for `_modelId` (or the id is being asked for). */
  private _pending = false;
  private _restarting = false;
  private _focusWait: {
    observer: MutationObserver;
    timer: ReturnType<typeof setTimeout>;
  } | null = null;
  private _header = new Widget();
  private _message = new Widget();
}

/** Ask `kernel` for its agent panel's model id (made, with the extension loaded, if needed). */
async function askForPanel(kernel: Kernel.IKernelConnection): Promise<string> {
  const future = kernel.requestExecute({
    code: '',
    silent: true,
    store_history: false,
    allow_stdin: false,
    stop_on_error: false,
    user_expressions: { jupyter_agent: PANEL_EXPRESSION }
  });
  // Done once the reply and the kernel's idle status have arrived; the panel's
  // comm_open came before that idle, and the kernel connection handles its
  // messages in order, so the widget model exists by now.
  const reply = (await future.done) as KernelMessage.IExecuteReplyMsg;
  const content = reply.content;
  if (content.status !== 'ok') {
    throw new Error(`the kernel could not start the agent (${content.status})`);
  }
  return panelModelId(content.user_expressions['jupyter_agent']);
}
