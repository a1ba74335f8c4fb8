/**
 * The bridge's running cells, for `interrupt`: a Stop never interrupts the kernel while
 * the agent's cell is still queued behind the user's own running cell (that would stop
 * the user's cell); the agent's cell is interrupted as soon as it starts.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import type { Kernel } from '@jupyterlab/services';

import { Running } from '../src/running';

function fakeKernel(): {
  kernel: Kernel.IKernelConnection;
  interrupts: number;
} {
  const fake = {
    interrupts: 0,
    kernel: {
      interrupt: async () => {
        fake.interrupts += 1;
      }
    } as unknown as Kernel.IKernelConnection
  };
  return fake;
}

describe('Running', () => {
  it('gives the kernel to interrupt once the cell runs, not while it is queued', () => {
    const running = new Running();
    const notebook = {};
    const { kernel } = fakeKernel();
    running.add(notebook, 'cell-1', kernel);
    assert.equal(running.interrupting(notebook, 'cell-1'), null, 'queued');
    running.started(notebook, 'cell-1', kernel);
    assert.equal(running.interrupting(notebook, 'cell-1'), kernel, 'running');
    running.delete(notebook, 'cell-1', kernel);
    assert.equal(running.interrupting(notebook, 'cell-1'), null, 'ended');
  });

  it('interrupts a cell stopped while queued as soon as it starts, once', () => {
    const running = new Running();
    const notebook = {};
    const fake = fakeKernel();
    running.add(notebook, 'cell-1', fake.kernel);
    running.interrupting(notebook, 'cell-1'); // Stop while queued: nothing yet
    assert.equal(fake.interrupts, 0);
    running.started(notebook, 'cell-1', fake.kernel);
    assert.equal(fake.interrupts, 1);
    running.started(notebook, 'cell-1', fake.kernel);
    assert.equal(fake.interrupts, 1);
  });

  it('ignores a start from another kernel connection', () => {
    const running = new Running();
    const notebook = {};
    const first = fakeKernel();
    const second = fakeKernel();
    running.add(notebook, 'cell-1', first.kernel);
    running.interrupting(notebook, 'cell-1');
    running.started(notebook, 'cell-1', second.kernel);
    assert.equal(first.interrupts + second.interrupts, 0);
  });
});
