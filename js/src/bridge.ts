/**
 * The notebook bridge's kernel side in the browser: registers the
 * `jupyter_agent` comm target on the kernel of every notebook (again after a
 * kernel change or restart), accepts a comm only for the notebook whose path
 * the kernel names, and answers its requests through the dispatch table.
 */
import type { ISessionContext } from '@jupyterlab/apputils';
import type { IConsoleTracker } from '@jupyterlab/console';
import type { DocumentRegistry } from '@jupyterlab/docregistry';
import type {
  INotebookModel,
  INotebookTracker,
  NotebookPanel
} from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { type JSONObject, UUID } from '@lumino/coreutils';
import type { IDisposable } from '@lumino/disposable';
import { Signal } from '@lumino/signaling';

import { type BridgeError, BridgeErrors } from './errors';
import {
  DEFERRED_PING_MS,
  OperationTable,
  defersPing,
  isAddressedTo,
  notebookFor
} from './model';
import {
  type ISaveRoute,
  registerCoreOperations,
  registerNotebookOperations
} from './operations';
import type { BridgeEvent } from './protocol';
import {
  COMM_TARGET,
  type Frontend,
  type IAgentBridge,
  type IKernelControl,
  type IKernelControls,
  type INotebookTarget,
  type IOpenData,
  type OperationHandler
} from './tokens';

type CommOpenCallback = (
  comm: Kernel.IComm,
  msg: KernelMessage.ICommOpenMsg
) => void;

/** What the bridge keeps per kernel connection it registered on. */
interface IKernelEntry {
  /** The registered callback: one per connection, so registering twice is impossible. */
  readonly callback: CommOpenCallback;
  /** Set on restart; the target is registered again once the connection is back. */
  stale: boolean;
  /** Accepted comms on this connection; a restart or disposal drops them. */
  readonly channels: Set<Channel>;
}

/** An accepted comm, bound to one notebook. */
class Channel {
  /** `_control`: the kernel's control channel, for replies; null: the comm's own. */
  constructor(
    readonly comm: Kernel.IComm,
    readonly target: INotebookTarget,
    private readonly _forget: (channel: Channel) => void,
    private readonly _control: (() => IKernelControl) | null
  ) {
    target.context.disposed.connect(this._onContextDisposed, this);
    target.context.pathChanged.connect(this._onPathChanged, this);
  }

  /** Close the comm from this side, telling the kernel why. */
  close(error: BridgeError): void {
    if (!this.comm.isDisposed) {
      try {
        this.comm.close(error.body() as JSONObject);
      } catch {
        // The kernel connection went first; nothing left to tell.
      }
    }
    this.drop();
  }

  /** Forget the channel without messaging the kernel (closed by the kernel, or gone). */
  drop(): void {
    Signal.disconnectReceiver(this);
    this._forget(this);
  }

  send(data: JSONObject): void {
    if (this.comm.isDisposed) {
      return;
    }
    try {
      // Over the agent's subshell, a reply reaches the kernel while a cell runs.
      if (this._control) {
        this._control().send(this.comm.commId, data);
      } else {
        this.comm.send(data);
      }
    } catch (error) {
      console.warn(`${COMM_TARGET}: could not send a reply`, error);
    }
  }

  /** The notebook was renamed or moved: the kernel names it by its new path from now. */
  private _onPathChanged(): void {
    const event: BridgeEvent = 'renamed';
    this.send({ event, path: this.target.path });
  }

  private _onContextDisposed(): void {
    this.close(BridgeErrors.notebook_closed());
  }
}

