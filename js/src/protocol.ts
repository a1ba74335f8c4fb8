/**
 * The notebook bridge's names, error codes and message types, generated from
 * jupyter_agent/jupyter/bridge/bridge_protocol.json and bridge_messages.json by
 * scripts/protocol.js (`npm run build:protocol`). Do not edit:
 * test/protocol.test.ts fails when this file is not what the JSON gives.
 */

/** The comm target the kernel opens. */
export const COMM_TARGET = 'jupyter_agent';

/** The protocol version the kernel side speaks. */
export const PROTOCOL_VERSION = 3;

/** The operations every frontend answers. */
export const OPERATIONS = [
  'ping',
  'read',
  'read_cell',
  'insert',
  'update',
  'delete',
  'move',
  'set_type',
  'run',
  'interrupt',
  'save'
] as const;

export type Operation = (typeof OPERATIONS)[number];

/** What the frontend tells the kernel unasked: `{event, ...fields}`. */
export const EVENTS = ['renamed'] as const;

export type BridgeEvent = (typeof EVENTS)[number];

/** The fields each error code carries in a failed reply, besides `code` and `message`. */
export interface IErrorFields {
  /** No notebook on this kernel has the comm's path (sent when closing the comm). */
  path_mismatch: Record<string, never>;
  /** The notebook the comm is bound to was closed in the frontend (a reply, or the comm's close). */
  notebook_closed: Record<string, never>;
  /** The request is not an object with a string id and op. */
  malformed_request: {
    /** what is wrong with it */
    problem: string;
  };
  /** No handler for the request's op. */
  unknown_operation: {
    /** the operation asked for */
    op: string;
  };
  /** An argument is missing or has the wrong type. */
  bad_argument: {
    /** its name */
    argument: string;
    /** what it must be */
    expected: string;
  };
  /** A cell type other than code, markdown or raw. */
  bad_cell_type: {
    /** the value given, as JSON */
    cell_type: string;
  };
  /** No cell has the id. */
  no_cell: {
    /** the id asked for */
    cell_id: string;
  };
  /** An insert asked for an id a cell already has. */
  duplicate_id: {
    /** the id */
    cell_id: string;
  };
  /** Both before and after were given. */
  before_and_after: Record<string, never>;
  /** A move without before or after. */
  no_anchor: Record<string, never>;
  /** A move of a cell next to itself. */
  next_to_itself: {
    /** the cell */
    cell_id: string;
  };
  /** Only code cells run. */
  not_code: {
    /** the cell */
    cell_id: string;
    /** its type */
    cell_type: string;
  };
  /** Running a cell needs the notebook open in a view. */
  no_view: Record<string, never>;
  /** Running a cell needs the notebook's kernel. */
  no_kernel: Record<string, never>;
  /** A run named the source it expects and the cell holds other code now (nothing ran). */
  source_changed: {
    /** the cell */
    cell_id: string;
  };
  /** Anything else the operation threw; only the message says what. */
  failed: Record<string, never>;
}

export type ErrorCode = keyof IErrorFields;

/** Every error code, in the order the JSON lists them. */
export const ERROR_CODES: readonly ErrorCode[] = [
  'path_mismatch',
  'notebook_closed',
  'malformed_request',
  'unknown_operation',
  'bad_argument',
  'bad_cell_type',
  'no_cell',
  'duplicate_id',
  'before_and_after',
  'no_anchor',
  'next_to_itself',
  'not_code',
  'no_view',
  'no_kernel',
  'source_changed',
  'failed'
];
export interface BridgeMessages {}
/**
 * The cell an operation is about.
 *
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "CellArgs".
 */
export interface CellArgs {
  cell_id: string;
}
/**
 * The deleted cell, and the index it had.
 *
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "DeletedCell".
 */
export interface DeletedCell {
  cell_type: string;
  edited_since_run?: boolean;
  execution_count: number | null;
  id: string;
  index: number;
  metadata: {
    [k: string]: unknown;
  };
  outputs: {
    [k: string]: unknown;
  }[];
  source: string;
}
/**
 * A new cell: its source and type, and where it goes (neither anchor: at the end).
 *
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "InsertArgs".
 */
