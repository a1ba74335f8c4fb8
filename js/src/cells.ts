/**
 * The notebook operations' rules, on plain JSON: how a cell looks on the
 * wire, where an insert or a move lands, the smallest edit between two
 * sources, what a `run` reply says. No DOM, no kernel, no shared model, so
 * node's test runner checks them (test/cells.test.ts).
 */
import type {
  PartialJSONObject,
  PartialJSONValue,
  ReadonlyPartialJSONObject
} from '@lumino/coreutils';

import { BridgeErrors } from './errors';

/** The cell types nbformat knows. */
export const CELL_TYPES = ['code', 'markdown', 'raw'] as const;
export type CellType = (typeof CELL_TYPES)[number];

/** A cell as replies carry it (docs/notebook-bridge.md). */
export interface IWireCell extends PartialJSONObject {
  id: string;
  cell_type: CellType;
  source: string;
  execution_count: number | null;
  outputs: PartialJSONObject[];
  metadata: PartialJSONObject;
  /** A code cell edited since it last ran: its outputs are its earlier source's. */
  edited_since_run: boolean;
}

/** nbformat allows a multiline string as a list of lines. */
export function joinSource(source: unknown): string {
  if (Array.isArray(source)) {
    return source.map(String).join('');
  }
  return typeof source === 'string' ? source : '';
}

/**
 * One cell (an nbformat cell as JupyterLab's `toJSON()` gives it) in wire
 * form: always every field, the source as one string, no outputs or
 * execution count for markdown and raw cells. `editedSinceRun` is the cell
 * model's `isDirty` (the source changed since the cell last ran), which
 * nbformat does not hold; only a code cell can be.
 */
export function wireCell(
  cell: ReadonlyPartialJSONObject,
  editedSinceRun: boolean
): IWireCell {
  const type = (CELL_TYPES as readonly string[]).includes(
    cell.cell_type as string
  )
    ? (cell.cell_type as CellType)
    : 'code';
  const isCode = type === 'code';
  const count = cell.execution_count;
  const outputs = isCode && Array.isArray(cell.outputs) ? cell.outputs : [];
  const metadata = cell.metadata;
  return {
    id: typeof cell.id === 'string' ? cell.id : '',
    cell_type: type,
    source: joinSource(cell.source),
    execution_count: isCode && typeof count === 'number' ? count : null,
    outputs: outputs.map(output => ({ ...(output as PartialJSONObject) })),
    metadata:
      typeof metadata === 'object' &&
      metadata !== null &&
      !Array.isArray(metadata)
        ? { ...(metadata as PartialJSONObject) }
        : {},
    edited_since_run: isCode && editedSinceRun
  };
}

/** The index of `id` in `ids`, or an error naming it. */
export function indexOf(ids: readonly string[], id: string): number {
  const index = ids.indexOf(id);
  if (index < 0) {
    throw BridgeErrors.no_cell(id);
  }
  return index;
}

/**
 * Where a new cell goes: before `before`, after `after`, or at the end when
 * neither is given (the same rule as the file bridge).
 */
export function insertionIndex(
  ids: readonly string[],
  before?: string | null,
  after?: string | null
): number {
  if (before != null && after != null) {
    throw BridgeErrors.before_and_after();
  }
  if (before != null) {
    return indexOf(ids, before);
  }
  if (after != null) {
    return indexOf(ids, after) + 1;
  }
  return ids.length;
}

/**
 * A move of `id` next to `before` or `after`: where it is, and the index it
 * will have once moved (its position among the other cells, which is the
 * `toIndex` YNotebook.moveCell takes for a single cell).
 */
export function moveIndices(
  ids: readonly string[],
  id: string,
  before?: string | null,
  after?: string | null
): { from: number; to: number } {
  if (before != null && after != null) {
    throw BridgeErrors.before_and_after();
  }
  if (before == null && after == null) {
    throw BridgeErrors.no_anchor();
  }
  const from = indexOf(ids, id);
  const anchor = (before ?? after) as string;
  if (anchor === id) {
    throw BridgeErrors.next_to_itself(id);
  }
  const others = ids.filter((_, i) => i !== from);
  const to =
    before != null ? indexOf(others, before) : indexOf(others, anchor) + 1;
  return { from, to };
}

/**
 * The smallest single replacement turning `old` into `next`: replace
 * `old.slice(start, end)` with `value`. Editing only what changed keeps the
 * cursors of people typing in the same cell where they were. Null when the
 * sources are equal.
 */
