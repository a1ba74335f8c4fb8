/**
 * The agent's control channel to a kernel: what the panel and the bridge send to the
 * kernel goes as `comm_msg`s over one kernel subshell (JEP 91) of the agent's own, which
 * the kernel reads on a thread of its own while the user's cell runs synchronous code.
 *
 * One subshell per kernel, made once the kernel has said (kernel_info) that it has
 * subshells, made again after a restart (the old one died with the process), deleted
 * when the connection goes. Messages sent before it exists wait in order; a kernel
 * without subshells (ipykernel < 7) gets them on its main shell, as comms do.
 * JupyterLab's own `commsOverSubshells` is not relied on: its default varies.
 */
import { KernelMessage, type Kernel } from '@jupyterlab/services';
import { type JSONObject, PromiseDelegate } from '@lumino/coreutils';
import { Signal } from '@lumino/signaling';

import type { IKernelControl, IKernelControls, SubshellStatus } from './tokens';

/** How long the kernel may take to make the agent's subshell (ms). */
export const SUBSHELL_TIMEOUT_MS = 10_000;

export class KernelControl implements IKernelControl {
  constructor(readonly kernel: Kernel.IKernelConnection) {
    kernel.statusChanged.connect(this._onStatus, this);
    kernel.connectionStatusChanged.connect(this._onConnection, this);
    kernel.disposed.connect(this._onDisposed, this);
    // The first kernel_info: the one the connection asked for as it connected.
    void this._open(kernel.info);
  }

  get subshell(): SubshellStatus {
    return this._opening ? 'pending' : this._subshellId !== null;
  }

  get known(): Promise<boolean> {
    return this._known.promise;
  }

  get isDisposed(): boolean {
    return this.kernel.isDisposed;
  }

  send(commId: string, data: JSONObject): void {
    this._queue.push({ commId, data });
    this._flush();
  }

  get panel(): string | null {
    return this._panel;
  }

  sawPanel(commId: string): void {
    this._panel = commId;
  }

  /** Find out whether the kernel has subshells, then make the agent's; send what waits. */
  private async _open(info: Promise<unknown>): Promise<void> {
    const attempt = ++this._attempt;
    if (!this._opening) {
      this._opening = true;
      this._known = new PromiseDelegate<boolean>();
    }
    let id: string | null = null;
    try {
      await info;
      if (attempt === this._attempt && this.kernel.supportsSubshells) {
        id = await this._createSubshell();
      }
    } catch (error) {
      console.warn('jupyter-agent: no subshell; using the main shell', error);
    }
    if (attempt !== this._attempt) {
      return; // a restart or disposal came first: that subshell died or goes unused
    }
    this._subshellId = id;
    this._opening = false;
    this._known.resolve(id !== null);
    this._flush();
  }

  /**
   * A new subshell's id, or null: an error reply, or none within SUBSHELL_TIMEOUT_MS
   * (the messages waiting then go on the main shell; a subshell made later is deleted).
   */
  private async _createSubshell(): Promise<string | null> {
    const created = this.kernel.requestCreateSubshell({}).done;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<null>(resolve => {
      timer = setTimeout(() => resolve(null), SUBSHELL_TIMEOUT_MS);
    });
    const reply = await Promise.race([created, late]);
    clearTimeout(timer);
    if (reply === null) {
      console.warn(
        'jupyter-agent: the kernel made no subshell in time; using the main shell'
      );
      void created.then(
        made => this._delete(made.content.subshell_id || null),
        () => undefined
      );
      return null;
    }
    // An error reply has no id: the main shell then.
    return reply.content.subshell_id || null;
  }

  private _delete(id: string | null): void {
    if (id === null || this.kernel.isDisposed) {
      return;
    }
    try {
      this.kernel.requestDeleteSubshell({ subshell_id: id });
    } catch {
      // the kernel is gone
    }
  }

  private _flush(): void {
    if (this._opening || this.kernel.isDisposed) {
      return;
    }
    for (const { commId, data } of this._queue.splice(0)) {
      // As @jupyterlab/services' CommHandler.send builds a comm_msg.
      const msg = KernelMessage.createMessage<
        KernelMessage.ICommMsgMsg<'shell'>
      >({
        msgType: 'comm_msg',
        channel: 'shell',
        username: this.kernel.username,
        session: this.kernel.clientId,
        subshellId: this._subshellId ?? this.kernel.subshellId,
        content: { comm_id: commId, data }
      });
      try {
        this.kernel.sendShellMessage(msg, false, true);
      } catch (error) {
        console.warn('jupyter-agent: could not send to the kernel', error);
      }
    }
  }

  private _onStatus(_: Kernel.IKernelConnection, status: Kernel.Status): void {
    if (status === 'restarting' || status === 'autorestarting') {
      // Nothing may be sent now: the connection drops what it holds as it restarts.
      ++this._attempt;
      this._subshellId = null;
      this._panel = null; // its widget died with the process
      this._restarted = true;
      if (!this._opening) {
        this._opening = true;
        this._known = new PromiseDelegate<boolean>();
      }
    }
  }

  private _onConnection(
    _: Kernel.IKernelConnection,
    status: Kernel.ConnectionStatus
  ): void {
    if (this._restarted && status === 'connected') {
      // `kernel.info` is the first kernel's: ask the new one (it may be another ipykernel).
      this._restarted = false;
      void this._open(this.kernel.requestKernelInfo());
    }
  }

  private _onDisposed(kernel: Kernel.IKernelConnection): void {
    ++this._attempt;
    const id = this._subshellId;
    this._subshellId = null;
    this._queue = [];
    Signal.disconnectReceiver(this);
    if (id !== null && kernel.status !== 'dead') {
      // The connection emits `disposed` before it closes its socket, so the request
      // still goes out; the kernel may be gone already, hence no more than a try.
      try {
        kernel.requestDeleteSubshell({ subshell_id: id });
      } catch {
        // gone
      }
    }
  }

  private _queue: { commId: string; data: JSONObject }[] = [];
  private _opening = false;
  private _known = new PromiseDelegate<boolean>();
  private _subshellId: string | null = null;
  /** Counts openings, restarts and disposal: a late reply to an old one is ignored. */
  private _attempt = 0;
  private _restarted = false;
  private _panel: string | null = null;
}

/** The control channels of this page, one per kernel id. */
export class KernelControls implements IKernelControls {
  of(kernel: Kernel.IKernelConnection): KernelControl {
    const known = this._controls.get(kernel.id);
    // A notebook and a console may hold two connections to one kernel: either carries
    // the subshell; a new one is made only when that connection has gone.
    if (known !== undefined && !known.isDisposed) {
      return known;
    }
    const control = new KernelControl(kernel);
    this._controls.set(kernel.id, control);
    kernel.disposed.connect(() => {
      if (this._controls.get(kernel.id) === control) {
        this._controls.delete(kernel.id);
      }
    });
    return control;
  }

  panelOf(kernelId: string): string | null {
    const control = this._controls.get(kernelId);
    return control !== undefined && !control.isDisposed ? control.panel : null;
  }

  private _controls = new Map<string, KernelControl>();
}
