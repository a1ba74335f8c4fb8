/**
 * The agent's control channel to a kernel (src/control.ts) on a fake kernel connection:
 * messages wait in order while the subshell is made, then carry its id; a kernel without
 * subshells gets them on its main shell; a restart makes a new subshell; the connection
 * going deletes it.
 */
import { strict as assert } from 'node:assert';
import { describe, it, mock } from 'node:test';

import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { PromiseDelegate } from '@lumino/coreutils';
import { Signal } from '@lumino/signaling';

import {
  KernelControl,
  KernelControls,
  SUBSHELL_TIMEOUT_MS
} from '../src/control';

type CreateReply = { content: { subshell_id: string } };

/** What KernelControl uses of a kernel connection; requests wait for the test to answer. */
class FakeKernel {
  constructor(
    public supportsSubshells = true,
    readonly id = 'kernel-1'
  ) {}
  clientId = 'client-1';
  username = 'me';
  subshellId: string | null = null;
  status: Kernel.Status = 'idle';
  isDisposed = false;
  statusChanged = new Signal<this, Kernel.Status>(this);
  connectionStatusChanged = new Signal<this, Kernel.ConnectionStatus>(this);
  disposed = new Signal<this, void>(this);
  private _info = new PromiseDelegate<void>();
  info = this._info.promise;
  creates: PromiseDelegate<CreateReply>[] = [];
  deleted: string[] = [];
  infoRequests = 0;
  sent: KernelMessage.ICommMsgMsg<'shell'>[] = [];

  answerInfo(): void {
    this._info.resolve();
  }
  requestCreateSubshell(): { done: Promise<CreateReply> } {
    const reply = new PromiseDelegate<CreateReply>();
    this.creates.push(reply);
    return { done: reply.promise };
  }
  answerCreate(subshellId: string): void {
    this.creates.shift()!.resolve({ content: { subshell_id: subshellId } });
  }
  requestDeleteSubshell(content: { subshell_id: string }): void {
    this.deleted.push(content.subshell_id);
  }
  requestKernelInfo(): Promise<void> {
    this.infoRequests++;
    return Promise.resolve();
  }
  sendShellMessage(msg: KernelMessage.ICommMsgMsg<'shell'>): void {
    this.sent.push(msg);
  }
  /** A restart as the connection signals it: status, then the socket back. */
  restart(): void {
    this.statusChanged.emit('restarting');
    this.connectionStatusChanged.emit('connecting');
    this.connectionStatusChanged.emit('connected');
  }
  dispose(): void {
    this.isDisposed = true;
    this.disposed.emit();
  }
  get connection(): Kernel.IKernelConnection {
    return this as unknown as Kernel.IKernelConnection;
  }
}

/** Let pending promise callbacks run. */
const settle = () => new Promise(resolve => setImmediate(resolve));

/** What the kernel got: [subshell id, comm id, data] per message. */
const received = (kernel: FakeKernel) =>
  kernel.sent.map(msg => [
    msg.header.subshell_id,
    msg.content.comm_id,
    msg.content.data
  ]);

/** A control whose kernel has answered kernel_info and made subshell `id`. */
async function withSubshell(
  id: string
): Promise<{ kernel: FakeKernel; control: KernelControl }> {
  const kernel = new FakeKernel();
  const control = new KernelControl(kernel.connection);
  kernel.answerInfo();
  await settle();
  kernel.answerCreate(id);
  await control.known;
  return { kernel, control };
}

