/**
 * The session search box (src/panel/session-search.ts) and the session picker inside the
 * panel view, on a fake DOM and a fake anywidget model: what is typed goes to the kernel
 * as a search_sessions command after a pause (or at once on Enter), the reply's sessions
 * show as labelled buttons with the matched words marked, their notebook and their
 * outcome, a click resumes that session, a stale reply is dropped, and a refused search
 * says why. A session of another notebook (from the picker or the search) asks first
 * (src/panel/session-choice.ts): continue here, without its cell links, or open it.
 */
import { strict as assert } from 'node:assert';
import { afterEach, describe, it, mock } from 'node:test';

import { OPEN_NOTEBOOK_EVENT } from '../src/panel/session-choice';
import { SEARCH_DELAY } from '../src/panel/session-search';
import widget from '../src/panel/widget';
import type { IModel } from '../src/panel/widget';
import {
  fakeDocument,
  FakeElement,
  FakeKeyboardEvent,
  html,
  install
} from './fakedom';

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
  matches: 3,
  notebook: 'b.ipynb',
  where: 'here',
  open_path: 'b.ipynb',
  outcome: 'Dropped 12 rows.',
  outcome_kind: 'summary',
  stop_reason: 'completed'
};

const OTHER = {
  ...FOUND,
  id: 'past2',
  title: 'Clean the sales in a',
  notebook: 'a.ipynb',
  where: 'other',
  open_path: 'work/a.ipynb',
  outcome: 'Stopped half-way.',
  outcome_kind: 'answer',
  stop_reason: 'manual_stop'
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
      /^Clean the sales data — .+ · this notebookplan \(submit_plan\): /
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
    // What the session came to, under the button (not part of its name).
    assert.equal(
      view.el.querySelector('div.ja-search-outcome')?.textContent,
      'Outcome (summary): Dropped 12 rows.'
    );

    hit.click();
    const resume = view.commands().at(-1)!;
    assert.equal(resume.name, 'resume');
    assert.equal(resume.session_id, 'past1');
    assert.equal(resume.here, undefined);
    view.receive({ type: 'reply', id: resume.id, ok: true, error: null });
    await settle();
    assert.equal(view.input.value, '');
    assert.equal(view.el.querySelectorAll('button.ja-search-hit').length, 0);
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

  it('asks before resuming a hit of another notebook: Continue here resumes it here', async () => {
    const view = mount();
    view.input.value = 'sales';
    view.input.dispatchEvent(new FakeKeyboardEvent('Enter') as never);
    const [search] = view.commands();
    view.receive({
      type: 'reply',
      id: search.id,
      ok: true,
      error: null,
      found: [OTHER]
    });
    await settle();
    const [hit] = view.el.querySelectorAll('button.ja-search-hit');
    assert.match(hit.textContent, / · a\.ipynbplan/);
    assert.equal(
      view.el.querySelector('div.ja-search-item')?.getAttribute('data-where'),
      'other'
    );
    assert.equal(
      view.el.querySelector('div.ja-search-outcome')?.textContent,
      'Outcome (answer, manual stop): Stopped half-way.'
    );
    hit.click();
    assert.equal(view.commands().length, 1, 'resumed without asking');
    const choice = view.el.querySelector('div.ja-resume-choice')!;
    assert.equal(choice.hasAttribute('hidden'), false);
    assert.equal(choice.getAttribute('role'), 'group');
    assert.match(
      choice.textContent,
      /^“Clean the sales in a” worked on a\.ipynb, not on this notebook\./
    );
    const [go] = choice.querySelectorAll('button.ja-continue-here');
    assert.equal(
      go.textContent,
      'Continue here (its cell references are dropped)'
    );
    assert.equal(fakeDocument.activeElement, go);
    // No Jupyter page around the panel: the choice says the notebook cannot be opened.
    assert.match(
      choice.textContent,
      /a\.ipynb cannot be opened from this panel/
    );
    go.click();
    const resume = view.commands().at(-1)!;
    assert.deepEqual(
      [resume.name, resume.session_id, resume.here],
      ['resume', 'past2', true]
    );
    assert.equal(choice.hasAttribute('hidden'), true);
    view.receive({ type: 'reply', id: resume.id, ok: true, error: null });
    await settle();
    assert.equal(view.input.value, '');
  });

  it('the picker lists this notebook first, then others by name; Esc closes the choice', () => {
    const when = 1700000000;
    const saved = (id: string, where: string, notebook: string) => ({
      id,
      title: `task ${id}`,
      updated: when,
      state: 'completed',
      runs: 1,
      notebook,
      where,
      open_path: notebook
    });
    const view = mount({
      session_id: 'mine',
      sessions: [
        saved('mine', 'here', 'b.ipynb'),
        saved('theirs', 'other', 'a.ipynb'),
        saved('old', 'unknown', '')
      ]
    });
    const select = view.el.querySelector('select[aria-label="Session"]')!;
    const groups = select.querySelectorAll('optgroup');
    assert.deepEqual(
      groups.map(g => g.getAttribute('label')),
      ['This notebook', 'Other notebooks', 'Notebook unknown']
    );
    assert.deepEqual(
      groups.map(g => g.querySelectorAll('option').map(o => o.textContent)),
      [
        [`task mine — ${new Date(when * 1000).toLocaleString()} (current)`],
        [`task theirs — a.ipynb — ${new Date(when * 1000).toLocaleString()}`],
        [`task old — ${new Date(when * 1000).toLocaleString()}`]
      ]
    );
    select.value = 'theirs';
    select.dispatch('change');
    const resume = view.el
      .querySelectorAll('button')
      .find(b => b.textContent === 'Resume')!;
    resume.click();
    const choice = view.el.querySelector('div.ja-resume-choice')!;
    assert.equal(choice.hasAttribute('hidden'), false);
    choice.dispatchEvent(new FakeKeyboardEvent('Escape') as never);
    assert.equal(choice.hasAttribute('hidden'), true);
    assert.equal(fakeDocument.activeElement, resume);
    assert.equal(view.commands().length, 0);
    // One of this notebook's, or of no known notebook: resumed at once.
    select.value = 'old';
    select.dispatch('change');
    resume.click();
    assert.deepEqual(
      view.commands().map(c => [c.name, c.session_id, c.here]),
      [['resume', 'old', undefined]]
    );
  });

  it('Open links to the other notebook, which the lab extension opens here', () => {
    const doc = fakeDocument as unknown as Record<string, unknown>;
    const page = { baseUrl: '/jh/' } as Record<string, string>;
    const config = {
      get textContent() {
        return JSON.stringify(page);
      }
    };
    doc.getElementById = (id: string) =>
      id === 'jupyter-config-data' ? config : null;
    try {
      const view = mount({
        session_id: 'mine',
        sessions: [{ ...OTHER, updated: 1700000000, state: 'stopped', runs: 2 }]
      });
      const select = view.el.querySelector('select[aria-label="Session"]')!;
      const resume = view.el
        .querySelectorAll('button')
        .find(b => b.textContent === 'Resume')!;
      select.value = 'past2';
      select.dispatch('change');
      resume.click();
      let link = view.el.querySelector('a.ja-open-notebook')!;
      assert.equal(link.textContent, 'Open a.ipynb');
      assert.equal(link.getAttribute('href'), '/jh/lab/tree/work/a.ipynb');
      assert.equal(link.getAttribute('target'), '_blank');
      const asked: unknown[] = [];
      const open = (event: Event) => {
        asked.push((event as CustomEvent).detail);
        event.preventDefault();
      };
      fakeDocument.addEventListener(OPEN_NOTEBOOK_EVENT, open);
      const click = link.dispatch('click');
      fakeDocument.removeEventListener(OPEN_NOTEBOOK_EVENT, open);
      assert.deepEqual(asked, [{ path: 'work/a.ipynb' }]);
      assert.equal(click.defaultPrevented, true, 'the extension opened it');
      assert.equal(
        view.el.querySelector('div.ja-resume-choice')?.hasAttribute('hidden'),
        true
      );
      assert.equal(view.commands().length, 0);
      // On a Notebook 7 page, the link is Notebook 7's page of that notebook.
      page.notebookPage = 'notebooks';
      resume.click();
      link = view.el.querySelector('a.ja-open-notebook')!;
      assert.equal(link.getAttribute('href'), '/jh/notebooks/work/a.ipynb');
    } finally {
      delete doc.getElementById;
    }
  });

  it('shows the cell references of another notebook as text, not links', () => {
    const view = mount();
    // A read of a cell: its result names the cell (a link, in the result).
    const read = (n: number, cell: string) => [
      {
        kind: 'tool_start',
        tool_use_id: `t${n}`,
        name: 'read_cell',
        input: { cell_id: cell },
        summary: `Read cell ${cell}`,
        n
      },
      {
        kind: 'tool_end',
        tool_use_id: `t${n}`,
        name: 'read_cell',
        result: `Cell ${cell}: print(1)`,
        n: n + 1
      }
    ];
    view.receive({
      type: 'snapshot',
      view: null,
      entries: [
        ...read(1, 'c1'),
        {
          kind: 'note',
          text: 'The conversation above was held in a.ipynb.',
          cells_of: 'a.ipynb',
          n: 3
        },
        ...read(4, 'c2')
      ]
    });
    const links = view.el.querySelectorAll('a.ja-reveal-cell');
    assert.deepEqual(
      links.map(l => l.getAttribute('data-cell-id')),
      ['c2']
    );
    const [dropped] = view.el.querySelectorAll('span.ja-dropped-cell');
    assert.equal(dropped.textContent, 'Cell c1');
    assert.equal(dropped.title, 'Cell c1 of a.ipynb, not of this notebook');
  });
});
