/**
 * A tool call's card: its summary row (cells named by their place, a ticker while a cell
 * runs), folded unless the call failed or waits for the user; inside, its output, result
 * and diff, the raw input behind a "Details" toggle, and a subagent's box inside a
 * delegate call's card.
 */
import { cellLink, cellName, withCellLinks, inputCells } from './cell-links';
import type { CellPositions } from './cell-links';
import { clip, h, pretty } from './dom';
import {
  CELL_TOOLS,
  CONTROL_TOOLS,
  nameOf,
  TIMED_TOOLS,
  toolLabel
} from './labels';
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
  /** The elapsed ticker of a call that may run long (TIMED_TOOLS). */
  ticker?: ITicker;
  /** The card was opened because the call waits for the user: it folds again after. */
  openedToWait?: boolean;
}

export interface ITicker {
  /** Stops it (at the card's end). */
  stop(): void;
  /** How long the call has run as the row said it (its waits for the user left out), or
   * null when the row never showed a time (it ended within its first second). */
  ran(): number | null;
}

/** Tick the card's elapsed time every second while it runs (not while it waits for the
 * user's approval); stops at the card's end or once the card left the page. */
function startTicker(card: HTMLElement, status: HTMLElement): ITicker {
  let since = Date.now();
  let waited = false;
  let shown = false;
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
      since = Date.now(); // the approval came: the call starts now
    }
    shown = true;
    status.textContent = `running… ${elapsed(Date.now() - since)}`;
  }, 1000);
  // Under node (the unit tests) a card that never ends must not keep the process alive.
  (timer as unknown as { unref?: () => void }).unref?.();
  return {
    stop: () => clearInterval(timer),
    ran: () => (shown && !waited ? Date.now() - since : null)
  };
}

/**
 * A tool call's card, folded. `known`: where cells are, as far as the transcript knows
 * (earlier results, approval previews), so the row names a cell by its place from the
 * start rather than by an id until the call's own result says it.
 */
export function toolCard(
  e: {
    name: string;
    input: unknown;
    summary?: string;
  },
  known?: ReadonlyMap<string, number>
): IToolCard {
  const status = h('span', { class: 'ja-tool-status', text: 'running…' });
  const errorLine = h('span', { class: 'ja-tool-error-line', hidden: true });
  const summaryText = e.summary || toolLabel(e.name);
  const cells = inputCells(e.input);
  for (const id of cells.keys()) cells.set(id, known?.get(id));
  // A row's summary is its toggle: the cells it names are mentions (their id on hover);
  // the links that show them are in the body (a link inside a toggle is a control in a
  // control, which keyboards and screen readers cannot reach).
  const summarySpan = h(
    'span',
    { class: 'ja-tool-summary' },
    withCellLinks(summaryText, cells, false)
  );
  const summary = h(
    'summary',
    {},
    h('span', { class: 'ja-tool-icon', 'aria-hidden': 'true', text: '⚙' }),
    summarySpan,
    status,
    errorLine
  );
  // The raw input is for whoever wants to check it: behind a toggle of its own.
  const input = h(
    'details',
    { class: 'ja-raw-input' },
    h('summary', { text: 'Details' }),
    h('div', { class: 'ja-label', text: 'Input' }),
    h('pre', { class: 'ja-pre', text: clip(pretty(e.input)) })
  );
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
    h('div', { class: 'ja-tool-body' }, output, result, input)
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
  }
  if (TIMED_TOOLS.has(e.name)) tool.ticker = startTicker(card, status);
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

/** A subagent inside the card of the call that started it (`delegate`): its role on the
 * row (its task too when no such card shows it), its own transcript below (the caller fills
 * `body`), its end on the row. */
export interface ISubagentBox {
  box: HTMLDetailsElement;
  status: HTMLElement;
  body: HTMLElement;
}

