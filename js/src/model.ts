/**
 * The bridge's state and rules, without DOM or kernel: which path matches
 * which notebook, and the table that turns a request into a reply.
 */
import type { PartialJSONValue } from '@lumino/coreutils';
import { DisposableDelegate, type IDisposable } from '@lumino/disposable';

import { type BridgeError, BridgeErrors, asBridgeError } from './errors';
import { PROTOCOL_VERSION, type ResultOf } from './protocol';
import {
  type BridgeReply,
  type Frontend,
  type IBridgeRequest,
  type IBridgeTarget,
  type OperationHandler
} from './tokens';

/**
 * A path reduced to `a/b/c` form: forward slashes, no `.` segments, no empty
 * segments, no drive prefix of JupyterLab's own (`RTC:nb.ipynb`). A Windows
 * drive letter (`C:/...`) is kept: it is part of an absolute path.
 */
export function normalisePath(path: string): string {
  let p = path.normalize('NFC').replace(/\\/g, '/');
  const drive = /^([^/:]{2,}):/.exec(p);
  if (drive) {
    p = p.slice(drive[0].length);
  }
  const absolute = p.startsWith('/');
  const segments = p.split('/').filter(s => s !== '' && s !== '.');
  return (absolute ? '/' : '') + segments.join('/');
}

/**
 * Whether the kernel's notebook path and the frontend's name the same file.
 *
 * The kernel's path (`__session__`) may be absolute while JupyterLab's is
 * relative to the server root, so they match when equal or when one ends with
 * the other on a segment boundary (`/srv/work/a.ipynb` matches `work/a.ipynb`,
 * not `ork/a.ipynb`).
 */
export function pathsMatch(kernelPath: string, frontendPath: string): boolean {
  const a = normalisePath(kernelPath).replace(/^\//, '');
  const b = normalisePath(frontendPath).replace(/^\//, '');
  if (a === '' || b === '') {
    return false;
  }
  if (a === b) {
    return true;
  }
  const [longer, shorter] = a.length > b.length ? [a, b] : [b, a];
  return longer.endsWith(`/${shorter}`);
}

/**
 * Which of the notebooks open on a kernel (their paths, one per notebook) a comm the
 * kernel opened with `kernelPath` is bound to: the one whose path matches; with no path
 * (a remote kernel knows none), the only notebook there is. -1: none, or no telling
 * which of several.
 */
export function notebookFor(
  kernelPath: string,
  paths: readonly string[]
): number {
  if (normalisePath(kernelPath) === '') {
    return paths.length === 1 ? 0 : -1;
  }
  return paths.findIndex(path => pathsMatch(kernelPath, path));
}

/**
 * The `ping` result: the notebook the comm is bound to and who answers; for
 * protocol 1 kernels also this frontend's `instance`, to address requests to;
 * with `serverRoot` (the page's), where the server keeps it, for a kernel to
 * tell whether it runs there.
 */
export function pingResult(
  target: IBridgeTarget,
  version: string,
  frontend: Frontend = 'jupyterlab',
  serverRoot = ''
): ResultOf<'ping'> {
  const result: ResultOf<'ping'> = {
    path: target.path,
    frontend,
    version,
    // The protocol this extension speaks: from 2, `run` checks an expected source.
    protocol: PROTOCOL_VERSION
  };
  if ((target.protocol ?? 0) >= 1 && target.instance) {
    result.instance = target.instance;
  }
  if (serverRoot) {
    result.server_root = serverRoot;
  }
  return result;
}

/**
 * Whether this frontend (`instance`) answers `data`: every request without a
 * `to`, and those addressed to it. With one notebook open in two browser tabs
 * both accept the comm; the kernel addresses its requests to the tab that
 * answered its ping first, so an edit or a run happens once.
 */
export function isAddressedTo(data: unknown, instance: string): boolean {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return true; // malformed: dispatch says why
  }
  const to = (data as { to?: unknown }).to;
  return typeof to !== 'string' || to === instance;
}

/** How long a view waits before answering a ping another view's code sent. */
export const DEFERRED_PING_MS = 300;

/**
 * Whether this view waits DEFERRED_PING_MS before answering `data`: a ping
 * whose parent message (the cell run that connects the agent) came from
 * another client session than this view's kernel connection (`ownSession`).
 * Every view of the notebook (browser tabs; collaborators under real-time
 * collaboration) answers the ping and the kernel keeps the first answer, so
 * this lets the view of whoever started the agent win: its edits then land
 * in that person's undo history and its runs in their view. When no view ran
 * it (an empty parent), all wait alike.
 */
export function defersPing(
  data: unknown,
  requestSession: unknown,
  ownSession: string
): boolean {
  const op =
    typeof data === 'object' && data !== null
      ? (data as { op?: unknown }).op
      : undefined;
  return op === 'ping' && requestSession !== ownSession;
}

/** Why a request cannot be dispatched, or null when it is well formed. */
function requestProblem(data: unknown): string | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return 'not a JSON object';
  }
  const { id, op } = data as { id?: unknown; op?: unknown };
  if (typeof id !== 'string' || id === '') {
    return 'no string "id"';
  }
  if (typeof op !== 'string' || op === '') {
    return 'no string "op"';
  }
  return null;
}

