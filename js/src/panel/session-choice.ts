/**
 * Sessions of other notebooks: how the picker and the search name a session's notebook,
 * and the choice the panel asks for before resuming a session of another notebook —
 * continue it here, without its cell references (cell ids are one notebook's), or open
 * the notebook it worked on.
 *
 * "Open" is a link: a click asks the lab extension to open the notebook in this window
 * (OPEN_NOTEBOOK_EVENT, handled in src/index.ts); without it the link opens the
 * notebook's page (JupyterLab's or Notebook 7's) in a new tab.
 */
import { h } from './dom';
import type { FoundSession, SavedSession } from './wire';

/** The event an "Open" link sends for the lab extension to open a notebook. */
export const OPEN_NOTEBOOK_EVENT = 'jupyter-agent:open-notebook';

/** What the choice needs of a session: the picker's and the search's sessions have it. */
export type SessionOfNotebook = Pick<
  SavedSession & FoundSession,
  'id' | 'title' | 'notebook' | 'where' | 'open_path'
>;

/** A session's notebook in a few words: "this notebook", its name, or that it is not known. */
export function notebookLabel(
  session: Pick<SessionOfNotebook, 'notebook' | 'where'>
): string {
  if (session.where === 'here') return 'this notebook';
  return session.notebook || 'notebook unknown';
}

interface IPageConfig {
  baseUrl?: string;
  /** Set on Notebook 7's pages (tree, notebooks, edit…), never on JupyterLab's. */
  notebookPage?: string;
}

function pageConfig(): IPageConfig | null {
  const node =
    typeof document.getElementById === 'function'
      ? document.getElementById('jupyter-config-data')
      : null;
  if (!node) return null;
  try {
    return JSON.parse(node.textContent || '{}') as IPageConfig;
  } catch {
    return null;
  }
}

/**
 * The address of the notebook `path` (as the server names it) in this frontend:
 * JupyterLab's `lab/tree/…`, or Notebook 7's `notebooks/…` on a Notebook 7 page; null
 * without a Jupyter page around the panel.
 */
export function notebookUrl(path: string): string | null {
  const config = pageConfig();
  if (!config || !path) return null;
  let base = config.baseUrl || '/';
  if (!base.endsWith('/')) base += '/';
  const encoded = path.split('/').map(encodeURIComponent).join('/');
  return `${base}${config.notebookPage ? 'notebooks' : 'lab/tree'}/${encoded}`;
}

/**
 * A link that opens `notebook` (its server path `openPath`): a click asks the lab
 * extension, which opens it in this window; otherwise the link opens its page in a new
 * tab. Null when it cannot be opened from the panel (no server path, no Jupyter page).
 */
export function openNotebookLink(
  notebook: string,
  openPath: string,
  onOpen?: () => void
): HTMLAnchorElement | null {
  const url = openPath ? notebookUrl(openPath) : null;
  if (!url) return null;
  const link = h('a', {
    href: url,
    target: '_blank',
    rel: 'noopener',
    class: 'ja-open-notebook',
    text: `Open ${notebook}`
  });
  link.addEventListener('click', event => {
    const ask = new CustomEvent(OPEN_NOTEBOOK_EVENT, {
      detail: { path: openPath },
      bubbles: true,
      cancelable: true
    });
    if (!document.dispatchEvent(ask)) event.preventDefault(); // the extension opened it
    onOpen?.();
  });
  return link;
}

/** What the choice does once the user has chosen. */
export interface IResumeChoiceActions {
  /** Go on with the session in this notebook (a `resume` command with `here`). */
  continueHere(sessionId: string): void;
  /** The choice closed (Cancel, Esc, Open): where focus goes back to. */
  closed(returnTo: HTMLElement | null): void;
}

/**
 * The choice asked before resuming a session of another notebook: a small group in the
 * panel (not a modal dialog: the panel stays usable), focus on its first button, Esc or
 * Cancel closes it.
 */
export class ResumeChoice {
  readonly el: HTMLElement;
  private returnTo: HTMLElement | null = null;
  private sessionId = '';

  constructor(private readonly actions: IResumeChoiceActions) {
    this.el = h('div', {
      class: 'ja-resume-choice',
      role: 'group',
      'aria-label': 'Resume a session of another notebook',
      hidden: true
    });
    this.el.addEventListener('keydown', event => {
      if ((event as KeyboardEvent).key !== 'Escape') return;
      event.preventDefault();
      event.stopPropagation();
      this.close();
    });
  }

  get open(): boolean {
    return !this.el.hidden;
  }

  /** Ask about `session` (one of another notebook); focus goes back to `returnTo`. */
  ask(session: SessionOfNotebook, returnTo: HTMLElement | null): void {
    this.sessionId = session.id;
    this.returnTo = returnTo;
    const notebook = session.notebook || 'another notebook';
    const continueButton = h('button', {
      type: 'button',
      class: 'ja-primary ja-continue-here',
      text: 'Continue here (its cell references are dropped)',
      onclick: () => {
        const id = this.sessionId;
        this.hide();
        this.actions.continueHere(id);
      }
    });
    const open = openNotebookLink(notebook, session.open_path, () =>
      this.close()
    );
    const cannotOpen = h('span', {
      class: 'ja-note',
      text: `${notebook} cannot be opened from this panel: open it from the file browser.`
    });
    const cancel = h('button', {
      type: 'button',
      class: 'ja-cancel',
      text: 'Cancel',
      onclick: () => this.close()
    });
    this.el.replaceChildren(
      h('p', {
        class: 'ja-resume-question',
        text:
          `“${session.title}” worked on ${notebook}, not on this notebook. ` +
          `Its cell references name cells of ${notebook}.`
      }),
      h(
        'div',
        { class: 'ja-buttons' },
        continueButton,
        open ?? cannotOpen,
        cancel
      )
    );
    this.el.hidden = false;
    continueButton.focus();
  }

  /** Close without resuming; focus goes back where the user was. */
  close(): void {
    if (!this.open) return;
    this.hide();
    this.actions.closed(this.returnTo);
  }

  private hide(): void {
    this.el.hidden = true;
    this.el.replaceChildren();
  }
}