export function sourceEdit(
  old: string,
  next: string
): { start: number; end: number; value: string } | null {
  if (old === next) {
    return null;
  }
  let start = 0;
  const limit = Math.min(old.length, next.length);
  while (start < limit && old.charCodeAt(start) === next.charCodeAt(start)) {
    start++;
  }
  let oldEnd = old.length;
  let nextEnd = next.length;
  while (
    oldEnd > start &&
    nextEnd > start &&
    old.charCodeAt(oldEnd - 1) === next.charCodeAt(nextEnd - 1)
  ) {
    oldEnd--;
    nextEnd--;
  }
  // Never split a surrogate pair (an emoji, say) between kept and replaced text.
  if (start > 0 && isHighSurrogate(old.charCodeAt(start - 1))) {
    start--;
  }
  if (oldEnd < old.length && isLowSurrogate(old.charCodeAt(oldEnd))) {
    oldEnd++;
    nextEnd++;
  }
  return { start, end: oldEnd, value: next.slice(start, nextEnd) };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * The arguments of a request of type `A` (src/protocol.ts), checked one by one as
 * they are read: a name `A` does not have is a compile error, a value of the
 * wrong type a `bad_argument` reply.
 */
export class Args<A extends object = Record<string, unknown>> {
  constructor(args: PartialJSONValue | undefined) {
    this._args =
      typeof args === 'object' && args !== null && !Array.isArray(args)
        ? (args as PartialJSONObject)
        : {};
  }

  /** A required non-empty string. */
  string(name: keyof A & string): string {
    const value = this._args[name];
    if (typeof value !== 'string' || value === '') {
      throw BridgeErrors.bad_argument(name, 'a non-empty string');
    }
    return value;
  }

  /** An optional string (absent or null: undefined). */
  optionalString(name: keyof A & string): string | undefined {
    const value = this._args[name];
    if (value === undefined || value === null) {
      return undefined;
    }
    if (typeof value !== 'string') {
      throw BridgeErrors.bad_argument(name, 'a string');
    }
    return value;
  }

  /** A string that may be empty (a cell's source). */
  text(name: keyof A & string, fallback?: string): string {
    const value = this._args[name];
    if (value === undefined && fallback !== undefined) {
      return fallback;
    }
    if (typeof value !== 'string') {
      throw BridgeErrors.bad_argument(name, 'a string');
    }
    return value;
  }

  cellType(name: keyof A & string, fallback?: CellType): CellType {
    const value = this._args[name] ?? fallback;
    if (!(CELL_TYPES as readonly unknown[]).includes(value)) {
      throw BridgeErrors.bad_cell_type(value);
    }
    return value as CellType;
  }

  /** An optional positive number of seconds (absent, null or ≤ 0: none). */
  seconds(name: keyof A & string): number | null {
    const value = this._args[name];
    if (value === undefined || value === null) {
      return null;
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw BridgeErrors.bad_argument(name, 'a number of seconds');
    }
    return value > 0 ? value : null;
  }

  private _args: PartialJSONObject;
}

/** How a run ended, as the `run` reply says it. */
export type RunStatus = 'ok' | 'error' | 'aborted' | 'timeout';

/** The `result` of a `run` reply. */
export interface IRunResult extends PartialJSONObject {
  status: RunStatus;
  execution_count: number | null;
  outputs: PartialJSONObject[];
  error?: { ename: string; evalue: string; traceback: string[] };
}

/**
 * The `run` reply from what the execution left: the kernel's execute_reply
 * content (null when nothing was sent: an empty cell, or the execution was
 * cancelled), the cell's outputs and execution count, and whether the
 * timeout fired.
 */
export function runResult(options: {
  reply: ReadonlyPartialJSONObject | null;
  cancelled: boolean;
  timedOut: boolean;
  executionCount: number | null;
  outputs: readonly PartialJSONObject[];
}): IRunResult {
  const { reply, cancelled, timedOut } = options;
  const outputs = options.outputs.map(o => ({ ...o }));
  let error: IRunResult['error'];
  const replyStatus = reply?.status;
  if (replyStatus === 'error') {
    error = {
      ename: String(reply?.ename ?? ''),
      evalue: String(reply?.evalue ?? ''),
      traceback: Array.isArray(reply?.traceback)
        ? (reply?.traceback as unknown[]).map(String)
        : []
    };
  } else {
    // A reply without the error (some kernels), or none: the error output says it.
    const shown = outputs.find(o => o.output_type === 'error');
    if (shown && (replyStatus === undefined || replyStatus === null)) {
      error = {
        ename: String(shown.ename ?? ''),
        evalue: String(shown.evalue ?? ''),
        traceback: Array.isArray(shown.traceback)
          ? (shown.traceback as unknown[]).map(String)
          : []
      };
    }
  }
  let status: RunStatus;
  if (timedOut) {
    status = 'timeout';
  } else if (cancelled || replyStatus === 'aborted') {
    status = 'aborted';
  } else if (replyStatus === 'error' || error !== undefined) {
    status = 'error';
  } else {
    status = 'ok';
  }
  const count =
    typeof reply?.execution_count === 'number'
      ? (reply.execution_count as number)
      : options.executionCount;
  const result: IRunResult = {
    status,
    execution_count: count,
    outputs
  };
  if (error !== undefined) {
    result.error = error;
  }
  return result;
}
