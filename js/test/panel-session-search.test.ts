/**
 * The session search box (src/panel/session-search.ts) inside the panel view, on a fake
 * DOM and a fake anywidget model: what is typed goes to the kernel as a search_sessions
 * command after a pause (or at once on Enter), the reply's sessions show as labelled
 * buttons with the matched words marked, a click resumes that session, a stale reply is
 * dropped, and a refused search says why.
 */
import { strict as assert } from 'node:assert';
import { afterEach, describe, it, mock } from 'node:test';

import { SEARCH_DELAY } from '../src/panel/session-search';
import widget from '../src/panel/widget';
import type { IModel } from '../src/panel/widget';
import { FakeElement, FakeKeyboardEvent, html, install } from './fakedom';

install();

const STATE: Record<string, unknown> = {
  status: 'idle',
  busy: false,
  role: 'planner',
  roles: [],
  session_id: 'now',
  sessions: [],
  usage: {},
  max_steps: 30,
  model_ready: true
};

function mount(state: Record<string, unknown> = {}) {
  const handlers = new Map<string, ((...args: any[]) => void)[]>();
  const sent: Record<string, any>[] = [];
  const model: IModel = {
    get: name => ({ ...STATE, ...state })[name] as never,
    on: (name, callback) =>
      handlers.set(name, [...(handlers.get(name) ?? []), callback]),
    off: () => undefined,
    send: message => void sent.push(message)
  };
  const el = new FakeElement('div');
  widget.render({ model, el: el as unknown as HTMLElement });
  const receive = (message: unknown) =>
    (handlers.get('msg:custom') ?? []).forEach(h => h(message));
  const input = el.querySelector('input.ja-session-search') as FakeElement;
  const commands = () => sent.filter(m => m.type === 'command');
  return { el, sent, receive, input, commands };
}

const FOUND = {
  id: 'past1',
  title: 'Clean the sales data',
  updated: 1700000000,
  said: 1700000000,
  role: 'plan',
  label: 'submit_plan',
  parts: ['Drop ', 'duplicate', ' ', 'rows', ' from <b>sales</b>'],
  matches: 3
};

const settle = () => new Promise(resolve => setImmediate(resolve));

afterEach(() => mock.restoreAll());

describe('the session search box', () => {
  it('is a labelled search input with a results group', () => {
    const view = mount();
    assert.equal(view.input.getAttribute('aria-label'), 'Search sessions');
    assert.equal(view.input.getAttribute('type'), 'search');
    const group = view.el.querySelector('div.ja-search-results');
    assert.equal(group?.getAttribute('aria-label'), 'Matching sessions');
  });

  it('searches on Enter, shows each match as a button, and a click resumes it', async () => {
    const view = mount();
    view.input.value = '  duplicate rows ';
    view.input.dispatchEvent(new FakeKeyboardEvent('Enter') as never);
    const [search] = view.commands();
    assert.equal(search.name, 'search_sessions');
    assert.equal(search.query, 'duplicate rows');
    view.receive({
      type: 'reply',
      id: search.id,
      ok: true,
      error: null,
      found: [FOUND]
    });
    await settle();
    const [hit] = view.el.querySelectorAll('button.ja-search-hit');
    assert.ok(hit, 'no result button');
    assert.match(
      hit.textContent,
      /^Clean the sales data — .+plan \(submit_plan\): /
    );
    assert.match(hit.textContent, /Drop duplicate rows from <b>sales<\/b>$/);
    // Matches are <mark>s; what the session said is text, never markup.
    assert.deepEqual(
      hit.querySelectorAll('mark').map(m => m.textContent),
      ['duplicate', 'rows']
    );
    assert.ok(html(hit).includes('from &lt;b&gt;sales&lt;/b&gt;'));
    assert.equal(
      view.el.querySelector('div.ja-search-status')?.textContent,
      '1 past session match “duplicate rows”.'
    );

    hit.click();
    const resume = view.commands().at(-1)!;
    assert.equal(resume.name, 'resume');
    assert.equal(resume.session_id, 'past1');
    view.receive({ type: 'reply', id: resume.id, ok: true, error: null });
    await settle();
    assert.equal(view.input.value, '');
  });

  it('waits for a pause in typing, and drops the reply to an older search', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const view = mount();
    view.input.value = 'sal';
    view.input.dispatch('input');
    mock.timers.tick(SEARCH_DELAY - 1);
    assert.equal(view.commands().length, 0);
    mock.timers.tick(1);
    view.input.value = 'sales';
    view.input.dispatch('input');
    mock.timers.tick(SEARCH_DELAY);
    const [older, newer] = view.commands();
    assert.deepEqual([older.query, newer.query], ['sal', 'sales']);
    view.receive({
      type: 'reply',
      id: newer.id,
      ok: true,
      error: null,
      found: []
    });
    view.receive({
      type: 'reply',
      id: older.id,
      ok: true,
      error: null,
      found: [FOUND]
    });
    mock.timers.reset();
    await settle();
    assert.equal(view.el.querySelectorAll('button.ja-search-hit').length, 0);
    assert.equal(
      view.el.querySelector('div.ja-search-status')?.textContent,
      'No past session matches “sales”.'
    );
  });

  it('says why a search was refused, and Esc empties the box before it stops anything', async () => {
    const view = mount({ busy: true });
    view.input.value = '(*)';
    view.input.dispatchEvent(new FakeKeyboardEvent('Enter') as never);
    const [search] = view.commands();
    view.receive({
      type: 'reply',
      id: search.id,
      ok: false,
      error: "Nothing to search for in '(*)': give one or more words"
    });
    await settle();
    assert.match(
      view.el.querySelector('div.ja-search-status')?.textContent ?? '',
      /^Nothing to search for/
    );
    view.input.dispatchEvent(new FakeKeyboardEvent('Escape') as never);
    assert.equal(view.input.value, '');
    assert.equal(view.commands().filter(c => c.name === 'stop').length, 0);
  });

  it('disables the result buttons while the agent works', async () => {
    const view = mount({ busy: true });
    view.input.value = 'sales';
    view.input.dispatchEvent(new FakeKeyboardEvent('Enter') as never);
    const [search] = view.commands();
    view.receive({
      type: 'reply',
      id: search.id,
      ok: true,
      error: null,
      found: [FOUND]
    });
    await settle();
    const [hit] = view.el.querySelectorAll('button.ja-search-hit');
    assert.equal(hit.hasAttribute('disabled'), true);
  });
});
