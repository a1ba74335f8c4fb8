/**
 * The bridge's operations (docs/notebook-bridge.md): `ping`, and the notebook
 * ones — read, read_cell, insert, update, delete, move, set_type, run,
 * interrupt, save — each an async handler in the dispatch table.
 *
 * Every edit is one transaction on the notebook's shared model with the
 * notebook as origin, so it is exactly one step in the notebook's undo
 * history (Edit → Undo Cell Operation, `Z` in command mode): the capture
 * window of the undo manager is closed before and after it, so an edit never
 * merges with the user's previous one or the agent's next one.
 *
 * Under real-time collaboration (jupyter-collaboration) the shared model is
 * the Yjs document every open view syncs through the server, so the same
 * transactions reach the other views live; a remote change is never in this
 * view's undo history. Runs write their outputs into the same model.
 */
import { CodeCell, type ICodeCellModel } from '@jupyterlab/cells';
import type { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';
import type { Contents, KernelMessage } from '@jupyterlab/services';
import type { PartialJSONObject, PartialJSONValue } from '@lumino/coreutils';
import type { IDisposable } from '@lumino/disposable';

import {
  Args,
  type IWireCell,
  insertionIndex,
  indexOf,
  moveIndices,
  runResult,
  sourceEdit,
  wireCell
} from './cells';
import { BridgeErrors } from './errors';
import { type OperationTable, pingResult } from './model';
import {
  type ArgsOf,
  INSERT_CELL_ID,
  type LegacyInsertArgs,
  type Operation,
  type ResultOf
} from './protocol';
import {
  type Frontend,
  type IBridgeRequest,
  type IBridgeTarget,
  type INotebookTarget
} from './tokens';
import { Running } from './running';

/** `ping`: which notebook this comm is bound to, and who answers. */
export function registerCoreOperations<T extends IBridgeTarget>(
  table: OperationTable<T>,
  version: string,
  frontend: Frontend = 'jupyterlab',
  serverRoot = ''
): IDisposable[] {
  return [
    table.register(
      'ping' satisfies Operation,
      async (_request, target) =>
        pingResult(
          target,
          version,
          frontend,
          serverRoot
        ) as unknown as JSONResult
    )
  ];
}

/** How long a run that timed out may take to stop after the interrupt. */
export const INTERRUPT_GRACE_MS = 10_000;

type SharedNotebook = INotebookModel['sharedModel'];
type SharedCell = SharedNotebook['cells'][number];

/**
 * How a collaborative notebook is saved. Under jupyter-collaboration the
 * server owns the file: it writes the shared document itself (a second after
 * each change, and at once when a view asks), so `save` asks it through the
 * content provider notebooks open with, as that provider's own save does.
 * `context.save()` would first compare the file's hash with the last one this
 * view heard of; a server autosave landing just before (one follows every
 * run) makes them differ, and JupyterLab then opens its "File Changed"
 * dialog, which holds the save until someone answers it.
 */
export interface ISaveRoute {
  /** The app's contents manager. */
  readonly contents: Contents.IManager;
  /** The content provider notebooks open with (`rtc` under jupyter-collaboration); read at each save. */
  contentProviderId(): string | undefined;
}

/** The operations on a notebook: every operation of the protocol but `ping`. */
export type NotebookOperation = Exclude<Operation, 'ping'>;

/**
 * The handler of operation `Op`: its arguments read as `ArgsOf<Op>` (a name the
 * operation does not take is a compile error), its result a `ResultOf<Op>`.
 */
type NotebookHandler<Op extends NotebookOperation> = (
  args: Args<ArgsOf<Op>>,
  target: INotebookTarget,
  request: IBridgeRequest
) => Promise<ResultOf<Op>>;

/**
 * A result as the dispatch table sends it. The generated result types are
 * interfaces without an index signature, which tsc does not count as JSON.
 */
type JSONResult = PartialJSONValue;

/** The notebook operations. */
export function registerNotebookOperations(
  table: OperationTable<INotebookTarget>,
  saveRoute: ISaveRoute | null = null
): IDisposable[] {
  const running = new Running();
  // One handler per operation of the protocol but ping, checked by the compiler.
  const handlers: { [Op in NotebookOperation]: NotebookHandler<Op> } = {
    read: async (_args, target) => {
      const model = modelOf(target);
      return {
        path: target.path,
        cells: model.sharedModel.cells.map((_, i) => cellJSON(model, i)),
        dirty: model.dirty
      };
    },

    read_cell: async (args, target) => {
      const model = modelOf(target);
      return cellJSON(model, find(model.sharedModel, args.string('cell_id')));
    },

    insert: async (args, target, request) => {
      const source = args.text('source', '');
      const cellType = args.cellType('cell_type', 'code');
      const before = args.optionalString('before');
      const after = args.optionalString('after');
      // Kernels of protocol 2 and older name the id to reuse `id`.
      const id =
        (target.protocol ?? 0) >= INSERT_CELL_ID
          ? args.optionalString('cell_id')
          : new Args<LegacyInsertArgs>(request.args).optionalString('id');
      const model = modelOf(target);
      const shared = model.sharedModel;
      const ids = idsOf(shared);
      if (id !== undefined && ids.includes(id)) {
        throw BridgeErrors.duplicate_id(id);
      }
      const index = insertionIndex(ids, before, after);
      edit(shared, () => {
        shared.insertCell(index, {
          cell_type: cellType,
          source,
          metadata: {},
          ...(id !== undefined ? { id } : {})
        });
      });
      const cell = cellJSON(model, index);
      flash(target, cell.id);
      return cell;
    },

    update: async (args, target) => {
      const cellId = args.string('cell_id');
      const source = args.text('source');
      const model = modelOf(target);
      const shared = model.sharedModel;
      const index = find(shared, cellId);
      const cell = shared.cells[index];
      const change = sourceEdit(cell.getSource(), source);
      if (change !== null) {
        edit(shared, () =>
          cell.updateSource(change.start, change.end, change.value)
        );
        flash(target, cellId);
      }
      // A code cell that had run is now dirty (JupyterLab marks it in the
      // same step): its outputs are of the source just replaced.
      return cellJSON(model, index);
    },

    delete: async (args, target) => {
      const model = modelOf(target);
      const shared = model.sharedModel;
      const index = find(shared, args.string('cell_id'));
      const cell = cellJSON(model, index);
      edit(shared, () => shared.deleteCell(index));
      return { ...cell, index };
    },

    move: async (args, target) => {
      const cellId = args.string('cell_id');
      const shared = modelOf(target).sharedModel;
      const { from, to } = moveIndices(
        idsOf(shared),
        cellId,
        args.optionalString('before'),
        args.optionalString('after')
      );
      if (from !== to) {
        edit(shared, () => shared.moveCell(from, to));
      }
      return { index: to };
    },

    set_type: async (args, target) => {
      const cellId = args.string('cell_id');
      const cellType = args.cellType('cell_type');
      const model = modelOf(target);
      const shared = model.sharedModel;
      const index = find(shared, cellId);
      const old = shared.cells[index];
      if (old.cell_type === cellType) {
        return cellJSON(model, index);
      }
      // As JupyterLab's own "change cell type": the same id, source and
      // metadata in a new cell of the new type; outputs go.
      const raw = old.toJSON() as PartialJSONObject;
      const metadata = { ...((raw.metadata ?? {}) as PartialJSONObject) };
      delete metadata.trusted;
      edit(shared, () => {
        shared.deleteCell(index);
        shared.insertCell(index, {
          id: cellId,
          cell_type: cellType,
          source: old.getSource(),
          metadata,
          ...(raw.attachments && cellType !== 'code'
            ? { attachments: raw.attachments }
            : {})
        } as Parameters<SharedNotebook['insertCell']>[1]);
      });
      return cellJSON(model, index);
    },

    run: async (args, target) => {
      return run(
        target,
        args.string('cell_id'),
        args.seconds('timeout'),
        running,
        args.optionalString('source')
      );
    },

    interrupt: async (args, target) => {
      const cellId = args.optionalString('cell_id');
      // With a cell id: only if the bridge is still running that cell, so a
      // late interrupt never hits whatever the user ran next.
      const kernel =
        cellId !== undefined
          ? running.interrupting(target.context, cellId)
          : (target.panel?.sessionContext.session?.kernel ?? null);
      if (kernel !== null && !kernel.isDisposed) {
        await kernel.interrupt();
        return { interrupted: true };
      }
      return { interrupted: false };
    },

    save: async (_args, target) => {
      const model = modelOf(target);
      const providerId = model.collaborative
        ? saveRoute?.contentProviderId()
        : undefined;
      if (saveRoute !== null && providerId !== undefined) {
        // The server writes what the shared document holds now, then answers.
        await saveRoute.contents.save(target.context.path, {
          type: 'notebook',
          format: 'json',
          contentProviderId: providerId
        });
      } else {
        await target.context.save();
      }
      return {};
    }
  };
  // Every operation waits for the notebook's content to be loaded first.
  return (Object.keys(handlers) as NotebookOperation[]).map(op => {
    // Each handler reads its own operation's arguments (checked above, per key).
    const handler = handlers[
      op
    ] as unknown as NotebookHandler<NotebookOperation>;
    return table.register(op, async (request, target) => {
      if (!target.context.isReady && !target.context.isDisposed) {
        await target.context.ready;
      }
      const args = new Args<ArgsOf<NotebookOperation>>(request.args);
      return (await handler(args, target, request)) as unknown as JSONResult;
    });
  });
}

/** The notebook's model, or an error when the notebook was closed. */
/** The class that marks a cell the agent just inserted or changed, for FLASH_MS. */
export const FLASH_CLASS = 'jp-Agent-changed';
const FLASH_MS = 2500;

/**
 * Marks the cell `cellId` in the open view for a moment, so the eye finds what the
 * agent just wrote (its view is made on the next frame, after the model change).
 */
function flash(target: INotebookTarget, cellId: string): void {
  const panel = target.panel;
  if (panel === null || typeof requestAnimationFrame !== 'function') {
    return;
  }
  requestAnimationFrame(() => {
    const cell = panel.content.widgets.find(w => w.model.id === cellId);
    if (cell === undefined || cell.isDisposed) {
      return;
    }
    cell.node.classList.add(FLASH_CLASS);
    setTimeout(() => cell.node.classList.remove(FLASH_CLASS), FLASH_MS);
  });
}

function modelOf(target: INotebookTarget): INotebookModel {
  const model = target.context.isDisposed ? null : target.context.model;
  if (model === null || model.isDisposed) {
    throw BridgeErrors.notebook_closed();
  }
  return model;
}

function idsOf(shared: SharedNotebook): string[] {
  return shared.cells.map(cell => cell.getId());
}

function find(shared: SharedNotebook, cellId: string): number {
  return indexOf(idsOf(shared), cellId);
}

/** The cell at `index` of the notebook, as replies carry it. */
function cellJSON(model: INotebookModel, index: number): IWireCell {
  const cell = model.sharedModel.cells[index];
  return wireCell(
    cell.toJSON() as PartialJSONObject,
    editedSinceRun(model, index, cell)
  );
}

/**
 * Whether the code cell at `index` was edited since it last ran: its cell
 * model's `isDirty`, which only the notebook model's cell list holds (the
 * shared model has no such field). False when that list does not match the
 * shared cells (another length, or at `index` the model of another cell,
 * hence maybe of another id), as while a change is still being applied.
 */
function editedSinceRun(
  model: INotebookModel,
  index: number,
  cell: SharedCell
): boolean {
  const list = model.cells;
  if (list.length !== model.sharedModel.cells.length) {
    return false;
  }
  // CellList.get answers undefined for a shared cell it has no model of yet.
  const cellModel = list.get(index) as ReturnType<typeof list.get> | undefined;
  if (
    cellModel === undefined ||
    cellModel.sharedModel !== cell ||
    cellModel.type !== 'code'
  ) {
    return false;
  }
  return (cellModel as ICodeCellModel).isDirty === true;
}

/** The part of YNotebook's undo manager an edit needs. */
interface IUndoCapture {
  stopCapturing(): void;
}

/** Run `change` as one undoable step of the notebook's history. */
function edit(shared: SharedNotebook, change: () => void): void {
  const undo = (shared as unknown as { undoManager?: IUndoCapture | null })
    .undoManager;
  undo?.stopCapturing();
  // The notebook is the origin, also for a change inside one cell (as
  // JupyterLab's "change to heading" does): the notebook's undo manager
  // tracks it, whatever the document-wide undo setting.
  shared.transact(change, true);
  undo?.stopCapturing();
}

/**
 * Run a code cell as the user would (CodeCell.execute with the panel's
 * session: the cell shows as running, its outputs stream in, its execution
 * count advances) and resolve once the execution ended. After `timeout`
 * seconds the kernel is interrupted and the reply says `timeout`; a cell
 * that ignores the interrupt is given up on after INTERRUPT_GRACE_MS.
 *
 * With `expected` (the source the user approved), the cell runs only if it
 * holds exactly that: compared in the same synchronous step in which
 * CodeCell.execute reads the source it sends, so no edit (the user's, a
 * collaborator's, the agent's) can land in between; else `source_changed`.
 */
async function run(
  target: INotebookTarget,
  cellId: string,
  timeout: number | null,
  running: Running,
  expected?: string
): Promise<ResultOf<'run'>> {
  modelOf(target);
  const panel: NotebookPanel | null = target.panel;
  if (panel === null || panel.isDisposed) {
    throw BridgeErrors.no_view();
  }
  const notebook = panel.content;
  const widget = notebook.widgets.find(w => w.model.id === cellId);
  if (widget === undefined) {
    throw BridgeErrors.no_cell(cellId);
  }
  if (!(widget instanceof CodeCell) || widget.model.type !== 'code') {
    throw BridgeErrors.not_code(cellId, widget.model.type);
  }
  const sessionContext = panel.sessionContext;
  const kernel = sessionContext.session?.kernel ?? null;
  if (kernel === null || kernel.isDisposed) {
    throw BridgeErrors.no_kernel();
  }
  const deletedCells = notebook.model?.deletedCells ?? [];
  // The execution ends, for `interrupt`, when the kernel reports the request idle on
  // iopub: the kernel's later messages (an interrupt asked for by a stopped run) come
  // after it on the same channel, while the execute reply, on another, may come later.
  const source = widget.model.sharedModel.getSource();
  // No await from here to CodeCell.execute, which reads the source it sends in
  // its first synchronous step: what runs is what was compared.
  if (expected !== undefined && source !== expected) {
    throw BridgeErrors.source_changed(cellId);
  }
  let requestId: string | undefined;
  const onIopub = (_: unknown, msg: KernelMessage.IIOPubMessage): void => {
    const parent = (msg.parent_header as Partial<KernelMessage.IHeader>).msg_id;
    if (requestId === undefined) {
      const input = msg.content as { code?: unknown };
      if (msg.header.msg_type === 'execute_input' && input.code === source) {
        requestId = parent;
        running.started(target.context, cellId, kernel);
      }
      return;
    }
    const state = (msg.content as { execution_state?: unknown })
      .execution_state;
    if (
      parent === requestId &&
      msg.header.msg_type === 'status' &&
      state === 'idle'
    ) {
      running.delete(target.context, cellId, kernel);
    }
  };
  kernel.iopubMessage.connect(onIopub);
  let reply: PartialJSONObject | null = null;
  let cancelled = false;
  let timedOut = false;
  const execution = CodeCell.execute(widget, sessionContext, {
    deletedCells,
    recordTiming: notebook.notebookConfig.recordTiming
  }).then(
    msg => {
      deletedCells.splice(0, deletedCells.length);
      reply = (msg?.content as PartialJSONObject | undefined) ?? null;
    },
    (reason: unknown) => {
      const message = reason instanceof Error ? reason.message : String(reason);
      // The future was disposed: a kernel restart, the cell run again or deleted.
      if (widget.isDisposed || message.startsWith('Canceled')) {
        cancelled = true;
        return;
      }
      throw reason;
    }
  );
  running.add(target.context, cellId, kernel);
  const timers: ReturnType<typeof setTimeout>[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      execution.then(resolve, reject);
      if (timeout !== null) {
        timers.push(
          setTimeout(() => {
            timedOut = true;
            kernel.interrupt().catch(error => {
              console.warn(
                'jupyter_agent: could not interrupt the kernel',
                error
              );
            });
            timers.push(setTimeout(resolve, INTERRUPT_GRACE_MS));
          }, timeout * 1000)
        );
      }
    });
  } finally {
    timers.forEach(clearTimeout);
    kernel.iopubMessage.disconnect(onIopub);
    running.delete(target.context, cellId, kernel);
  }
  const model = widget.model;
  return runResult({
    reply,
    cancelled,
    timedOut,
    executionCount: model.isDisposed ? null : model.executionCount,
    outputs: model.isDisposed
      ? []
      : (model.outputs.toJSON() as unknown as PartialJSONObject[])
  });
}
