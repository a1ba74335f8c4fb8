/**
 * The bridge's built-in operations. Each is an async handler in the dispatch
 * table; the notebook operations (read, insert, update, delete, move, run
 * cells, save) join `ping` here.
 */
import type { IDisposable } from '@lumino/disposable';

import type { OperationTable } from './model';
import { FRONTEND, type IBridgeTarget } from './tokens';

/** `ping`: which notebook this comm is bound to, and who answers. */
export function registerCoreOperations<T extends IBridgeTarget>(
  table: OperationTable<T>,
  version: string
): IDisposable[] {
  return [
    table.register('ping', async (_request, target) => ({
      path: target.path,
      frontend: FRONTEND,
      version
    }))
  ];
}