/** The `ok: false` reply to request `id`. */
function failure(id: string | null, error: BridgeError): BridgeReply {
  return { id, ok: false, ...error.body() };
}

/**
 * The dispatch table: operation name → async handler. Handlers never see a
 * malformed request, and whatever they throw becomes an `ok: false` reply, so
 * one failing operation cannot break the comm.
 */
export class OperationTable<T extends IBridgeTarget> {
  /** The operation names, sorted. */
  get operations(): string[] {
    return [...this._handlers.keys()].sort();
  }

  has(op: string): boolean {
    return this._handlers.has(op);
  }

  /** Add `op`; disposing the result removes this handler (not a later replacement). */
  register(op: string, handler: OperationHandler<T>): IDisposable {
    if (this._handlers.has(op)) {
      throw new Error(`operation ${op} is already registered`);
    }
    this._handlers.set(op, handler);
    return new DisposableDelegate(() => {
      if (this._handlers.get(op) === handler) {
        this._handlers.delete(op);
      }
    });
  }

  /** The reply to `data` (a comm message's data) for `target`. Never rejects. */
  async dispatch(data: unknown, target: T): Promise<BridgeReply> {
    const problem = requestProblem(data);
    if (problem !== null) {
      const id = (data as { id?: unknown } | null)?.id;
      return failure(
        typeof id === 'string' ? id : null,
        BridgeErrors.malformed_request(problem)
      );
    }
    const request = data as IBridgeRequest;
    const handler = this._handlers.get(request.op);
    if (handler === undefined) {
      return failure(request.id, BridgeErrors.unknown_operation(request.op));
    }
    try {
      const result: PartialJSONValue = await handler(request, target);
      return { id: request.id, ok: true, result: result ?? null };
    } catch (error) {
      return failure(request.id, asBridgeError(error));
    }
  }

  private _handlers = new Map<string, OperationHandler<T>>();
}

// --- the side panel ------------------------------------------------------------

/** The MIME type of an ipywidgets view; the agent panel is an anywidget. */
export const WIDGET_VIEW_MIME = 'application/vnd.jupyter.widget-view+json';

/**
 * The user expression the side panel evaluates in a notebook's kernel: loads
 * the extension there if needed and returns the model id of the kernel's agent
 * panel (jupyter_agent.jupyter.sidebar_panel).
 */
export const PANEL_EXPRESSION =
  "__import__('jupyter_agent.jupyter', fromlist=['sidebar_panel']).sidebar_panel()";

/**
 * The panel's model id from the kernel's answer to PANEL_EXPRESSION (one
 * entry of an execute_reply's `user_expressions`); throws an Error that says
 * what went wrong, in words for the person looking at the side panel.
 */
export function panelModelId(answer: unknown): string {
  if (typeof answer !== 'object' || answer === null) {
    throw new Error(
      'the kernel did not evaluate the request for the agent panel'
    );
  }
  const { status, data, ename, evalue } = answer as {
    status?: unknown;
    data?: { 'text/plain'?: unknown };
    ename?: unknown;
    evalue?: unknown;
  };
  if (status === 'error') {
    if (ename === 'ModuleNotFoundError' || ename === 'ImportError') {
      throw new Error(
        "jupyter_agent is not installed in this notebook's kernel environment"
      );
    }
    throw new Error(
      `the kernel could not start the agent: ${ename}: ${evalue}`
    );
  }
  const text = data?.['text/plain'];
  const match =
    typeof text === 'string' ? /^'([A-Za-z0-9_-]+)'$/.exec(text) : null;
  if (status !== 'ok' || match === null) {
    throw new Error(
      `the kernel answered ${JSON.stringify(text ?? status)} instead of a widget id`
    );
  }
  return match[1];
}
