/**
 * Links to cells: a cell named by its place ("cell 7") where a card mentions its id; a
 * click asks the lab extension to show it.
 */
import { h } from './dom';

/** The event a cell link sends for the lab extension to scroll to that cell. */
export const REVEAL_CELL_EVENT = 'jupyter-agent:reveal-cell';

/** A cell as a person names it: its place ("cell 7") when known, else its id, short. */
export function cellName(cellId: string, position?: number | null): string {
  return position ? `cell ${position}` : `cell ${cellId.slice(0, 8)}`;
}

/** A link to a cell: `text` shown, the full id on hover; a click asks the lab extension
 * (REVEAL_CELL_EVENT, handled in src/index.ts) to show the cell. */
export function cellLink(cellId: string, text: string): HTMLAnchorElement {
  const link = h('a', {
    href: '#',
    class: 'ja-reveal-cell',
    title: `Show cell ${cellId} in the notebook`,
    'data-cell-id': cellId,
    text
  });
  link.addEventListener('click', event => {
    event.preventDefault();
    link.dispatchEvent(
      new CustomEvent(REVEAL_CELL_EVENT, {
        detail: { cellId },
        bubbles: true,
        cancelable: true
      })
    );
  });
  return link;
}

/** Cell ids a text may name → their positions (undefined: not known). */
export type CellPositions = Map<string, number | undefined>;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A cell's name where a link cannot be (inside a row's summary, itself a control): its
 * id on hover, with no action of its own. */
export function cellMention(cellId: string, text: string): HTMLElement {
  return h('span', {
    class: 'ja-cell-name',
    title: `Cell id ${cellId}`,
    'data-cell-id': cellId,
    text
  });
}

/**
 * `text` as text nodes, each of the `cells` it names (an id from the call's input or
 * result data, never guessed from the text) a link named "cell 7" (a "cell" word before
 * the id becomes the link's); `links: false`, a plain mention (cellMention) instead.
 * Inert: text nodes, links and spans, never HTML.
 */
export function withCellLinks(
  text: string,
  cells: CellPositions,
  links = true
): Node[] {
  const ids = [...cells.keys()].filter(Boolean);
  if (!ids.length || !text) return [document.createTextNode(text)];
  ids.sort((a, b) => b.length - a.length);
  const pattern = new RegExp(
    `(\\b[Cc]ell )?(?<![\\w-])(${ids.map(escapeRegExp).join('|')})(?![\\w-])`,
    'g'
  );
  const nodes: Node[] = [];
  let at = 0;
  for (const match of text.matchAll(pattern)) {
    const start = match.index ?? 0;
    if (start > at) nodes.push(document.createTextNode(text.slice(at, start)));
    const id = match[2];
    let name = cellName(id, cells.get(id));
    if (match[1]?.startsWith('C')) name = `C${name.slice(1)}`;
    nodes.push(links ? cellLink(id, name) : cellMention(id, name));
    at = start + match[0].length;
  }
  if (at < text.length) nodes.push(document.createTextNode(text.slice(at)));
  return nodes;
}

/** The cell ids a call names in its input (cell_id, after, before). */
export function inputCells(input: unknown): CellPositions {
  const cells: CellPositions = new Map();
  if (input && typeof input === 'object')
    for (const key of ['cell_id', 'after', 'before']) {
      const value = (input as Record<string, unknown>)[key];
      if (typeof value === 'string' && value) cells.set(value, undefined);
    }
  return cells;
}

/**
 * The cell links under `root` made plain text: they name cells of `notebook`, another
 * notebook than this one (a session that went on here), so a click must not show a cell
 * of this notebook that has the same id. The name stays; the title says whose cell it is.
 */
export function dropCellLinks(root: HTMLElement, notebook: string): void {
  for (const link of root.querySelectorAll('a.ja-reveal-cell')) {
    const id = link.getAttribute('data-cell-id') ?? '';
    const text = h('span', {
      class: 'ja-dropped-cell',
      title: `Cell ${id} of ${notebook}, not of this notebook`,
      text: link.textContent ?? ''
    });
    link.before(text);
    link.remove();
  }
}
