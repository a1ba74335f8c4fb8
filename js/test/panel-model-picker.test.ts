/**
 * The model picker (src/panel/model-picker.ts) inside the panel view, on a fake DOM and a
 * fake anywidget model: it lists the kernel's `models` with the current one selected and
 * the ones not set up marked, hides when there is nothing to choose, sends `set_model` on a
 * choice, shows the old choice again when the kernel refuses, and waits while a run goes on.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import widget from '../src/panel/widget';
import type { IModel } from '../src/panel/widget';
import { FakeElement, install } from './fakedom';

install();

const MODELS = [
  {
    id: 'claude-sonnet-4-6',
    label: 'claude-sonnet-4-6',
    provider: 'anthropic',
    current: true,
    ready: true,
    setup: ''
  },
  {
    id: 'ollama:qwen3',
    label: 'ollama:qwen3',
    provider: 'ollama',
    current: false,
    ready: true,
    setup: ''
  },
  {
    id: 'openai:gpt-5',
    label: 'openai:gpt-5',
    provider: 'openai',
    current: false,
    ready: false,
    setup: 'No OpenAI API key found: set OPENAI_API_KEY.'
  }
];

function mount(state: Record<string, unknown>) {
  const handlers = new Map<string, ((...args: any[]) => void)[]>();
  const sent: Record<string, any>[] = [];
  const values: Record<string, unknown> = {
    status: 'idle',
    busy: false,
    role: 'planner',
    roles: [],
    session_id: 'now',
    sessions: [],
    usage: {},
    max_steps: 30,
    model_ready: true,
    ...state
  };
  const model: IModel = {
    get: name => values[name] as never,
    on: (name, callback) =>
      handlers.set(name, [...(handlers.get(name) ?? []), callback]),
    off: () => undefined,
    send: message => void sent.push(message)
  };
  const el = new FakeElement('div');
  widget.render({ model, el: el as unknown as HTMLElement });
  const set = (name: string, value: unknown) => {
    values[name] = value;
    (handlers.get(`change:${name}`) ?? []).forEach(h => h());
  };
  const receive = (message: unknown) =>
    (handlers.get('msg:custom') ?? []).forEach(h => h(message));
  const picker = el.querySelector('select[aria-label="Model"]') as FakeElement;
  const commands = () => sent.filter(m => m.type === 'command');
  return { el, set, receive, picker, commands };
}

const settle = () => new Promise(resolve => setImmediate(resolve));

describe('the model picker', () => {
  it('lists the configured models, the current one chosen, the unready marked', () => {
    const view = mount({ models: MODELS });
    const options = view.picker.querySelectorAll('option');
    assert.deepEqual(
      options.map(o => o.textContent),
      ['claude-sonnet-4-6', 'ollama:qwen3', 'openai:gpt-5 (set-up needed)']
    );
    assert.equal(view.picker.value, 'claude-sonnet-4-6');
    assert.equal(
      options[2].getAttribute('title'),
      'No OpenAI API key found: set OPENAI_API_KEY.'
    );
    assert.equal(
      (view.picker.parentNode as FakeElement).hasAttribute('hidden'),
      false
    );
  });

  it('is hidden when there is only the model in use', () => {
    const view = mount({ models: MODELS.slice(0, 1) });
    assert.equal(
      (view.picker.parentNode as FakeElement).hasAttribute('hidden'),
      true
    );
  });

  it('asks the kernel to switch, and shows the old choice again if refused', async () => {
    const view = mount({ models: MODELS });
    view.picker.value = 'ollama:qwen3';
    view.picker.dispatch('change');
    const [asked] = view.commands();
    assert.equal(asked.name, 'set_model');
    assert.equal(asked.model, 'ollama:qwen3');
    view.receive({
      type: 'reply',
      id: asked.id,
      ok: false,
      error: 'The agent is working: wait for it, or Stop it, then switch.'
    });
    await settle();
    assert.equal(view.picker.value, 'claude-sonnet-4-6');
    assert.match(view.el.textContent ?? '', /then switch/);
  });

  it('follows the kernel when the model changed elsewhere (a magic)', () => {
    const view = mount({ models: MODELS });
    view.set(
      'models',
      MODELS.map(m => ({ ...m, current: m.id === 'ollama:qwen3' }))
    );
    assert.equal(view.picker.value, 'ollama:qwen3');
  });

  it('waits while a run goes on, and says what the provider lacks', () => {
    const view = mount({
      models: MODELS,
      busy: true,
      model_notes: 'qwen3: its price is unknown, so costs show as unknown.'
    });
    assert.equal(view.picker.hasAttribute('disabled'), true);
    const notes = view.el.querySelector('.ja-model-notes') as FakeElement;
    assert.equal(notes.hasAttribute('hidden'), false);
    assert.match(notes.textContent ?? '', /price is unknown/);
  });
});

describe('the usage line, for a model whose price is unknown', () => {
  const usage = {
    run_input_tokens: 1200,
    run_output_tokens: 80,
    run_cache_read_input_tokens: 0,
    session_input_tokens: 5000,
    session_output_tokens: 300,
    session_cache_read_input_tokens: 1000
  };
  const line = (extra: Record<string, number>) =>
    mount({ usage: { ...usage, ...extra } }).el.querySelector('.ja-usage')
      ?.textContent;

  it('says "cost unknown" rather than $0', () => {
    const text = line({
      run_cost_usd: 0,
      session_cost_usd: 0,
      run_unpriced_calls: 2,
      session_unpriced_calls: 5
    });
    assert.match(text ?? '', /80 out · cost unknown — Session/);
    assert.doesNotMatch(text ?? '', /\$0\.0000/);
  });

  it('says which part is known when priced and unpriced calls mix', () => {
    const text = line({
      run_cost_usd: 0.0123,
      session_cost_usd: 0.0456,
      run_unpriced_calls: 0,
      session_unpriced_calls: 1
    });
    assert.match(text ?? '', /80 out · \$0\.0123 — Session/);
    assert.match(text ?? '', /\$0\.0456 \+ unknown \(1 call unpriced\)$/);
  });
});
