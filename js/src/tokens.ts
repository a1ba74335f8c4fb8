/**
 * Ids, wire formats and interfaces of the jupyter-agent lab extension.
 *
 * Nothing here touches the DOM or a kernel: the plugin ids and the comm
 * protocol the kernel side (jupyter_agent.jupyter) speaks live in one place.
 */
import type { DocumentRegistry } from '@jupyterlab/docregistry';
import type { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel } from '@jupyterlab/services';
import type {
  JSONObject,
  PartialJSONObject,
  PartialJSONValue
} from '@lumino/coreutils';
import { Token } from '@lumino/coreutils';
import type { IDisposable } from '@lumino/disposable';

import type { IErrorBody } from './errors';

/** The npm and labextension name. */
export const EXTENSION_NAME = 'jupyter-agent';

/** Plugin ids, `<extension>:<plugin>` as JupyterLab expects. */
export namespace PluginIDs {
  export const bridge = `${EXTENSION_NAME}:bridge`;
  export const sidebar = `${EXTENSION_NAME}:sidebar`;
  export const interrupt = `${EXTENSION_NAME}:interrupt`;
  export const revealCell = `${EXTENSION_NAME}:reveal-cell`;
  export const control = `${EXTENSION_NAME}:control`;
  export const openNotebook = `${EXTENSION_NAME}:open-notebook`;
}

/** Command ids. */
export namespace CommandIDs {
  export const openPanel = `${EXTENSION_NAME}:open-panel`;
}

/**
 * DOM events the agent panel's views (jupyter_agent/jupyter/panel/static/panel.js)
 * dispatch on `document`; the extension takes them with preventDefault(),
 * else the view falls back on its own.
 */
export namespace PanelEvents {
  /** `{ kernelId }`: Stop was clicked while the agent runs a cell. */
  export const interrupt = 'jupyter-agent:interrupt';
  /** `{ where: 'side', kernelId, widgetId }`: `%agent --side`. */
  export const dock = 'jupyter-agent:dock';
  /** `{ cellId, kernelId }`: a cell link on an approval card was clicked. */
  export const revealCell = 'jupyter-agent:reveal-cell';
  /** IControlDetail: a message for the kernel, sent over the kernel's control channel. */
  export const control = 'jupyter-agent:control';
  /** `{ path }`: open this notebook (the server's path): a past session worked on it. */
  export const openNotebook = 'jupyter-agent:open-notebook';
}

/**
 * `detail` of PanelEvents.control (src/panel/channel.ts writes the same shape: the panel
 * is bundled on its own and imports nothing from here).
 */
export interface IControlDetail {
  kernelId: string;
  /** The panel widget's comm id (ipywidgets' model id). */
  commId: string;
  /** What anywidget's `model.send(message)` would send. */
  message: JSONObject;
  /** Set by the extension as it takes the event: whether the message goes over a subshell. */
  subshell?: SubshellStatus;
  /** Set with `subshell: 'pending'`: resolves to whether it does once that is known. */
  known?: Promise<boolean>;
}

/** Whether a kernel's control channel has its subshell; 'pending' while that is not known. */
export type SubshellStatus = boolean | 'pending';

/** The agent's control channel to one kernel (src/control.ts). */
export interface IKernelControl {
  /** Whether messages go over the agent's subshell. */
  readonly subshell: SubshellStatus;
  /** Resolves to `subshell` once that is known. */
  readonly known: Promise<boolean>;
  /** Send `data` on comm `commId`, in order with everything sent to this kernel here. */
  send(commId: string, data: JSONObject): void;
  /**
   * The model id of this kernel's agent panel, as its views said it (every view's
   * message names its widget); null before one did, and again after a restart.
   */
  readonly panel: string | null;
  /** A view of panel `commId` sent a message to this kernel. */
  sawPanel(commId: string): void;
}

/**
 * The agent's control channels: one kernel subshell (JEP 91) per kernel, whose messages
 * the kernel reads while the user's cell runs.
 */
