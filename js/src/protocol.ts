/**
 * The notebook bridge's names and error codes, generated from
 * jupyter_agent/jupyter/bridge_protocol.json by scripts/protocol.js
 * (`npm run build:protocol`). Do not edit: test/protocol.test.ts fails when
 * this file is not what the JSON gives.
 */

/** The comm target the kernel opens. */
export const COMM_TARGET = 'jupyter_agent';

/** The protocol version the kernel side speaks. */
export const PROTOCOL_VERSION = 2;

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
