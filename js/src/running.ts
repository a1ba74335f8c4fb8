import type { Kernel } from '@jupyterlab/services';

/**
 * The cells the bridge runs, per notebook, for `interrupt`: sent, then started once the
 * kernel echoes their input. A cell still queued behind the user's own running cell is
 * not interrupted (the interrupt would stop the user's cell); it is interrupted as soon
 * as it starts.
 */
export class Running {
  /** Sent to `kernel` (queued there until the kernel starts it). */
  add(context: object, cellId: string, kernel: Kernel.IKernelConnection): void {
    this._cells(context).set(cellId, { kernel, started: false, stop: false });
  }

  /** The kernel began to run it: interrupted now if a stop came while it was queued. */
  started(
    context: object,
    cellId: string,
    kernel: Kernel.IKernelConnection
  ): void {
    const cell = this._byContext.get(context)?.get(cellId);
    if (cell?.kernel !== kernel) {
      return;
    }
    cell.started = true;
    if (cell.stop) {
      cell.stop = false;
      void kernel.interrupt().catch(error => {
        console.warn('jupyter_agent: could not interrupt the kernel', error);
      });
    }
  }

  delete(
    context: object,
    cellId: string,
    kernel: Kernel.IKernelConnection
  ): void {
    const cells = this._byContext.get(context);
    if (cells?.get(cellId)?.kernel === kernel) {
      cells.delete(cellId);
    }
  }

  /**
   * Interrupt the cell: its kernel is returned when the cell runs now (the caller
   * interrupts it); a queued one is marked, to be interrupted as it starts.
   */
  interrupting(
    context: object,
    cellId: string
  ): Kernel.IKernelConnection | null {
    const cell = this._byContext.get(context)?.get(cellId);
    if (cell === undefined) {
      return null;
    }
    if (!cell.started) {
      cell.stop = true;
      return null;
    }
    return cell.kernel;
  }

  private _cells(context: object): Map<string, IRunningCell> {
    let cells = this._byContext.get(context);
    if (cells === undefined) {
      cells = new Map();
      this._byContext.set(context, cells);
    }
    return cells;
  }

  private _byContext = new WeakMap<object, Map<string, IRunningCell>>();
}

interface IRunningCell {
  kernel: Kernel.IKernelConnection;
  started: boolean;
  /** A stop came while the cell was queued. */
  stop: boolean;
}
