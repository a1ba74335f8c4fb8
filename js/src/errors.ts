/**
 * The bridge's failures. Every error the kernel is told about is a
 * BridgeError made by one of BridgeErrors' constructors, one per code of the
 * protocol (src/protocol.ts, from bridge_protocol.json): the compiler checks
 * that each code has one and that no other code is sent. The kernel branches
 * on the code and words the error for the model itself; `message` is for
 * people reading logs.
 */
import type { PartialJSONObject } from '@lumino/coreutils';

import type { ErrorCode, IErrorFields } from './protocol';

/**
 * What a failure adds to a reply (after `id` and `ok: false`) or to a comm's
 * close: the code, the message, and the code's fields (IErrorFields).
 */
export interface IErrorBody extends PartialJSONObject {
  code: ErrorCode;
  message: string;
}

export class BridgeError<C extends ErrorCode = ErrorCode> extends Error {
  constructor(
    readonly code: C,
    readonly fields: IErrorFields[C],
    message: string
  ) {
    super(message);
    this.name = 'BridgeError';
  }

  /** The code, the message and the code's fields, as the kernel reads them. */
  body(): IErrorBody {
    const fields: PartialJSONObject = this.fields;
    return { ...fields, code: this.code, message: this.message };
  }
}

type Constructors = {
  [C in ErrorCode]: (...args: never[]) => BridgeError<C>;
};

/** One constructor per error code: the only place a BridgeError is made. */
export const BridgeErrors = {
  path_mismatch: () =>
    new BridgeError(
      'path_mismatch',
      {},
      'path mismatch: no notebook on this kernel has that path'
    ),
  notebook_closed: () =>
    new BridgeError('notebook_closed', {}, 'notebook closed'),
  malformed_request: (problem: string) =>
    new BridgeError(
      'malformed_request',
      { problem },
      `malformed request: ${problem}`
    ),
  unknown_operation: (op: string) =>
    new BridgeError('unknown_operation', { op }, `unknown operation ${op}`),
  bad_argument: (argument: string, expected: string) =>
    new BridgeError(
      'bad_argument',
      { argument, expected },
      `missing or invalid argument ${JSON.stringify(argument)} (${expected})`
    ),
  bad_cell_type: (value: unknown) => {
    const cellType = JSON.stringify(value) ?? 'undefined';
    return new BridgeError(
      'bad_cell_type',
      { cell_type: cellType },
      `unknown cell type ${cellType}: use code, markdown or raw`
    );
  },
  no_cell: (id: string) =>
    new BridgeError('no_cell', { cell_id: id }, `no cell with id ${id}`),
  duplicate_id: (id: string) =>
    new BridgeError(
      'duplicate_id',
      { cell_id: id },
      `a cell with id ${id} already exists`
    ),
  before_and_after: () =>
    new BridgeError(
      'before_and_after',
      {},
      'give either before or after, not both'
    ),
  no_anchor: () =>
    new BridgeError('no_anchor', {}, 'give one of before or after'),
  next_to_itself: (id: string) =>
    new BridgeError(
      'next_to_itself',
      { cell_id: id },
      `cannot move cell ${id} next to itself`
    ),
  not_code: (id: string, type: string) =>
    new BridgeError(
      'not_code',
      { cell_id: id, cell_type: type },
      `cell ${id} is a ${type} cell; only code cells run`
    ),
  no_view: () =>
    new BridgeError(
      'no_view',
      {},
      'the notebook is not open in a view, so its cells cannot run'
    ),
  no_kernel: () =>
    new BridgeError(
      'no_kernel',
      {},
      'the notebook has no running kernel, so its cells cannot run'
    ),
  source_changed: (id: string) =>
    new BridgeError(
      'source_changed',
      { cell_id: id },
      `cell ${id} holds other code than the run expected; nothing ran`
    ),
  failed: (message: string) =>
    new BridgeError('failed', {}, message || 'operation failed')
} satisfies Constructors;

/** `error` as a BridgeError: itself, or `failed` with its message. */
export function asBridgeError(error: unknown): BridgeError {
  if (error instanceof BridgeError) {
    return error;
  }
  return BridgeErrors.failed(
    error instanceof Error ? error.message : String(error)
  );
}