export interface IKernelControls {
  /** The control channel to `kernel`'s kernel (one per kernel id, made on first use). */
  of(kernel: Kernel.IKernelConnection): IKernelControl;
  /** The model id of `kernelId`'s agent panel, once a view of it spoke here. */
  panelOf(kernelId: string): string | null;
}

export const IKernelControls = new Token<IKernelControls>(
  `${EXTENSION_NAME}:IKernelControls`,
  "The agent's messages to a kernel over a subshell of its own, read while a cell runs."
);

/** The comm target the kernel opens (bridge_protocol.json, as the Python side reads it). */
export { COMM_TARGET } from './protocol';

/**
 * What this frontend calls itself in replies: the app it runs in, for the kernel to name
 * it rightly to the user (one build of the extension serves both).
 */
export type Frontend = 'jupyterlab' | 'notebook';

/** The frontend of the app named `appName` (`app.name`): Notebook 7 is "Jupyter Notebook". */
export function frontendOf(appName: string): Frontend {
  return appName === 'Jupyter Notebook' ? 'notebook' : 'jupyterlab';
}

/** `data` of the kernel's comm_open. */
export interface IOpenData extends PartialJSONObject {
  /**
   * The notebook path as the kernel knows it (`__session__`): absolute or server-relative;
   * empty or absent from a kernel that does not know it (a remote one): the comm is then
   * bound to the one notebook open on that kernel, which the `ping` result names.
   */
  path?: string;
  /** The protocol version the kernel speaks (docs/notebook-bridge.md); absent: 0. */
  protocol?: number;
}

/** A request the kernel sends over an accepted comm. */
export interface IBridgeRequest extends PartialJSONObject {
  id: string;
  op: string;
  /** The operation's arguments. */
  args?: PartialJSONObject;
  /**
   * The `instance` (from the ping reply) that must answer; every other
   * frontend on the comm (the same notebook open in another browser tab)
   * stays silent, so an edit or a run happens once.
   */
  to?: string;
}

/** A successful reply. */
export interface IBridgeSuccess extends PartialJSONObject {
  id: string;
  ok: true;
  result: PartialJSONValue;
}

/**
 * A failed reply: the error's code, its fields (src/protocol.ts) and a
 * message for people reading logs; `id` is null only when the request had
 * no usable id.
 */
export interface IBridgeFailure extends IErrorBody {
  id: string | null;
  ok: false;
}

export type BridgeReply = IBridgeSuccess | IBridgeFailure;

/** Whatever a comm is bound to, seen from the DOM-free model. */
export interface IBridgeTarget {
  /** The notebook path as JupyterLab knows it (relative to the server root). */
  readonly path: string;
  /** This frontend's id for the comm (random, one per browser tab and comm). */
  readonly instance?: string;
  /** The protocol version the kernel asked for when it opened the comm (0: none given). */
  readonly protocol?: number;
}

/** The notebook an accepted comm is bound to, as operations see it. */
export interface INotebookTarget extends IBridgeTarget {
  /** The document context (model, save, path); shared by every view of the notebook. */
  readonly context: DocumentRegistry.IContext<INotebookModel>;
  /** A live view of the notebook, for operations that need one (running cells); null once all are closed. */
  readonly panel: NotebookPanel | null;
}

/**
 * One operation of the bridge. It resolves to the reply's `result` or throws,
 * a BridgeError (src/errors.ts) whose code and fields the reply carries; any
 * other error is sent as `failed` with its message.
 */
export type OperationHandler<T extends IBridgeTarget = INotebookTarget> = (
  request: IBridgeRequest,
  target: T
) => Promise<PartialJSONValue>;

/** The notebook bridge, provided to other plugins so they can add operations. */
export interface IAgentBridge {
  /** The extension's version, as the ping reply reports it. */
  readonly version: string;
  /** The operations known now, sorted. */
  readonly operations: readonly string[];
  /** Add an operation; disposing the result removes it again. */
  registerOperation(op: string, handler: OperationHandler): IDisposable;
}

export const IAgentBridge = new Token<IAgentBridge>(
  `${EXTENSION_NAME}:IAgentBridge`,
  'The comm endpoint the in-kernel agent uses to read and edit its notebook.'
);
