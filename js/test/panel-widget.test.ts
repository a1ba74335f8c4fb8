/**
 * The panel view's handling of kernel messages (src/panel/widget.ts) on a fake DOM and a
 * fake anywidget model: a reply resolves the command it answers, a refused message the
 * view sent is shown, batches before the snapshot are dropped, and an unknown message
 * type is reported rather than ignored.
 */
import { strict as assert } from 'node:assert';
import { afterEach, describe, it, mock } from 'node:test';

import widget from '../src/panel/widget';
import type { IModel } from '../src/panel/widget';
import { FakeElement, install } from './fakedom';

install();

const STATE: Record<string, unknown> = {
  status: 'idle',
  detail: '',
  stop_reason: '',
  busy: false,
  role: 'planner',
  roles: [{ name: 'planner', description: '' }],
  model_name: 'm',
  model_label: '',
  session_id: 's',
  sessions: [],
  notebook: '',
  bridge_mode: '',
  usage: {},
  max_steps: 30,
  pending_question: '',
  pending_approval: '',
  running_code: false,
  kernel_id: '',
  dock: 'inline',
  widget_id: 'w',
  sandbox: '',
  sandbox_detail: '',
  sandboxed: false
};

function mount(): {
  el: FakeElement;
  sent: Record<string, unknown>[];
  receive(message: unknown): void;
} {
  const handlers = new Map<string, ((...args: any[]) => void)[]>();
  const sent: Record<string, unknown>[] = [];
  const model: IModel = {
    get: name => STATE[name] as never,
    on: (name, callback) =>
      handlers.set(name, [...(handlers.get(name) ?? []), callback]),
    off: () => undefined,
    send: message => void sent.push(message)
  };
  const el = new FakeElement('div');
  widget.render({ model, el: el as unknown as HTMLElement });
  return {
    el,
    sent,
    receive: message =>
      (handlers.get('msg:custom') ?? []).forEach(h => h(message))
  };
}

afterEach(() => mock.restoreAll());

describe('the panel view', () => {
  it('says hello, then shows the snapshot and the batches after it', () => {
    const view = mount();
    const hello = view.sent.find(m => m.type === 'hello');
    assert.ok(hello, 'no hello');
    view.receive({
      type: 'events',
      entries: [{ kind: 'note', text: 'before the snapshot', n: 1 }]
    });
    view.receive({
      type: 'snapshot',
      view: hello.view,
      entries: [{ kind: 'note', text: 'from the snapshot', n: 1 }]
    });
    view.receive({
      type: 'events',
      entries: [{ kind: 'note', text: 'live', n: 2 }]
    });
    const notes = view.el
      .querySelectorAll('div.ja-transcript div.ja-note')
      .map(n => n.textContent);
    assert.deepEqual(notes, ['from the snapshot', 'live']);
  });

  it('shows the error when the kernel refuses a message it cannot read', () => {
    const view = mount();
    view.receive({
      type: 'reply',
      id: null,
      ok: false,
      error: "bad 'answer' message: question_id: Field required"
    });
    const errors = view.el
      .querySelectorAll('div.ja-error')
      .map(n => n.textContent);
    assert.deepEqual(errors, [
      "bad 'answer' message: question_id: Field required"
    ]);
  });

  it('reports an unknown message type instead of dropping it silently', () => {
    const logged = mock.method(console, 'error', () => {});
    const view = mount();
    view.receive({ type: 'no_such_type' });
    assert.equal(logged.mock.callCount(), 1);
    assert.match(
      String(logged.mock.calls[0].arguments[0]),
      /unknown kernel message/
    );
  });
});