export function subagentBox(
  e: EntryOf<'subagent_spawned'>,
  inCall = false
): ISubagentBox {
  const status = h('span', { class: 'ja-tool-status', text: 'running…' });
  const task = e.task ?? '';
  // In its delegate call's card, whose row says the task: said once, there.
  const shown = inCall ? '' : task;
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
      shown ? h('span', { class: 'ja-subagent-task', text: shown }) : null,
      status
    ),
    body
  );
  return { box, status, body };
}

/** How a subagent's row says its end: a stopped one did not fail. */
const SUBAGENT_ENDS: Partial<Record<string, string>> = {
  completed: 'done',
  cancelled: 'stopped',
  error: 'failed'
};

/** A subagent's end, on its row: how it ended (its summary is in its own transcript). */
export function endSubagent(
  sub: ISubagentBox,
  e: EntryOf<'subagent_complete'>
): void {
  const state = e.state ?? 'completed';
  sub.box.dataset.state = state;
  sub.status.textContent = SUBAGENT_ENDS[state] ?? state.replace(/_/g, ' ');
}

/** A tool call waits for the user's approval (`waiting`), or runs again after it. Its
 * row is open while it waits, and folds again after (unless the user had opened it). */
export function waitForUser(tool: IToolCard, waiting: boolean): void {
  tool.card.dataset.state = waiting ? 'waiting' : 'running';
  tool.status.textContent = waiting ? 'waiting for you' : 'running…';
  if (waiting && !tool.card.open) {
    tool.card.open = true;
    tool.openedToWait = true;
  } else if (!waiting && tool.openedToWait) {
    tool.card.open = false;
    tool.openedToWait = false;
  }
}

/** The cells the call names are at these places now: the row says "cell 4". */
export function placeCells(
  tool: IToolCard,
  positions: Iterable<[string, number]>
): void {
  let changed = false;
  for (const [id, n] of positions) {
    if (tool.cells.has(id) && tool.cells.get(id) !== n) {
      tool.cells.set(id, n);
      changed = true;
    }
  }
  if (!changed) return;
  tool.summary.replaceChildren(
    ...withCellLinks(tool.summaryText, tool.cells, false)
  );
  tool.card.setAttribute(
    'aria-label',
    `Tool: ${nameOf(tool.summary.textContent ?? tool.summaryText)}`
  );
}

/** The positions a result's data gives (`data.positions`, tools/notebook.py). */
export function resultPositions(
  data: Record<string, unknown> | null | undefined
): [string, number][] {
  const positions = data?.positions;
  if (!positions || typeof positions !== 'object') return [];
  return Object.entries(positions).filter(
    (entry): entry is [string, number] => typeof entry[1] === 'number'
  );
}

/** How a call ended, as its row says it: a Stop is not a failure, nor is a Deny. */
type Ended = 'done' | 'error' | 'denied' | 'stopped';

const ENDED_WORDS: Record<Ended, string> = {
  done: 'done',
  error: 'failed',
  denied: 'denied',
  stopped: 'stopped'
};

function ended(e: EntryOf<'tool_end'>): Ended {
  switch (e.outcome) {
    case 'denied':
      return 'denied';
    case 'interrupted': // the user's Stop
    case 'stopped': // the run ended otherwise (a limit) while the call was under way
      return 'stopped';
    default:
      // A call that succeeded for the model may still have failed for the user (its cell
      // raised, its command exited non-zero): its error line says so.
      return e.is_error || e.error_line ? 'error' : 'done';
  }
}

/** A duration as a row says it: "250 ms", "3.2 s", "4 min 12 s". */
function took(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : elapsed(ms);
}

/** A call cut short by the run's end before its own end came: it says "stopped", with
 * the time it had run (as its row showed it). */
export function stopTool(tool: IToolCard): void {
  if (tool.card.dataset.state !== 'running') return;
  const ran = tool.ticker?.ran() ?? null;
  tool.ticker?.stop();
  if (tool.lastLine) tool.lastLine.hidden = true;
  tool.card.dataset.state = 'stopped';
  tool.status.textContent = `stopped${ran !== null ? ` · ${took(ran)}` : ''}`;
}

