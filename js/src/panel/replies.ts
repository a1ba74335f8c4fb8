/**
 * Commands from a view and the kernel's replies: each command gets an id (the view's id
 * and a count), and its promise settles when the reply with that id comes (rejected with
 * the kernel's sentence when it refused). Without a subshell (channel.ts) a click reaches
 * the kernel only between cells, so a reply still missing after SLOW_REPLY shows a note
 * that the command waits (it is not lost).
 */
import { h } from './dom';
import type { CommandArgs, CommandName, Reply } from './types';

/**
 * A command still unanswered after this long is waiting for the running cell, and the
 * panel says so.
 */
export const SLOW_REPLY = 1500; // ms

interface IPendingReply {
  resolve(reply: unknown): void;
  reject(error: Error): void;
  slow: boolean;
  timer?: ReturnType<typeof setTimeout>;
}

export class Replies {
  private nextId = 1;
  private waiting = new Map<string, IPendingReply>();
  /** Shown while a command waits longer than SLOW_REPLY (the caller places it). */
  readonly waitNote: HTMLElement = h('div', {
    class: 'ja-line ja-note ja-wait',
    hidden: true,
    text: 'Sent. The kernel is running a cell; it reads this when the cell ends.'
  });

  /** `send`: to the kernel (KernelChannel.send). */
  constructor(
    private readonly viewId: string,
    private readonly send: (message: Record<string, unknown>) => void
  ) {}

  /** Send a command; the promise settles with its reply. */
  command<K extends CommandName>(
    name: K,
    args?: CommandArgs<K>
  ): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      const id = `${this.viewId}:${this.nextId++}`;
      const pending: IPendingReply = { resolve, reject, slow: false };
      pending.timer = setTimeout(() => {
        pending.slow = true;
        this.showWaitNote();
      }, SLOW_REPLY);
      this.waiting.set(id, pending);
      this.send({ type: 'command', id, name, ...args });
    });
  }

  /** A reply: settles the command it answers. False when it answers none of this view's. */
  settle(reply: Reply): boolean {
    const pending = reply.id === null ? undefined : this.waiting.get(reply.id);
    if (!pending || reply.id === null) return false;
    this.waiting.delete(reply.id);
    clearTimeout(pending.timer);
    this.showWaitNote();
    if (reply.ok) pending.resolve(reply);
    else pending.reject(new Error(reply.error || 'The command failed.'));
    return true;
  }

  /** The view is gone: no timer is left behind (its promises never settle). */
  dispose(): void {
    for (const pending of this.waiting.values()) clearTimeout(pending.timer);
    this.waiting.clear();
  }

  private showWaitNote(): void {
    this.waitNote.hidden = ![...this.waiting.values()].some(p => p.slow);
  }
}