export interface InsertArgs {
  after?: string;
  before?: string;
  cell_id?: string;
  cell_type: 'code' | 'markdown' | 'raw';
  source: string;
}
/**
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "InterruptArgs".
 */
export interface InterruptArgs {
  cell_id?: string;
}
/**
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "InterruptResult".
 */
export interface InterruptResult {
  interrupted: boolean;
}
/**
 * ``insert`` as frontends of protocol 2 and older take it: the id to reuse is ``id``.
 *
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "LegacyInsertArgs".
 */
export interface LegacyInsertArgs {
  after?: string;
  before?: string;
  cell_type: 'code' | 'markdown' | 'raw';
  id?: string;
  source: string;
}
/**
 * Where the cell goes: before one cell or after one (exactly one of them).
 *
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "MoveArgs".
 */
export interface MoveArgs {
  after?: string;
  before?: string;
  cell_id: string;
}
/**
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "MoveResult".
 */
export interface MoveResult {
  index: number;
}
/**
 * An operation that takes no arguments.
 *
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "NoArgs".
 */
export interface NoArgs {}
/**
 * The arguments of each operation's request.
 *
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "OperationArgs".
 */
export interface OperationArgs {
  delete: CellArgs;
  insert: InsertArgs;
  interrupt: InterruptArgs;
  move: MoveArgs;
  ping: NoArgs;
  read: NoArgs;
  read_cell: CellArgs;
  run: RunArgs;
  save: NoArgs;
  set_type: SetTypeArgs;
  update: UpdateArgs;
}
/**
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "RunArgs".
 */
export interface RunArgs {
  cell_id: string;
  source?: string;
  timeout: number | null;
}
/**
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "SetTypeArgs".
 */
export interface SetTypeArgs {
  cell_id: string;
  cell_type: 'code' | 'markdown' | 'raw';
}
/**
 * The cell's new source, replacing the old.
 *
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "UpdateArgs".
 */
export interface UpdateArgs {
  cell_id: string;
  source: string;
}
/**
 * The result of each operation's successful reply.
 *
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "OperationResults".
 */
export interface OperationResults {
  delete: DeletedCell;
  insert: WireCell;
  interrupt: InterruptResult;
  move: MoveResult;
  ping: PingResult;
  read: ReadResult;
  read_cell: WireCell;
  run: RunReply;
  save: SaveResult;
  set_type: WireCell;
  update: WireCell;
}
/**
 * A cell as replies carry it: every field, the source as one string.
 *
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "WireCell".
 */
export interface WireCell {
  cell_type: string;
  edited_since_run?: boolean;
  execution_count: number | null;
  id: string;
  metadata: {
    [k: string]: unknown;
  };
  outputs: {
    [k: string]: unknown;
  }[];
  source: string;
}
/**
 * Who answers, for which notebook.
 *
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "PingResult".
 */
export interface PingResult {
  frontend: string;
  instance?: string;
  path: string;
  protocol?: number;
  server_root?: string;
  version: string;
}
/**
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "ReadResult".
 */
export interface ReadResult {
  cells: WireCell[];
  dirty: boolean;
  path: string;
}
/**
 * How a run ended.
 *
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "RunReply".
 */
export interface RunReply {
  error?: RunError;
  execution_count: number | null;
  outputs: {
    [k: string]: unknown;
  }[];
  status: 'ok' | 'error' | 'aborted' | 'timeout';
}
/**
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "RunError".
 */
export interface RunError {
  ename: string;
  evalue: string;
  traceback: string[];
}
/**
 * Nothing: the notebook is saved.
 *
 * This interface was referenced by `BridgeMessages`'s JSON-Schema
 * via the `definition` "SaveResult".
 */
export interface SaveResult {}

/** The arguments of operation `Op`. */
export type ArgsOf<Op extends Operation> = OperationArgs[Op];
/** The result of operation `Op`. */
export type ResultOf<Op extends Operation> = OperationResults[Op];

export const INSERT_CELL_ID = 3;
