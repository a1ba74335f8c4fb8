/**
 * A tool call's card: its summary row (cell ids as links, a ticker while a cell runs),
 * its input, output and result, and a subagent's box inside a delegate call's card.
 */
import { withCellLinks, inputCells } from './cell-links';
import type { CellPositions } from './cell-links';
import { clip, h, pretty } from './dom';
import { CELL_TOOLS, CONTROL_TOOLS, nameOf, toolLabel } from './labels';
import type { EntryOf } from './types';

/** How long something has run, as the elapsed ticker says it: "7 s", "4 min 12 s". */
export function elapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export interface IToolCard {
  card: HTMLDetailsElement;
  /** The call's summary, its cell ids as links. */
  summary: HTMLElement;
  summaryText: string;
  /** The cells the call names, with their positions once the result says them. */
  cells: CellPositions;
  status: HTMLElement;
  /** What failed, in one line, on the row (shown without expanding the card). */
  errorLine: HTMLElement;
  output: HTMLElement;
  result: HTMLElement;
  /** A cell tool's last output line, on the row (CELL_TOOLS). */
  lastLine?: HTMLElement;
  /** Stops a cell tool's elapsed ticker (at its end). */
  stopTicker?: () => void;
}

/** Tick the card's elapsed time every second while it runs (not while it waits for the
 * user's approval); stops at the card's end or once the card left the page. */
function startTicker(card: HTMLElement, status: HTMLElement): () => void {
  let since = Date.now();
  let waited = false;
  const timer = setInterval(() => {
    if (card.isConnected === false) {
      clearInterval(timer);
      return;
    }
    if (card.dataset.state === 'waiting') {
      waited = true;
      return;
    }
    if (waited) {
      waited = false;
      since = Date.now(); // the approval came: the cell starts now
    }
    status.textContent = `running… ${elapsed(Date.now() - since)}`;
  }, 1000);
  // Under node (the unit tests) a card that never ends must not keep the process alive.
  (timer as unknown as { unref?: () => void }).unref?.();
  return () => clearInterval(timer);
}

export function toolCard(e: {
  name: string;
  input: unknown;
  summary?: string;
}): IToolCard {
  const status = h('span', { class: 'ja-tool-status', text: 'running…' });
  const errorLine = h('span', { class: 'ja-tool-error-line', hidden: true });
  const summaryText = e.summary || toolLabel(e.name);
  const cells = inputCells(e.input);
  const summarySpan = h(
    'span',
    { class: 'ja-tool-summary' },
    withCellLinks(summaryText, cells)
  );
  const summary = h(
    'summary',
    {},
    h('span', { class: 'ja-tool-icon', 'aria-hidden': 'true', text: '⚙' }),
    summarySpan,
    status,
    errorLine
  );
  const input = h('pre', { class: 'ja-pre', text: clip(pretty(e.input)) });
  const output = h('pre', { class: 'ja-pre ja-tool-output', hidden: true });
  const result = h('div', { class: 'ja-tool-result' });
  const card = h(
    'details',
    {
      class: 'ja-tool',
      'data-tool': e.name,
      'data-state': 'running',
      'aria-label': `Tool: ${nameOf(summarySpan.textContent ?? summaryText)}`
    },
    summary,
    h(
      'div',
      { class: 'ja-tool-body' },
      h('div', { class: 'ja-label', text: 'Input' }),
      input,
      output,
      result
    )
  );
  if (CONTROL_TOOLS.has(e.name)) card.hidden = true;
  const tool: IToolCard = {
    card,
    summary: summarySpan,
    summaryText,
    cells,
    status,
    errorLine,
    output,
    result
  };
  if (CELL_TOOLS.has(e.name)) {
    tool.lastLine = h('span', { class: 'ja-tool-last-line', hidden: true });
    summary.append(tool.lastLine);
    tool.stopTicker = startTicker(card, status);
  }
  return tool;
}

/** A cell tool's progress: the cell's last output line, in place of the previous one. */
export function showLastLine(tool: IToolCard, line: string): boolean {
  if (!tool.lastLine) return false;
  tool.lastLine.hidden = !line;
  tool.lastLine.textContent = line;
  tool.lastLine.title = line;
  return true;
}

/** A subagent inside the card of the call that started it (`delegate`): its role and task
 * on the row, its own transcript below (the caller fills `body`), its end on the row. */
export interface ISubagentBox {
  box: HTMLDetailsElement;
  status: HTMLElement;
  body: HTMLElement;
}