export class NotebookBridge implements IAgentBridge, IDisposable {
  constructor(options: NotebookBridge.IOptions) {
    this.version = options.version;
    this._notebooks = options.notebooks;
    this._controls = options.controls ?? null;
    registerCoreOperations(
      this._table,
      this.version,
      options.frontend,
      options.serverRoot
    );
    registerNotebookOperations(this._table, options.saveRoute ?? null);

    this._notebooks.forEach(panel => this._watch(panel.sessionContext));
    this._notebooks.widgetAdded.connect(
      (_, panel) => this._watch(panel.sessionContext),
      this
    );
    // Only the first connection of a browser tab to a kernel handles comms
    // (KernelManager.connectTo), and one without our target closes the comm.
    // A console on the notebook's kernel may be that connection (page reload
    // restores widgets in any order), so register there too; the lookup below
    // is by kernel id, so it still finds the notebook.
    if (options.consoles) {
      const consoles = options.consoles;
      consoles.forEach(panel => this._watch(panel.sessionContext));
      consoles.widgetAdded.connect(
        (_, panel) => this._watch(panel.sessionContext),
        this
      );
    }
  }

  readonly version: string;

  get operations(): readonly string[] {
    return this._table.operations;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  registerOperation(op: string, handler: OperationHandler): IDisposable {
    return this._table.register(op, handler);
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    for (const [kernel, entry] of this._kernels) {
      for (const channel of [...entry.channels]) {
        channel.close(BridgeErrors.notebook_closed());
      }
      if (!kernel.isDisposed) {
        kernel.removeCommTarget(COMM_TARGET, entry.callback);
      }
    }
    this._kernels.clear();
    Signal.disconnectReceiver(this);
  }

  /** Follow a session context's kernel: the current one and every later one. */
  private _watch(sessionContext: ISessionContext): void {
    // Views of one notebook share its context, hence its session context.
    if (this._isDisposed || this._sessions.has(sessionContext)) {
      return;
    }
    this._sessions.add(sessionContext);
    sessionContext.kernelChanged.connect(this._onKernelChanged, this);
    this._attach(sessionContext.session?.kernel ?? null);
  }

  private _onKernelChanged(
    _: ISessionContext,
    change: { newValue: Kernel.IKernelConnection | null }
  ): void {
    // The old connection is disposed by its session; _onKernelDisposed cleans up.
    this._attach(change.newValue);
  }

  private _attach(kernel: Kernel.IKernelConnection | null): void {
    if (kernel === null || kernel.isDisposed || this._kernels.has(kernel)) {
      return;
    }
    const entry: IKernelEntry = {
      callback: (comm, msg) => this._onCommOpen(kernel, entry, comm, msg),
      stale: false,
      channels: new Set()
    };
    this._kernels.set(kernel, entry);
    // A no-op on a connection that does not handle comms (another one in this
    // tab does, and it is registered through its own widget).
    kernel.registerCommTarget(COMM_TARGET, entry.callback);
    kernel.statusChanged.connect(this._onKernelStatus, this);
    kernel.connectionStatusChanged.connect(this._onConnectionStatus, this);
    kernel.disposed.connect(this._onKernelDisposed, this);
  }

  private _onKernelStatus(
    kernel: Kernel.IKernelConnection,
    status: Kernel.Status
  ): void {
    const entry = this._kernels.get(kernel);
    if (entry && (status === 'restarting' || status === 'autorestarting')) {
      // The kernel's comms die with it (the connection disposes them).
      entry.stale = true;
      for (const channel of [...entry.channels]) {
        channel.drop();
      }
    }
  }

  private _onConnectionStatus(
    kernel: Kernel.IKernelConnection,
    status: Kernel.ConnectionStatus
  ): void {
    const entry = this._kernels.get(kernel);
    if (entry && entry.stale && status === 'connected') {
      // services 7.6 keeps the target registry across a restart; replacing
      // our own callback is idempotent and covers a connection that does not.
      entry.stale = false;
      kernel.removeCommTarget(COMM_TARGET, entry.callback);
      kernel.registerCommTarget(COMM_TARGET, entry.callback);
    }
  }

  private _onKernelDisposed(kernel: Kernel.IKernelConnection): void {
    const entry = this._kernels.get(kernel);
    if (entry) {
      for (const channel of [...entry.channels]) {
        channel.drop();
      }
      this._kernels.delete(kernel);
    }
  }

  /**
   * A kernel opened a comm to our target. Must not return a promise: the
   * connection pauses all its message processing until such a promise settles.
   */
  private _onCommOpen(
    kernel: Kernel.IKernelConnection,
    entry: IKernelEntry,
    comm: Kernel.IComm,
    msg: KernelMessage.ICommOpenMsg
  ): void {
    const data = (msg.content.data ?? {}) as IOpenData;
    const kernelPath = typeof data.path === 'string' ? data.path : '';
    const context = this._findContext(kernel.id, kernelPath);
    if (context === null) {
      console.warn(
        `${COMM_TARGET}: refusing a comm for ${JSON.stringify(kernelPath)}: ` +
          'no notebook on this kernel has that path'
      );
      try {
        comm.close(BridgeErrors.path_mismatch().body() as JSONObject);
      } catch {
        // The connection is gone already.
      }
      return;
    }
    const notebooks = this._notebooks;
    const target: INotebookTarget = {
      get path() {
        return context.path;
      },
      instance: UUID.uuid4(),
      protocol: typeof data.protocol === 'number' ? data.protocol : 0,
      context,
      get panel() {
        return (
          notebooks.find(p => p.context === context && !p.isDisposed) ?? null
        );
      }
    };
    const controls = this._controls;
    const channel = new Channel(
      comm,
      target,
      c => entry.channels.delete(c),
      controls && (() => controls.of(kernel))
    );
    entry.channels.add(channel);
    comm.onMsg = msg => {
      // Not awaited, on purpose (see above): an operation that waits for
      // kernel output (running a cell) would otherwise wait for itself.
      const parent = msg.parent_header as Partial<KernelMessage.IHeader>;
      void this._answer(
        channel,
        msg.content.data,
        defersPing(msg.content.data, parent.session, kernel.clientId)
      );
    };
    comm.onClose = () => channel.drop();
  }

  private async _answer(
    channel: Channel,
    data: unknown,
    deferred: boolean
  ): Promise<void> {
    if (!isAddressedTo(data, channel.target.instance ?? '')) {
      return; // for the same notebook in another browser tab
    }
    if (deferred) {
      await new Promise(resolve => setTimeout(resolve, DEFERRED_PING_MS));
    }
    const reply = await this._table.dispatch(data, channel.target);
    channel.send(reply as JSONObject);
  }

  /**
   * The notebook on kernel `kernelId` whose path matches the kernel's, if any; for a
   * kernel that names none (a remote one), the only notebook open on it.
   */
  private _findContext(
    kernelId: string,
    kernelPath: string
  ): DocumentRegistry.IContext<INotebookModel> | null {
    const contexts = new Set<DocumentRegistry.IContext<INotebookModel>>();
    this._notebooks.forEach((p: NotebookPanel) => {
      if (
        !p.isDisposed &&
        !p.context.isDisposed &&
        p.sessionContext.session?.kernel?.id === kernelId
      ) {
        contexts.add(p.context); // views of one notebook share their context
      }
    });
    const open = [...contexts];
    const index = notebookFor(
      kernelPath,
      open.map(c => c.path)
    );
    return index < 0 ? null : open[index];
  }

  private _isDisposed = false;
  private _notebooks: INotebookTracker;
  private _controls: IKernelControls | null;
  private _table = new OperationTable<INotebookTarget>();
  private _sessions = new WeakSet<ISessionContext>();
  private _kernels = new Map<Kernel.IKernelConnection, IKernelEntry>();
}

export namespace NotebookBridge {
  export interface IOptions {
    /** The notebooks whose kernels may open the comm. */
    notebooks: INotebookTracker;
    /** Consoles, whose connection may be the one handling a notebook kernel's comms. */
    consoles?: IConsoleTracker | null;
    /** The kernels' control channels, for replies; without them, each comm's own. */
    controls?: IKernelControls | null;
    /** The extension's version, reported by `ping`. */
    version: string;
    /** The app this is (`ping` says it, the kernel names it so); default JupyterLab. */
    frontend?: Frontend;
    /** The server's root folder as the page names it (`ping` says it); default unsaid. */
    serverRoot?: string;
    /** How collaborative notebooks are saved; without it, as any other. */
    saveRoute?: ISaveRoute | null;
  }
}
