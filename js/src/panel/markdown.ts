/**
 * Markdown: a small, escape-first renderer that builds DOM nodes. Text only ever becomes
 * text nodes; the only attributes it sets are a code block's language class, a table
 * cell's alignment, and an http(s) link's href, so raw HTML, scripts, on* handlers and
 * javascript: links come out as the text they are.
 */
import { h } from './dom';

export const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const SAFE_URL = /^https?:\/\//i;

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

export function isBlank(line: string): boolean {
  return line.trim() === '';
}

function startsTable(lines: string[], i: number): boolean {
  return (
    lines[i].includes('|') &&
    i + 1 < lines.length &&
    TABLE_RULE.test(lines[i + 1]) &&
    lines[i + 1].includes('-')
  );
}

function startsBlock(lines: string[], i: number): boolean {
  const line = lines[i];
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    ITEM.test(line) ||
    startsTable(lines, i)
  );
}

function splitRow(line: string): string[] {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map(cell => cell.trim().replace(/\\\|/g, '|'));
}

export function renderMarkdown(source: unknown): DocumentFragment {
  const fragment = document.createDocumentFragment();
  const lines = String(source ?? '')
    .replace(/\r\n?/g, '\n')
    .split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      i++;
      continue;
    }
    let m = FENCE.exec(line);
    if (m) {
      const fence = m[1];
      const lang = m[2]
        .trim()
        .split(/\s+/)[0]
        .replace(/[^\w+-]/g, '');
      const body: string[] = [];
      i++;
      while (
        i < lines.length &&
        !(
          lines[i].trim().startsWith(fence) &&
          lines[i].trim().replace(/[`~]/g, '') === ''
        )
      ) {
        body.push(lines[i++]);
      }
      i++; // the closing fence (or the end of an unfinished block)
      const code = h('code', {
        class: lang ? `language-${lang}` : undefined,
        text: body.join('\n')
      });
      fragment.append(h('pre', { class: 'ja-code' }, code));
      continue;
    }
    m = HEADING.exec(line);
    if (m) {
      const heading = h(`h${Math.min(6, m[1].length + 2)}`, {
        class: 'ja-md-heading'
      });
      renderInline(m[2], heading);
      fragment.append(heading);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      fragment.append(h('hr'));
      i++;
      continue;
    }
    if (startsTable(lines, i)) {
      const [table, next] = renderTable(lines, i);
      fragment.append(table);
      i = next;
      continue;
    }
    m = QUOTE.exec(line);
    if (m) {
      const quoted: string[] = [];
      while (i < lines.length && (m = QUOTE.exec(lines[i]))) {
        quoted.push(m[1]);
        i++;
      }
      fragment.append(h('blockquote', {}, renderMarkdown(quoted.join('\n'))));
      continue;
    }
    if (ITEM.test(line)) {
      const [list, next] = renderList(lines, i);
      fragment.append(list);
      i = next;
      continue;
    }
    const paragraph: string[] = [];
    while (
      i < lines.length &&
      !isBlank(lines[i]) &&
      (paragraph.length === 0 || !startsBlock(lines, i))
    ) {
      paragraph.push(lines[i].trim());
      i++;
    }
    const p = h('p');
    paragraph.forEach((text, index) => {
      if (index > 0) p.append(h('br'));
      renderInline(text, p);
    });
    fragment.append(p);
  }
  return fragment;
}

function renderTable(lines: string[], start: number): [HTMLElement, number] {
  const header = splitRow(lines[start]);
  const aligns = splitRow(lines[start + 1]).map(cell =>
    cell.startsWith(':') && cell.endsWith(':')
      ? 'center'
      : cell.endsWith(':')
        ? 'right'
        : cell.startsWith(':')
          ? 'left'
          : ''
  );
  const style = (index: number) =>
    aligns[index] ? `text-align:${aligns[index]}` : undefined;
  const head = h('tr');
  header.forEach((cell, index) => {
    const th = h('th', { style: style(index) });
    renderInline(cell, th);
    head.append(th);
  });
  const body = h('tbody');
  let i = start + 2;
  while (i < lines.length && !isBlank(lines[i]) && lines[i].includes('|')) {
    const row = h('tr');
    const cells = splitRow(lines[i]);
    header.forEach((_, index) => {
      const td = h('td', { style: style(index) });
      renderInline(cells[index] ?? '', td);
      row.append(td);
    });
    body.append(row);
    i++;
  }
  return [h('table', { class: 'ja-md-table' }, h('thead', {}, head), body), i];
}

function renderList(lines: string[], start: number): [HTMLElement, number] {
  const first = ITEM.exec(lines[start])!;
  const base = first[1].length;
  const ordered = /\d/.test(first[2]);
  const list = h(ordered ? 'ol' : 'ul');
  if (ordered && parseInt(first[2], 10) !== 1)
    list.setAttribute('start', String(parseInt(first[2], 10)));
  let item: HTMLElement | null = null;
  let body: string[] = [];
  let contentIndent = base + 2;
  const flush = () => {
    if (item === null) return;
    const li = item;
    const simple =
      body.length === 1 ||
      body.every(line => !isBlank(line) && !startsBlock([line.trim()], 0));
    if (simple) {
      body.forEach((text, index) => {
        if (index > 0) li.append(h('br'));
        renderInline(text.trim(), li);
      });
    } else {
      li.append(renderMarkdown(body.join('\n')));
    }
    list.append(li);
  };
  let i = start;
  while (i < lines.length) {
    const line = lines[i];
    const m = ITEM.exec(line);
    if (m && m[1].length <= base + 1 && /\d/.test(m[2]) === ordered) {
      flush();
      item = h('li');
      body = [m[3]];
      contentIndent = m[1].length + m[2].length + 1;
      i++;
      continue;
    }
    if (isBlank(line)) {
      const next = lines[i + 1];
      const nextItem = next !== undefined && ITEM.exec(next);
      if (
        next !== undefined &&
        (indentOf(next) > base ||
          (nextItem &&
            nextItem[1].length <= base + 1 &&
            /\d/.test(nextItem[2]) === ordered))
      ) {
        body.push('');
        i++;
        continue;
      }
      break;
    }
    if (indentOf(line) > base) {
      body.push(line.slice(Math.min(indentOf(line), contentIndent)));
      i++;
      continue;
    }
    if (
      !startsBlock(lines, i) &&
      body.length &&
      !isBlank(body[body.length - 1])
    ) {
      body.push(line); // a lazy continuation of the item's text
      i++;
      continue;
    }
    break;
  }
  flush();
  return [list, i];
}

interface IInlineRule {
  re: RegExp;
  /** A link: not looked for inside a link's label. */
  link?: boolean;
  make(m: RegExpExecArray, inLink: boolean): Node;
}

function wrap(tag: string, inner: string, inLink: boolean): HTMLElement {
  const node = h(tag);
  renderSpans(inner, node, inLink);
  return node;
}

function link(label: string, url: string): Node {
  if (!SAFE_URL.test(url)) return document.createTextNode(label);
  const a = h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' });
  renderSpans(label, a, true);
  return a;
}

// Inline spans, earliest first; code spans take nothing inside them.
const INLINE: IInlineRule[] = [
  {
    re: /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/,
    make: m =>
      h('code', {
        text: m[2].trim() === '' ? m[2] : m[2].replace(/^ (.*) $/s, '$1')
      })
  },
  {
    re: /\[([^\]\n]+)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/,
    link: true,
    make: m => link(m[1], m[2])
  },
  {
    re: /\*\*(?=\S)([\s\S]*?\S)\*\*/,
    make: (m, inLink) => wrap('strong', m[1], inLink)
  },
  {
    re: /(?<![\w])__(?=\S)([\s\S]*?\S)__(?![\w])/,
    make: (m, inLink) => wrap('strong', m[1], inLink)
  },
  {
    re: /\*(?=[^\s*])([\s\S]*?[^\s*])\*(?!\*)/,
    make: (m, inLink) => wrap('em', m[1], inLink)
  },
  {
    re: /(?<![\w])_(?=[^\s_])([\s\S]*?[^\s_])_(?![\w])/,
    make: (m, inLink) => wrap('em', m[1], inLink)
  },
  {
    re: /~~(?=\S)([\s\S]*?\S)~~/,
    make: (m, inLink) => wrap('del', m[1], inLink)
  },
  {
    re: /\bhttps?:\/\/[^\s<>()]*[^\s<>().,;:!?'"\]]/,
    link: true,
    make: m => link(m[0], m[0])
  }
];

/** Appends `text`'s inline spans (code, links, emphasis, bare URLs) to `parent`. */
export function renderInline(text: unknown, parent: ParentNode): void {
  renderSpans(text, parent, false);
}

/** Inside a link's label (`inLink`) no link is looked for: links do not nest. */
function renderSpans(text: unknown, parent: ParentNode, inLink: boolean): void {
  let rest = String(text ?? '');
  while (rest) {
    let best: { m: RegExpExecArray; rule: IInlineRule } | null = null;
    for (const rule of INLINE) {
      if (inLink && rule.link) continue;
      const m = rule.re.exec(rest);
      if (m && (best === null || m.index < best.m.index)) best = { m, rule };
    }
    if (best === null) {
      parent.append(document.createTextNode(rest));
      return;
    }
    if (best.m.index > 0)
      parent.append(document.createTextNode(rest.slice(0, best.m.index)));
    parent.append(best.rule.make(best.m, inLink));
    rest = rest.slice(best.m.index + best.m[0].length);
  }
}