describe('KernelControl', () => {
  it('keeps messages in order while the subshell is made, then sends them over it', async () => {
    const kernel = new FakeKernel();
    const control = new KernelControl(kernel.connection);
    control.send('comm-a', { n: 1 });
    assert.equal(control.subshell, 'pending');
    kernel.answerInfo();
    await settle();
    control.send('comm-b', { n: 2 });
    assert.equal(kernel.creates.length, 1);
    assert.deepEqual(kernel.sent, []);

    kernel.answerCreate('sub-1');
    assert.equal(await control.known, true);
    control.send('comm-a', { n: 3 });
    assert.equal(control.subshell, true);
    assert.deepEqual(received(kernel), [
      ['sub-1', 'comm-a', { n: 1 }],
      ['sub-1', 'comm-b', { n: 2 }],
      ['sub-1', 'comm-a', { n: 3 }]
    ]);
    assert.equal(kernel.creates.length, 0, 'one subshell for every message');
  });

  it('builds comm_msgs as JupyterLab does, from this client', async () => {
    const { kernel, control } = await withSubshell('sub-1');
    control.send('comm-a', { method: 'custom', content: { type: 'hello' } });
    const [msg] = kernel.sent;
    assert.equal(msg.channel, 'shell');
    assert.equal(msg.header.msg_type, 'comm_msg');
    assert.equal(msg.header.session, 'client-1');
    assert.equal(msg.header.username, 'me');
    assert.deepEqual(msg.content, {
      comm_id: 'comm-a',
      data: { method: 'custom', content: { type: 'hello' } }
    });
    assert.deepEqual(msg.buffers, []);
  });

  it('sends on the main shell to a kernel without subshells', async () => {
    const kernel = new FakeKernel(false);
    const control = new KernelControl(kernel.connection);
    control.send('comm-a', { n: 1 });
    kernel.answerInfo();
    assert.equal(await control.known, false);
    control.send('comm-a', { n: 2 });
    assert.equal(control.subshell, false);
    assert.equal(kernel.creates.length, 0);
    assert.deepEqual(received(kernel), [
      [null, 'comm-a', { n: 1 }],
      [null, 'comm-a', { n: 2 }]
    ]);
  });

  it('makes a new subshell after a restart; a late reply for the old kernel is ignored', async () => {
    const { kernel, control } = await withSubshell('sub-1');

    kernel.statusChanged.emit('restarting');
    control.send('comm-a', { n: 1 }); // the connection would drop it now: it waits
    assert.equal(control.subshell, 'pending');
    assert.deepEqual(kernel.sent, []);
    kernel.connectionStatusChanged.emit('connected');
    await settle();
    assert.equal(
      kernel.infoRequests,
      1,
      "the new kernel's kernel_info is asked for"
    );
    kernel.answerCreate('sub-2');
    assert.equal(await control.known, true);
    assert.deepEqual(received(kernel), [['sub-2', 'comm-a', { n: 1 }]]);

    // Restarted again while the subshell is being made: that reply is the old kernel's.
    kernel.restart();
    await settle();
    kernel.restart();
    await settle();
    assert.equal(kernel.creates.length, 2);
    kernel.answerCreate('sub-old');
    await settle();
    assert.equal(control.subshell, 'pending');
    kernel.answerCreate('sub-3');
    await control.known;
    control.send('comm-a', { n: 2 });
    assert.deepEqual(received(kernel).slice(1), [
      ['sub-3', 'comm-a', { n: 2 }]
    ]);
  });

  it('deletes its subshell when the connection goes, and sends no more', async () => {
    const { kernel, control } = await withSubshell('sub-1');
    control.send('comm-a', { n: 1 });
    kernel.dispose();
    control.send('comm-a', { n: 2 });
    assert.deepEqual(kernel.deleted, ['sub-1']);
    assert.equal(kernel.sent.length, 1);
  });
});

describe('KernelControl, a kernel slow to make its subshell', () => {
  it('sends on the main shell after the timeout, and deletes a subshell made later', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const kernel = new FakeKernel();
      const control = new KernelControl(kernel.connection);
      control.send('comm-a', { n: 1 });
      kernel.answerInfo();
      await settle();
      assert.equal(kernel.creates.length, 1);
      mock.timers.tick(SUBSHELL_TIMEOUT_MS);
      assert.equal(await control.known, false);
      assert.deepEqual(received(kernel), [[null, 'comm-a', { n: 1 }]]);
      kernel.answerCreate('late');
      await settle();
      assert.deepEqual(kernel.deleted, ['late']);
    } finally {
      mock.timers.reset();
    }
  });
});

describe('KernelControls', () => {
  it('gives one control per kernel, and a new one once its connection has gone', () => {
    const controls = new KernelControls();
    const notebook = new FakeKernel();
    const console = new FakeKernel(); // a second connection to the same kernel
    const first = controls.of(notebook.connection);
    assert.equal(controls.of(console.connection), first);
    assert.notEqual(
      controls.of(new FakeKernel(true, 'kernel-2').connection),
      first
    );
    notebook.dispose();
    const second = controls.of(console.connection);
    assert.notEqual(second, first);
    assert.equal(second.kernel, console.connection);
  });

  it("knows each kernel's panel once a view spoke, until the kernel restarts or goes", () => {
    const controls = new KernelControls();
    const kernel = new FakeKernel();
    assert.equal(controls.panelOf(kernel.connection.id), null);
    controls.of(kernel.connection).sawPanel('widget-1');
    assert.equal(controls.panelOf(kernel.connection.id), 'widget-1');
    kernel.restart(); // the widget died with the process; the id stays the kernel's
    assert.equal(controls.panelOf(kernel.connection.id), null);
    controls.of(kernel.connection).sawPanel('widget-2');
    kernel.dispose();
    assert.equal(controls.panelOf(kernel.connection.id), null);
  });
});
