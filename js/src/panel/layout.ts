/**
 * The panel at narrow widths (the sidebar's default 300 px, a narrow notebook column): the
 * secondary part (role, model, iterations, sessions, context gauge, session search, usage,
 * and the line about the notebook) folds into a menu opened from the header's "⋯" button,
 * so the header, the transcript and the input with Send, Pause and Stop fit without the
 * whole panel scrolling. At wider widths the same part shows as it always did.
 *
 * The folded part is moved in the DOM, not reordered by CSS, so the keyboard meets it right
 * after the button that opens it.
 */
import { h } from './dom';

/** Below this width (CSS pixels of the panel) the secondary part folds away. */
export const NARROW_WIDTH = 440;

export interface IFoldingParts {
  /** The panel: its width decides; it carries `data-narrow` for the styles. */
  root: HTMLElement;
  /** Where the button goes, and the menu after it when narrow. */
  header: HTMLElement;
  /** The element the menu follows when wide. */
  wideAfter: HTMLElement;
  /** The line saying which notebook this is and how edits reach it: in the menu when
   * narrow, else where it was. */
  notebookLine: HTMLElement;
  /** The secondary controls, in their order. */
  parts: HTMLElement[];
}

export class FoldingControls {
  readonly button: HTMLButtonElement;
  readonly menu: HTMLElement;

  constructor(
    private readonly p: IFoldingParts,
    id: string
  ) {
    this.menu = h(
      'div',
      {
        class: 'ja-more',
        id,
        role: 'group',
        'aria-label': 'Settings and sessions'
      },
      ...p.parts
    );
    this.button = h('button', {
      type: 'button',
      class: 'ja-more-button',
      hidden: true,
      'aria-expanded': 'false',
      'aria-controls': id,
      'aria-label': 'Settings and sessions',
      title: 'Role, model, sessions, context and search',
      text: '⋯'
    });
    this.button.addEventListener('click', () => this.toggle());
    p.header.append(this.button);
    p.wideAfter.after(this.menu);
    this._notebookHome = p.notebookLine.nextSibling;
    // Where sizes cannot be observed the panel stays as it is wide.
    this._observer =
      typeof ResizeObserver === 'undefined'
        ? null
        : new ResizeObserver(entries => {
            const width = entries[entries.length - 1].contentRect.width;
            // A panel out of view (hidden sidebar, docked away) measures 0: keep its layout.
            if (width > 0) this.fit(width < NARROW_WIDTH);
          });
    this._observer?.observe(p.root);
  }

  /** Whether the panel is narrow (the menu folds). */
  get narrow(): boolean {
    return this._narrow;
  }

  get open(): boolean {
    return this.button.getAttribute('aria-expanded') === 'true';
  }

  /** Open or close the menu (narrow only); focus stays on the button. */
  toggle(open = !this.open): void {
    this.button.setAttribute('aria-expanded', String(open));
    if (this._narrow) this.menu.hidden = !open;
  }

  /** Lay the panel out for its width. */
  fit(narrow: boolean): void {
    if (narrow === this._narrow) return;
    this._narrow = narrow;
    const { root, header, wideAfter, notebookLine } = this.p;
    // Moving a node takes focus from what is inside it: give it back.
    const focused = document.activeElement as HTMLElement | null;
    const held =
      focused !== null &&
      (this.menu.contains(focused) || notebookLine.contains(focused));
    root.toggleAttribute('data-narrow', narrow);
    this.button.hidden = !narrow;
    if (narrow) {
      header.after(this.menu);
      this.menu.prepend(notebookLine);
      this.menu.hidden = !this.open;
    } else {
      wideAfter.after(this.menu);
      root.insertBefore(notebookLine, this._notebookHome);
      this.menu.hidden = false;
    }
    if (held) focused.focus();
  }

  dispose(): void {
    this._observer?.disconnect();
  }

  private _narrow = false;
  private readonly _notebookHome: ChildNode | null;
  private readonly _observer: ResizeObserver | null;
}