export function subagentBox(e: EntryOf<'subagent_spawned'>): ISubagentBox {
  const status = h('span', { class: 'ja-tool-status', text: 'running…' });
  const task = e.task ?? '';
  const body = h('div', { class: 'ja-subagent-body' });
  const box = h(
    'details',
    {
      class: 'ja-subagent',
      open: true,
      'data-state': 'running',
      'data-session': e.child_session_id,
      'aria-label': `Subagent (${e.agent_type}): ${nameOf(task)}`
    },
    h(
      'summary',
      {},
      h('span', { class: 'ja-subagent-role', text: `↳ ${e.agent_type}` }),
      h('span', { class: 'ja-subagent-task', text: task }),
      status
    ),
    body
  );
  return { box, status, body };
}

/** A subagent's end, on its row: how it ended (its summary is in its own transcript). */
export function endSubagent(
  sub: ISubagentBox,
  e: EntryOf<'subagent_complete'>
): void {
  const state = e.state ?? 'completed';
  sub.box.dataset.state = state;
  sub.status.textContent = state;
}

/** A tool call waits for the user's approval (`waiting`), or runs again after it. */
export function waitForUser(tool: IToolCard, waiting: boolean): void {
  tool.card.dataset.state = waiting ? 'waiting' : 'running';
  tool.status.textContent = waiting ? 'waiting for you' : 'running…';
}

/** A tool's end: its state, time, result and (for an edit) its diff. A call that failed,
 * was refused, or whose cell or command failed is red, its error line on the row. */
export function endTool(tool: IToolCard, e: EntryOf<'tool_end'>): void {
  const { card, status, result } = tool;
  tool.stopTicker?.();
  if (tool.lastLine) tool.lastLine.hidden = true;
  const failed = e.is_error || Boolean(e.error_line);
  card.dataset.state = failed ? 'error' : 'done';
  const took = e.duration
    ? ` · ${e.duration < 1 ? `${Math.round(e.duration * 1000)} ms` : `${e.duration.toFixed(1)} s`}`
    : '';
  status.textContent = `${failed ? 'failed' : 'done'}${took}`;
  tool.errorLine.hidden = !e.error_line;
  tool.errorLine.textContent = e.error_line ?? '';
  // An edit's result is its message and then its diff, for the model; the card shows the
  // message, and the diff once, coloured, below it.
  let shown = e.result;
  const diffHead = e.diff ? e.diff.split('\n', 1)[0] : '';
  const at = diffHead ? shown.indexOf(diffHead) : -1;
  if (at > 0) shown = shown.slice(0, at).trimEnd();
  // The cells the result names (data.cell_id, data.positions from tools/notebook.py), by
  // their place now: the summary says "cell 7" instead of an id from here on.
  const data = e.data ?? {};
  if (typeof data.cell_id === 'string' && data.cell_id)
    tool.cells.set(data.cell_id, tool.cells.get(data.cell_id));
  const positions = data.positions;
  if (positions && typeof positions === 'object')
    for (const [id, n] of Object.entries(positions))
      if (typeof n === 'number') tool.cells.set(id, n);
  if (tool.cells.size) {
    tool.summary.replaceChildren(
      ...withCellLinks(tool.summaryText, tool.cells)
    );
    card.setAttribute(
      'aria-label',
      `Tool: ${nameOf(tool.summary.textContent ?? tool.summaryText)}`
    );
  }
  result.replaceChildren(
    h('div', { class: 'ja-label', text: e.is_error ? 'Error' : 'Result' }),
    h('pre', { class: 'ja-pre' }, withCellLinks(clip(shown), tool.cells))
  );
  if (e.diff) {
    result.append(
      h('div', { class: 'ja-label', text: 'Diff' }),
      renderDiff(e.diff)
    );
    card.open = true;
  }
  if (CONTROL_TOOLS.has(e.name) && e.is_error) card.hidden = false;
}

export function renderDiff(diff: string): HTMLElement {
  const pre = h('pre', { class: 'ja-pre ja-diff' });
  for (const line of String(diff).split('\n')) {
    let cls = 'ja-diff-context';
    if (line.startsWith('+++') || line.startsWith('---')) cls = 'ja-diff-file';
    else if (line.startsWith('@@')) cls = 'ja-diff-hunk';
    else if (line.startsWith('+')) cls = 'ja-diff-add';
    else if (line.startsWith('-')) cls = 'ja-diff-del';
    pre.append(h('span', { class: cls, text: `${line}\n` }));
  }
  return pre;
}
