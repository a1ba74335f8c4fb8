/**
 * The panel view's handling of kernel messages (src/panel/widget.ts) on a fake DOM and a
 * fake anywidget model: a reply resolves the command it answers, a refused message the
 * view sent is shown, batches before the snapshot are dropped, and an unknown message
 * type is reported rather than ignored.
 */
import { strict as assert } from 'node:assert';
import { afterEach, describe, it, mock } from 'node:test';

import widget from '../src/panel/widget';
import { STOP_ANSWER_GRACE } from '../src/panel/interrupt';
import type { IModel } from '../src/panel/widget';
import {
  fakeDocument,
  FakeElement,
  FakeFocusEvent,
  FakeKeyboardEvent,
  install
} from './fakedom';

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
  sandboxed: false,
  plan_ready: false,
  model_ready: true,
  model_setup: '',
  pausing: false,
  waiting_task: ''
};

function mount(state: Record<string, unknown> = {}): {
  el: FakeElement;
  sent: Record<string, unknown>[];
  receive(message: unknown): void;
  /** The kernel sets a trait: the view hears of the change. */
  set(name: string, value: unknown): void;
} {
  const handlers = new Map<string, ((...args: any[]) => void)[]>();
  const sent: Record<string, unknown>[] = [];
  const model: IModel = {
    get: name => ({ ...STATE, ...state })[name] as never,
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
      (handlers.get('msg:custom') ?? []).forEach(h => h(message)),
    set: (name, value) => {
      state[name] = value;
      (handlers.get(`change:${name}`) ?? []).forEach(h => h());
    }
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

  it('says a planning run ended with a plan for review, not that it completed', () => {
    const status = (state: Record<string, unknown>) =>
      mount(state).el.querySelector('span.ja-status')?.textContent;
    assert.equal(
      status({ status: 'completed', plan_ready: true }),
      'plan ready for review'
    );
    assert.equal(status({ status: 'completed' }), 'completed');
  });

  it('pins the plan strip above the transcript while there is a plan', () => {
    const view = mount();
    const panel = view.el.querySelector('div.ja-panel') as FakeElement;
    const strip = panel.querySelector('section.ja-plan-strip') as FakeElement;
    const transcript = panel.querySelector('div.ja-transcript') as FakeElement;
    // Outside the transcript's scroll, just above it.
    assert.equal(strip.parentNode, panel);
    assert.equal(
      panel.children.indexOf(strip) + 1,
      panel.children.indexOf(transcript)
    );
    assert.equal(strip.hasAttribute('hidden'), true);
    const hello = view.sent.find(m => m.type === 'hello');
    view.receive({
      type: 'snapshot',
      view: hello?.view,
      entries: [
        {
          kind: 'plan',
          n: 1,
          plan: {
            goal: 'Tidy',
            steps: [
              { step_number: 1, action: 'Load' },
              { step_number: 2, action: 'Drop duplicate rows' }
            ]
          }
        },
        { kind: 'plan_step', n: 2, step_number: 1, status: 'done' },
        { kind: 'plan_step', n: 3, step_number: 2, status: 'in_progress' },
        { kind: 'plan_stopped', n: 4 }
      ]
    });
    assert.equal(strip.hasAttribute('hidden'), false);
    assert.equal(
      strip.querySelector('.ja-strip-step')?.textContent,
      'Step 2 of 2: Drop duplicate rows stopped'
    );
    const button = strip.querySelector(
      'button.ja-strip-execute'
    ) as FakeElement;
    assert.equal(button.textContent, 'Continue plan');
    button.click();
    const sent = view.sent.find(m => m.type === 'command');
    assert.equal(sent?.name, 'execute_plan');
  });

  it('shows the set-up box instead of "ready" when no model can be called', () => {
    const ready = mount();
    assert.equal(
      ready.el.querySelector('form.ja-setup')?.hasAttribute('hidden'),
      true
    );
    assert.equal(
      ready.el.querySelector('span.ja-status')?.textContent,
      'ready'
    );

    const why = 'No Anthropic API key found: enter one in the panel.';
    const view = mount({ model_ready: false, model_setup: why });
    const box = view.el.querySelector('form.ja-setup');
    assert.ok(box && !box.hasAttribute('hidden'), 'no set-up box');
    assert.equal(
      view.el.querySelector('span.ja-status')?.textContent,
      'set-up needed'
    );
    assert.equal(view.el.querySelector('div.ja-setup-why')?.textContent, why);
    const text = box.textContent;
    assert.match(text, /Use for this session/);
    assert.match(text, /Save for my user/);
    assert.match(text, /ScriptedModel/);
    assert.match(text, /OPENAI_API_KEY/);
    assert.match(text, /ollama:qwen3/);
    assert.match(text, /bedrock:MODEL_ID/);
  });

  it('sends the key from a masked field once and clears it at once', async () => {
    const view = mount({ model_ready: false, model_setup: 'No key.' });
    const input = view.el.querySelector('input.ja-key');
    assert.ok(input);
    assert.equal(input.getAttribute('type'), 'password');
    assert.equal(input.getAttribute('autocomplete'), 'off');
    input.value = '  sk-ant-test-key  ';
    view.el.querySelector('form.ja-setup')?.dispatch('submit');
    assert.equal(input.value, '');
    const commands = () => view.sent.filter(m => m.type === 'command');
    assert.deepEqual(
      commands().map(({ name, key, save }) => ({ name, key, save })),
      [{ name: 'set_key', key: 'sk-ant-test-key', save: false }]
    );
    // Saved for the user: the other button.
    input.value = 'sk-ant-other';
    const save = view.el
      .querySelectorAll('form.ja-setup button')
      .find(b => b.textContent === 'Save for my user');
    assert.ok(save);
    view.receive({
      type: 'reply',
      id: commands()[0].id,
      ok: true,
      error: null
    });
    await new Promise(resolve => setTimeout(resolve, 0));
    save.click();
    assert.equal(input.value, '');
    assert.deepEqual(
      commands().map(({ name, save }) => ({ name, save })),
      [
        { name: 'set_key', save: false },
        { name: 'set_key', save: true }
      ]
    );
  });

  it('says what is wrong with a key next to its field, which names it', async () => {
    const view = mount({ model_ready: false, model_setup: 'No key.' });
    const input = view.el.querySelector('input.ja-key')!;
    const problem = () =>
      view.el.querySelector(
        `div[id="${input.getAttribute('aria-describedby')}"]`
      )!;
    assert.equal(problem().hasAttribute('hidden'), true);
    view.el.querySelector('form.ja-setup')?.dispatch('submit');
    // In the box, right under the field, not in the error line under the transcript.
    assert.equal(problem().textContent, 'Enter an API key first.');
    assert.equal(problem().hasAttribute('hidden'), false);
    assert.ok(problem().className.includes('ja-key-problem'));
    assert.equal(input.getAttribute('aria-invalid'), 'true');
    assert.equal(
      view.el.querySelectorAll('div.ja-errors div.ja-error').length,
      0
    );
    // A key the kernel refuses is said there too; a new try clears it.
    input.value = 'two words';
    view.el.querySelector('form.ja-setup')?.dispatch('submit');
    assert.equal(input.hasAttribute('aria-invalid'), false);
    const [sent] = view.sent.filter(m => m.type === 'command');
    view.receive({
      type: 'reply',
      id: sent.id,
      ok: false,
      error: 'That does not look like an API key.'
    });
    await new Promise(resolve => setTimeout(resolve, 0));
    assert.equal(problem().textContent, 'That does not look like an API key.');
    assert.equal(input.getAttribute('aria-invalid'), 'true');
  });

  it('names only ways to get going that are on screen (no hidden Model picker)', () => {
    const view = mount({ model_ready: false, model_setup: 'No key.' });
    const more = view.el.querySelector('details.ja-setup-more')!.textContent;
    assert.match(more, /%agent model openai:gpt-5/);
    assert.doesNotMatch(more, /in Model/);
  });

  it('says "Type a message first." when Send is pressed with an empty box', () => {
    const view = mount();
    view.el.querySelector('form.ja-input')?.dispatch('submit');
    assert.deepEqual(
      view.el
        .querySelectorAll('div.ja-errors div.ja-error')
        .map(n => n.textContent),
      ['Type a message first.']
    );
    assert.equal(
      view.sent.filter(m => m.type === 'command').length,
      0,
      'nothing sent'
    );
  });

  it('offers Retry on an error, which sends retry', () => {
    const view = mount();
    const hello = view.sent.find(m => m.type === 'hello');
    view.receive({
      type: 'snapshot',
      view: hello?.view,
      entries: [
        {
          kind: 'error',
          message:
            'The Anthropic API was overloaded; retried 2 times over 1.5 s.',
          error_type: 'ModelError',
          n: 1
        }
      ]
    });
    const line = view.el.querySelector('div.ja-transcript div.ja-error');
    assert.ok(line);
    assert.doesNotMatch(line.textContent, /ModelError/);
    assert.match(line.textContent, /^✗ The Anthropic API was overloaded/);
    assert.equal(line.dataset.errorType, 'ModelError');
    const retry = line.querySelector('button.ja-retry');
    assert.ok(retry);
    retry.click();
    assert.equal(retry.hasAttribute('disabled'), true);
    const sent = view.sent.filter(m => m.type === 'command');
    assert.deepEqual(
      sent.map(m => m.name),
      ['retry']
    );
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

/** The view with `entries` shown (a snapshot for this view). */
function showing(
  entries: unknown[],
  state: Record<string, unknown> = {}
): ReturnType<typeof mount> {
  const view = mount(state);
  const hello = view.sent.find(m => m.type === 'hello');
  view.receive({ type: 'snapshot', view: hello?.view, entries });
  return view;
}

const active = () =>
  (fakeDocument.activeElement as FakeElement | null)?.className ?? null;
const commandNames = (view: ReturnType<typeof mount>) =>
  view.sent.filter(m => m.type === 'command').map(m => m.name);
const escape = (el: FakeElement, composing = false) =>
  el.dispatchEvent(
    new FakeKeyboardEvent('Escape', composing) as unknown as Event
  );
/** `key` pressed where focus is; returns whether its default action still happens. */
const press = (key: string) =>
  (fakeDocument.activeElement as FakeElement).dispatchEvent(
    new FakeKeyboardEvent(key) as unknown as Event
  );
const focused = () =>
  (fakeDocument.activeElement as FakeElement | null)?.textContent ?? null;
/** Once what was queued after the entries shown ran (a card's focus). */
const settled = () => new Promise(resolve => setTimeout(resolve, 0));

const QUESTION = {
  kind: 'question',
  n: 1,
  question_id: 'q1',
  question: {
    question: 'Which column?',
    severity: 'major',
    options: [
      { label: 'price', value: 'price', description: 'What was paid' },
      { label: 'qty', value: 'qty' }
    ]
  }
};

const APPROVAL = {
  kind: 'permission_request',
  n: 1,
  request_id: 'r1',
  tool_use_id: 'tu1',
  tool_name: 'execute_command',
  summary: 'Run ls',
  remember: 'allow `ls`',
  remember_options: [
    { id: 'prefix', label: 'Always allow `ls …`', rules: ['allow `ls *`'] },
    { id: 'exact', label: 'Always allow `ls`', rules: ['allow exactly `ls`'] }
  ]
};

describe('the panel from the keyboard', () => {
  it('moves focus to the message input after an option is chosen', async () => {
    const view = showing([QUESTION], { busy: true });
    // A new question takes the focus, on its first option…
    await settled();
    assert.equal(active(), 'ja-option');
    view.el.querySelectorAll('button.ja-option')[1].click();
    // …and the answer hands it to the input (never to the disabled button).
    assert.deepEqual(commandNames(view), ['answer']);
    assert.equal(active(), 'ja-message');
  });

  it('moves focus to the message input after Allow and after Deny', () => {
    for (const name of ['Allow', 'Deny']) {
      const view = showing([APPROVAL], { busy: true });
      const button = view.el
        .querySelectorAll('section.ja-approval button')
        .find(b => b.textContent === name)!;
      button.focus();
      button.click();
      assert.deepEqual(commandNames(view), ['approve']);
      assert.equal(active(), 'ja-message', name);
    }
  });

  it('moves focus to the message input after Stop and after Execute plan', () => {
    const busy = mount({ busy: true });
    const stop = busy.el.querySelector('button.ja-stop')!;
    stop.focus();
    stop.click();
    assert.deepEqual(commandNames(busy), ['stop']);
    assert.equal(active(), 'ja-message');

    const view = showing([
      {
        kind: 'plan',
        n: 1,
        plan: { goal: 'Tidy', steps: [{ step_number: 1, action: 'Load' }] }
      }
    ]);
    const execute = view.el.querySelector('section.ja-plan button.ja-execute')!;
    execute.focus();
    execute.click();
    assert.deepEqual(commandNames(view), ['execute_plan']);
    assert.equal(active(), 'ja-message');
  });

  it('pauses a running agent and resumes it, saying where it waits', () => {
    const state: Record<string, unknown> = { busy: true, status: 'thinking' };
    const view = mount(state);
    const pause = view.el.querySelector('button.ja-pause')!;
    assert.equal(pause.textContent, 'Pause');
    pause.click();
    assert.deepEqual(commandNames(view), ['pause']);
    view.set('pausing', true); // the kernel took it: the run goes on to its next step
    const status = view.el.querySelector('.ja-status')!;
    assert.equal(status.textContent, 'thinking… · pausing at the next step');
    assert.equal(pause.textContent, 'Resume');
    view.set('status', 'paused');
    view.set('detail', 'before step 3');
    assert.equal(status.textContent, 'paused before step 3');
    pause.click();
    assert.deepEqual(commandNames(view), ['pause', 'unpause']);
    view.set('pausing', false);
    view.set('status', 'running');
    assert.equal(pause.textContent, 'Pause');
    view.set('busy', false);
    assert.equal(pause.hasAttribute('disabled'), true);
  });

  it('stops a running agent on Esc anywhere in the panel', () => {
    const view = showing([QUESTION], { busy: true });
    const option = view.el.querySelector('button.ja-option')!;
    assert.equal(escape(option), false, 'Esc was handled');
    assert.deepEqual(commandNames(view), ['stop']);
    assert.equal(active(), 'ja-message');
    // Once: Stop is disabled until the kernel says the run stopped.
    escape(option);
    assert.deepEqual(commandNames(view), ['stop']);
  });

  it('leaves Esc alone when idle or while an IME composes', () => {
    const idle = mount();
    escape(idle.el.querySelector('textarea.ja-message')!);
    assert.deepEqual(commandNames(idle), []);
    const busy = mount({ busy: true });
    escape(busy.el.querySelector('textarea.ja-message')!, true);
    assert.deepEqual(commandNames(busy), []);
  });

  it('closes the open scope menu on Esc first, without stopping', () => {
    const view = showing([APPROVAL], { busy: true });
    const more = view.el.querySelector('button.ja-always-more')!;
    const menu = view.el.querySelector('div.ja-always-menu')!;
    more.click();
    assert.equal(menu.hasAttribute('hidden'), false);
    assert.equal(active(), 'ja-scope'); // the first scope
    escape(menu.querySelector('button.ja-scope')!);
    assert.equal(menu.hasAttribute('hidden'), true);
    assert.equal(more.getAttribute('aria-expanded'), 'false');
    assert.equal(active(), 'ja-always-more');
    assert.deepEqual(commandNames(view), []);
    // The menu closed: the next Esc stops.
    escape(more);
    assert.deepEqual(commandNames(view), ['stop']);
  });
});

describe('the scope menu from the keyboard', () => {
  const SCOPES = ['Always allow ls …', 'Always allow ls'];
  const open = () => {
    const view = showing([APPROVAL], { busy: true });
    const more = view.el.querySelector('button.ja-always-more')!;
    const menu = view.el.querySelector('div.ja-always-menu')!;
    return { view, more, menu };
  };

  it('moves among the scopes with the arrow keys, wrapping, and stays in the menu', () => {
    const { view, more, menu } = open();
    more.click();
    assert.equal(focused(), SCOPES[0]);
    assert.equal(press('ArrowDown'), false);
    assert.equal(focused(), SCOPES[1]);
    press('ArrowDown');
    assert.equal(focused(), SCOPES[0]);
    press('ArrowUp');
    assert.equal(focused(), SCOPES[1]);
    press('Home');
    assert.equal(focused(), SCOPES[0]);
    press('End');
    assert.equal(focused(), SCOPES[1]);
    assert.equal(menu.hasAttribute('hidden'), false);
    assert.equal(more.getAttribute('aria-expanded'), 'true');
    assert.deepEqual(commandNames(view), []);
    // The scopes are reached by the arrows, not Tab: Tab leaves the menu and closes it.
    for (const scope of menu.querySelectorAll('button.ja-scope'))
      assert.equal(scope.getAttribute('tabindex'), '-1');
    assert.equal(press('Tab'), true, 'Tab moves focus on as usual');
    assert.equal(menu.hasAttribute('hidden'), true);
    assert.equal(more.getAttribute('aria-expanded'), 'false');
  });

  it('opens on the first scope with ArrowDown on ▾, on the last with ArrowUp', () => {
    const { more, menu } = open();
    more.focus();
    press('ArrowDown');
    assert.equal(menu.hasAttribute('hidden'), false);
    assert.equal(focused(), SCOPES[0]);
    escape(menu.querySelector('button.ja-scope')!);
    assert.equal(active(), 'ja-always-more');
    press('ArrowUp');
    assert.equal(focused(), SCOPES[1]);
  });

  it('closes once focus leaves the menu and its button', () => {
    const { view, more, menu } = open();
    const [first, second] = menu.querySelectorAll('button.ja-scope');
    const leave = (from: FakeElement, to: FakeElement | null) =>
      from.dispatchEvent(
        new FakeFocusEvent('focusout', to) as unknown as Event
      );
    more.click();
    leave(first, second); // within the menu
    assert.equal(menu.hasAttribute('hidden'), false);
    leave(second, more); // back to ▾, whose click toggles it
    assert.equal(menu.hasAttribute('hidden'), false);
    const deny = view.el
      .querySelectorAll('section.ja-approval button')
      .find(b => b.textContent === 'Deny')!;
    leave(first, deny);
    assert.equal(menu.hasAttribute('hidden'), true);
    assert.equal(more.getAttribute('aria-expanded'), 'false');
    more.click();
    leave(first, null); // a click on nothing that takes focus
    assert.equal(menu.hasAttribute('hidden'), true);
  });
});

describe('cards that wait for the user, and focus', () => {
  /** The view, the message input focused and holding `draft`, then `entries` arrive. */
  const arriving = async (entries: unknown[], draft: string) => {
    const view = showing([], { busy: true });
    const message = view.el.querySelector('textarea.ja-message')!;
    message.value = draft;
    message.focus();
    view.receive({ type: 'events', entries });
    await settled();
    return view;
  };

  it('gives a new approval the focus, on Allow, as a new question has it', async () => {
    await arriving([APPROVAL], '');
    assert.equal(focused(), 'Allow');
    await arriving([QUESTION], '');
    assert.equal(active(), 'ja-option');
  });

  it('leaves the focus in the message box while a draft is written there', async () => {
    await arriving([APPROVAL], 'and then also the');
    assert.equal(active(), 'ja-message');
    await arriving([QUESTION], 'and then also the');
    assert.equal(active(), 'ja-message');
  });

  it('gives no focus to a card answered in the same batch (a transcript shown again)', async () => {
    const answered = {
      kind: 'permission_response',
      n: 2,
      request_id: 'r1',
      tool_name: 'execute_command',
      allowed: true
    };
    await arriving([APPROVAL, answered], '');
    assert.equal(active(), 'ja-message');
    // Still waiting when shown again (a reload while it waits): it takes the focus.
    const view = mount({ busy: true });
    view.el.querySelector('textarea.ja-message')!.focus();
    const hello = view.sent.find(m => m.type === 'hello');
    view.receive({ type: 'snapshot', view: hello?.view, entries: [APPROVAL] });
    await settled();
    assert.equal(focused(), 'Allow');
  });

  it("leaves the focus in a cell's editor with code in it, not in an empty one", async () => {
    for (const [code, takes] of [
      ['df = pd.read_', false],
      ['', true]
    ] as const) {
      const view = showing([], { busy: true });
      const editor = new FakeElement('div');
      editor.className = 'cm-content';
      Object.assign(editor, { isContentEditable: true });
      editor.textContent = code;
      editor.focus();
      view.receive({ type: 'events', entries: [APPROVAL] });
      await settled();
      assert.equal(focused() === 'Allow', takes, code);
    }
  });

  it('moves focus to the message input once a key is given in the set-up box', () => {
    const view = mount({ model_ready: false, model_setup: 'No key.' });
    const input = view.el.querySelector('input.ja-key')!;
    input.focus();
    view.el.querySelector('form.ja-setup')?.dispatch('submit');
    // No key typed: focus stays in the key field, which says what to do.
    assert.equal(active(), 'ja-key');
    input.value = 'sk-ant-test-key';
    view.el.querySelector('form.ja-setup')?.dispatch('submit');
    assert.deepEqual(commandNames(view), ['set_key']);
    assert.equal(active(), 'ja-message');
  });
});

describe('the context gauge', () => {
  const counted = {
    used_tokens: 90_000,
    window: 200_000,
    cached_tokens: 72_000,
    estimated: false
  };

  it('shows how full the window is, with a meter named for it', () => {
    const view = mount({ context: counted });
    const gauge = view.el.querySelector('span.ja-context-gauge') as FakeElement;
    assert.equal(gauge.hasAttribute('hidden'), false);
    assert.equal(
      gauge.querySelector('span.ja-context-text')?.textContent,
      'Context 45% · 90k / 200k · 80% cached'
    );
    const meter = gauge.querySelector('div[role="meter"]') as FakeElement;
    assert.equal(meter.getAttribute('aria-label'), 'Context window used');
    assert.equal(meter.getAttribute('aria-valuemin'), '0');
    assert.equal(meter.getAttribute('aria-valuemax'), '100');
    assert.equal(meter.getAttribute('aria-valuenow'), '45');
    assert.equal(
      meter.getAttribute('aria-valuetext'),
      '45%: 90,000 of 200,000 tokens'
    );
    assert.equal(meter.dataset.level, 'ok');
    // Near the limit it turns amber, then red.
    view.set('context', { ...counted, used_tokens: 150_000 });
    assert.equal(meter.dataset.level, 'high');
    view.set('context', { ...counted, used_tokens: 190_000 });
    assert.equal(meter.dataset.level, 'full');
    assert.equal(meter.getAttribute('aria-valuenow'), '95');
  });

  it('says when the numbers are an estimate (after a compaction or a resume)', () => {
    const view = mount({
      context: { used_tokens: 12_400, window: 200_000, estimated: true }
    });
    assert.equal(
      view.el.querySelector('span.ja-context-text')?.textContent,
      'Context 6% · 12k / 200k (estimated)'
    );
  });

  it('offers Compact now only when a run could start and there is a conversation', () => {
    const button = (view: ReturnType<typeof mount>) =>
      view.el.querySelector('button.ja-compact') as FakeElement;
    const empty = mount();
    assert.equal(button(empty).textContent, 'Compact now');
    assert.equal(button(empty).hasAttribute('disabled'), true);
    assert.equal(
      empty.el.querySelector('span.ja-context-gauge')?.hasAttribute('hidden'),
      true
    );
    const view = mount({ context: counted });
    assert.equal(button(view).hasAttribute('disabled'), false);
    view.set('busy', true);
    assert.equal(button(view).hasAttribute('disabled'), true);
    view.set('busy', false);
    assert.equal(button(view).hasAttribute('disabled'), false);
  });

  it('sends compact, and shows why when the kernel refuses', async () => {
    const view = mount({ context: counted });
    const button = view.el.querySelector('button.ja-compact') as FakeElement;
    button.click();
    assert.equal(button.hasAttribute('disabled'), true); // until the reply, or the run it starts
    const sent = view.sent.find(m => m.type === 'command');
    assert.equal(sent?.name, 'compact');
    view.receive({
      type: 'reply',
      id: sent?.id,
      ok: false,
      error: 'The agent is working: wait for it, or Stop it, then compact.'
    });
    await new Promise(resolve => setImmediate(resolve));
    assert.deepEqual(
      view.el.querySelectorAll('div.ja-error').map(n => n.textContent),
      ['The agent is working: wait for it, or Stop it, then compact.']
    );
    assert.equal(button.hasAttribute('disabled'), false);
  });
});

describe("the panel view's messages", () => {
  it('go through model.send, with a note, when no extension takes them', () => {
    const view = mount({ kernel_id: 'kernel-1' });
    assert.ok(view.sent.some(m => m.type === 'hello'));
    const note = view.el.querySelector('div.ja-no-subshell') as FakeElement;
    assert.equal(note.hasAttribute('hidden'), false);
  });

  it('go to the lab extension when it takes them', () => {
    const taken: unknown[] = [];
    const take = (event: Event) => {
      const detail = (event as CustomEvent).detail;
      event.preventDefault();
      detail.subshell = true;
      taken.push([detail.kernelId, detail.commId, detail.message.type]);
    };
    fakeDocument.addEventListener('jupyter-agent:control', take);
    try {
      const view = mount({ kernel_id: 'kernel-1' });
      assert.deepEqual(view.sent, []);
      assert.deepEqual(taken, [['kernel-1', 'w', 'hello']]);
      const note = view.el.querySelector('div.ja-no-subshell') as FakeElement;
      assert.equal(note.hasAttribute('hidden'), true);
    } finally {
      fakeDocument.removeEventListener('jupyter-agent:control', take);
    }
  });

  it("interrupts the agent's cell on Stop only when the kernel does not answer it soon", async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const running = { kernel_id: 'kernel-1', busy: true, running_code: true };
    const interrupts: unknown[] = [];
    const interrupt = (event: Event) => {
      event.preventDefault();
      interrupts.push((event as CustomEvent).detail.kernelId);
    };
    let subshell = true;
    const stops: string[] = [];
    const control = (event: Event) => {
      const detail = (event as CustomEvent).detail;
      event.preventDefault();
      detail.subshell = subshell;
      if (detail.message.name === 'stop') stops.push(detail.message.id);
    };
    fakeDocument.addEventListener('jupyter-agent:interrupt', interrupt);
    fakeDocument.addEventListener('jupyter-agent:control', control);
    try {
      const stop = (view: ReturnType<typeof mount>) =>
        (view.el.querySelector('button.ja-stop') as FakeElement).click();
      stop(mount(running));
      mock.timers.tick(STOP_ANSWER_GRACE);
      assert.deepEqual(
        interrupts,
        [],
        'over our subshell the kernel interrupts its cell'
      );

      // Not over ours, but answered in time (JupyterLab's comms over subshells).
      subshell = false;
      const answering = mount(running);
      stop(answering);
      answering.receive({
        type: 'reply',
        id: stops.at(-1),
        ok: true,
        error: null
      });
      await new Promise(resolve => setImmediate(resolve));
      mock.timers.tick(STOP_ANSWER_GRACE);
      assert.deepEqual(
        interrupts,
        [],
        'a kernel that answered interrupts its cell itself'
      );

      // No answer: the kernel is held by the cell, so the frontend interrupts it, once.
      stop(mount(running));
      mock.timers.tick(STOP_ANSWER_GRACE - 1);
      assert.deepEqual(interrupts, []);
      mock.timers.tick(1);
      assert.deepEqual(interrupts, ['kernel-1']);
    } finally {
      fakeDocument.removeEventListener('jupyter-agent:interrupt', interrupt);
      fakeDocument.removeEventListener('jupyter-agent:control', control);
    }
  });
});