/** A tool's end: its state, time, result and (for an edit) its diff. A call that failed,
 * or whose cell or command failed, is red, its error line on the row; a call the user
 * stopped says "stopped" (with the time it ran) and one they denied "denied". */
export function endTool(tool: IToolCard, e: EntryOf<'tool_end'>): void {
  const { card, status, result } = tool;
  const ran = tool.ticker?.ran() ?? null;
  tool.ticker?.stop();
  if (tool.lastLine) tool.lastLine.hidden = true;
  const state = ended(e);
  const failed = state === 'error';
  card.dataset.state = state;
  // The kernel's time (the call's own work); a call cut short has none: the time its row
  // showed while it ran. A denied call did not run: no time.
  const ms = state === 'denied' ? null : e.duration ? e.duration * 1000 : ran;
  status.textContent = `${ENDED_WORDS[state]}${ms ? ` · ${took(ms)}` : ''}`;
  tool.errorLine.hidden = !e.error_line;
  tool.errorLine.textContent = e.error_line ?? '';
  // An edit's result is its message and then its diff, for the model; the card shows the
  // message, and the diff once, coloured, below it.
  let shown = e.result;
  const diffHead = e.diff ? e.diff.split('\n', 1)[0] : '';
  const at = diffHead ? shown.indexOf(diffHead) : -1;
  if (at > 0) shown = shown.slice(0, at).trimEnd();
  // The cells the result names (data.cell_id, data.positions from tools/notebook.py), by
  // their place now: the row says "cell 7", never an id, once a place is known.
  const data = e.data ?? {};
  const cellId =
    typeof data.cell_id === 'string' && data.cell_id ? data.cell_id : null;
  if (cellId && !tool.cells.has(cellId)) tool.cells.set(cellId, undefined);
  placeCells(tool, resultPositions(data));
  result.replaceChildren(
    h('div', { class: 'ja-label', text: e.is_error ? 'Error' : 'Result' }),
    h('pre', { class: 'ja-pre' }, withCellLinks(clip(shown), tool.cells))
  );
  if (e.diff) {
    // A cell's diff is headed by the cell's name (a link, its id on hover), not by the
    // "--- a/cell <id>" lines the model reads.
    const ofCell = cellId !== null && diffHead === `--- a/cell ${cellId}`;
    result.append(
      ofCell
        ? h(
            'div',
            { class: 'ja-label' },
            'Diff of ',
            cellLink(cellId, cellName(cellId, tool.cells.get(cellId)))
          )
        : h('div', { class: 'ja-label', text: 'Diff' }),
      renderDiff(e.diff, ofCell)
    );
  }
  // Folded, like every row, unless it failed: what went wrong shows without a click.
  if (failed) card.open = true;
  // A control tool's card shows only when it failed (a stopped ask_user is its question's
  // card's to say).
  if (CONTROL_TOOLS.has(e.name) && failed) card.hidden = false;
}

/** A unified diff, coloured; `headless`: without its "---"/"+++" file lines (the card
 * names what it is a diff of). */
export function renderDiff(diff: string, headless = false): HTMLElement {
  const pre = h('pre', { class: 'ja-pre ja-diff' });
  let lines = String(diff).split('\n');
  if (headless) {
    const body = lines.findIndex(
      line => !line.startsWith('---') && !line.startsWith('+++')
    );
    lines = body < 0 ? [] : lines.slice(body);
  }
  for (const line of lines) {
    let cls = 'ja-diff-context';
    if (line.startsWith('+++') || line.startsWith('---')) cls = 'ja-diff-file';
    else if (line.startsWith('@@')) cls = 'ja-diff-hunk';
    else if (line.startsWith('+')) cls = 'ja-diff-add';
    else if (line.startsWith('-')) cls = 'ja-diff-del';
    pre.append(h('span', { class: cls, text: `${line}\n` }));
  }
  return pre;
}
