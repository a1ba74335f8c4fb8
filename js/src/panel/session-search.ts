/**
 * The session picker's search box: past sessions of the workspace whose words match what
 * the user types, this notebook's first, each shown as a button (its title, when the
 * passage was written, its notebook, who wrote it, and the passage with the matched words
 * marked) that resumes that session, with the session's outcome under it (its last
 * summary, plan or answer).
 *
 * The kernel searches (a `search_sessions` command, answered from its SQLite index off
 * its event loop); typing waits for a pause so each pause sends one search, and a reply
 * to an older search than the newest is dropped. Text goes in as text nodes only.
 */
import { h } from './dom';
import { notebookLabel } from './session-choice';
import type { FoundSession } from './wire';

/** Milliseconds of no typing before the search goes out. */
export const SEARCH_DELAY = 250;

/** What the search box asks of the view around it. */
export interface ISessionSearchActions {
  search(query: string): Promise<FoundSession[]>;
  /** Resume `found` (the view asks first when it is another notebook's); `from`: its button. */
  resume(found: FoundSession, from: HTMLElement): void;
  busy(): boolean;
}

export class SessionSearch {
  readonly el: HTMLElement;
  readonly input: HTMLInputElement;
  private readonly status: HTMLElement;
  private readonly results: HTMLElement;
  private timer?: ReturnType<typeof setTimeout>;
  private asked = 0;

  constructor(private readonly actions: ISessionSearchActions) {
    this.input = h('input', {
      type: 'search',
      class: 'ja-session-search',
      autocomplete: 'off',
      'aria-label': 'Search sessions',
      placeholder: 'Words from a past session…'
    });
    this.status = h('div', {
      class: 'ja-search-status',
      role: 'status',
      'aria-live': 'polite'
    });
    this.results = h('div', {
      class: 'ja-search-results',
      role: 'group',
      'aria-label': 'Matching sessions'
    });
    this.el = h(
      'div',
      { class: 'ja-session-search-box' },
      h('label', {}, 'Search sessions ', this.input),
      this.status,
      this.results
    );
    this.input.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.run(), SEARCH_DELAY);
    });
    this.input.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        event.preventDefault();
        this.run();
      } else if (event.key === 'Escape' && this.input.value) {
        // Esc empties the box first; only an empty box lets Esc stop the agent.
        event.preventDefault();
        event.stopPropagation();
        this.input.value = '';
        this.run();
      }
    });
  }

  /** Search for what the box holds now (an empty box clears the results). */
  run(): void {
    clearTimeout(this.timer);
    const query = this.input.value.trim();
    const asked = ++this.asked;
    if (!query) {
      this.status.textContent = '';
      this.results.replaceChildren();
      return;
    }
    this.status.textContent = 'Searching…';
    this.actions.search(query).then(
      found => {
        if (asked === this.asked) this.show(query, found);
      },
      (error: Error) => {
        if (asked !== this.asked) return;
        this.results.replaceChildren();
        this.status.textContent = error.message;
      }
    );
  }

  /** Enable the result buttons, or not while the agent works (resuming needs it idle). */
  refresh(): void {
    const busy = this.actions.busy();
    for (const button of this.results.querySelectorAll('button'))
      (button as HTMLButtonElement).disabled = busy;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.asked++;
  }

  private show(query: string, found: FoundSession[]): void {
    this.status.textContent = found.length
      ? `${found.length} past session${found.length === 1 ? '' : 's'} match “${query}”.`
      : `No past session matches “${query}”.`;
    this.results.replaceChildren(...found.map(f => this.hit(f)));
    this.refresh();
  }

  private hit(found: FoundSession): HTMLElement {
    const when = new Date(found.said * 1000).toLocaleString();
    const who = found.label ? `${found.role} (${found.label})` : found.role;
    const passage = found.parts.map((text, i) =>
      i % 2 ? h('mark', { text }) : text
    );
    const button: HTMLButtonElement = h(
      'button',
      {
        type: 'button',
        class: 'ja-search-hit',
        'data-session': found.id,
        title: `Resume this session (${found.matches} matching passage${found.matches === 1 ? '' : 's'})`,
        onclick: () => this.actions.resume(found, button)
      },
      h('span', { class: 'ja-search-title', text: found.title }),
      h('span', { class: 'ja-search-when', text: ` — ${when}` }),
      h('span', {
        class: 'ja-search-notebook',
        text: ` · ${notebookLabel(found)}`
      }),
      h('span', { class: 'ja-search-passage' }, `${who}: `, ...passage)
    );
    return h(
      'div',
      { class: 'ja-search-item', 'data-where': found.where },
      button,
      found.outcome ? outcomeLine(found) : null
    );
  }
}

/** What a found session came to, under its button: "Outcome (summary): …". */
function outcomeLine(found: FoundSession): HTMLElement {
  const ended =
    found.stop_reason && found.stop_reason !== 'completed'
      ? `, ${found.stop_reason.replace(/_/g, ' ')}`
      : '';
  return h(
    'div',
    { class: 'ja-search-outcome' },
    h('span', {
      class: 'ja-search-outcome-kind',
      text: `Outcome (${found.outcome_kind || 'answer'}${ended}): `
    }),
    found.outcome
  );
}
