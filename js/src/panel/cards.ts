/**
 * The transcript's cards: a tool call, the plan, a question, an approval. Each builder
 * makes the DOM and returns the parts the transcript updates in place later; what a click
 * does is the caller's (the transcript sends the command).
 */
import { clip, h, pretty } from './dom';
import { highlightCode } from './highlight';
import type { EntryOf, Plan } from './types';
import { CONTROL_TOOLS as CONTROL_TOOL_NAMES } from './wire';

/** Tools the agent uses to talk to the panel: their cards stay hidden unless they fail. */
export const CONTROL_TOOLS: ReadonlySet<string> = new Set(CONTROL_TOOL_NAMES);

export const STEP_LABELS: Record<EntryOf<'plan_step'>['status'], string> = {
  pending: 'pending',
  in_progress: 'in progress',
  done: 'done',
  skipped: 'skipped'
};

/** The event a cell link sends for the lab extension to scroll to that cell. */
export const REVEAL_CELL_EVENT = 'jupyter-agent:reveal-cell';

/** Characters of a question, a goal or a summary an accessible name keeps. */
const NAME_CHARS = 80;

/** `text` short enough for a card's accessible name. */
function nameOf(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > NAME_CHARS ? `${line.slice(0, NAME_CHARS - 1)}…` : line;
}

/** A tool as a person names it: an MCP server's tool (`mcp__github__search_issues`) as
 * "github · search_issues"; any other by its name. */
export function toolLabel(name: string): string {
  const mcp = /^mcp__(.+?)__(.+)$/.exec(name);
  return mcp ? `${mcp[1]} · ${mcp[2]}` : name;
}

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

/**
 * `text` as text nodes, each of the `cells` it names (an id from the call's input or
 * result data, never guessed from the text) a link named "cell 7" (a "cell" word before
 * the id becomes the link's). Inert: text nodes and links, never HTML.
 */
export function withCellLinks(text: string, cells: CellPositions): Node[] {
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
    nodes.push(cellLink(id, name));
    at = start + match[0].length;
  }
  if (at < text.length) nodes.push(document.createTextNode(text.slice(at)));
  return nodes;
}

/** The cell ids a call names in its input (cell_id, after, before). */
function inputCells(input: unknown): CellPositions {
  const cells: CellPositions = new Map();
  if (input && typeof input === 'object')
    for (const key of ['cell_id', 'after', 'before']) {
      const value = (input as Record<string, unknown>)[key];
      if (typeof value === 'string' && value) cells.set(value, undefined);
    }
  return cells;
}

/**
 * Tools that wait for a running cell (tools/_cell_run.py): while one waits, its card ticks
 * the time since it started (from here, so it goes on while the kernel is busy and sends
 * nothing) and shows the cell's last output line (its progress events).
 */
export const CELL_TOOLS: ReadonlySet<string> = new Set([
  'run_cell',
  'wait_for_cell'
]);

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

function listSection(
  title: string,
  items: string[] | undefined,
  cls: string
): HTMLElement | null {
  if (!items || !items.length) return null;
  return h(
    'div',
    { class: `ja-list ${cls}` },
    h('strong', { text: `${title}:` }),
    h(
      'ul',
      {},
      items.map(item => h('li', { text: item }))
    )
  );
}

export interface IPlanStepRow {
  row: HTMLElement;
  status: HTMLElement;
}

export interface IPlanCard {
  card: HTMLElement;
  button: HTMLButtonElement;
  steps: Map<number, IPlanStepRow>;
}

export function planCard(plan: Plan): IPlanCard {
  const rows = plan.steps.map((step): [number, IPlanStepRow] => {
    const status = h('td', {
      class: 'ja-step-status',
      'data-status': 'pending',
      text: 'pending'
    });
    const row = h(
      'tr',
      { 'data-step': step.step_number },
      h('td', { class: 'ja-step-number', text: String(step.step_number) }),
      h('td', { text: step.action }),
      h('td', { text: step.reason || '' }),
      h('td', { text: (step.tools_needed || []).join(', ') }),
      h('td', { text: step.estimated_time || '' }),
      status
    );
    return [step.step_number, { row, status }];
  });
  const table = h(
    'table',
    { class: 'ja-plan-table' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['#', 'Action', 'Reason', 'Tools', 'Time', 'Status'].map(t =>
          h('th', { scope: 'col', text: t })
        )
      )
    ),
    h(
      'tbody',
      {},
      rows.map(([, r]) => r.row)
    )
  );
  const button = h('button', {
    type: 'button',
    class: 'ja-primary ja-execute',
    text: 'Execute plan'
  });
  const card = h(
    'section',
    { class: 'ja-card ja-plan', 'aria-label': `Plan: ${nameOf(plan.goal)}` },
    h('h3', { text: 'Plan' }),
    h('p', { class: 'ja-goal' }, h('strong', { text: 'Goal: ' }), plan.goal),
    table,
    plan.estimated_total_time
      ? h(
          'p',
          { class: 'ja-meta' },
          h('strong', { text: 'Estimated total: ' }),
          plan.estimated_total_time
        )
      : null,
    listSection('Risks', plan.risks, 'ja-risks'),
    listSection('Prerequisites', plan.prerequisites, 'ja-prerequisites'),
    h('div', { class: 'ja-actions' }, button)
  );
  return { card, button, steps: new Map(rows) };
}

/** A question or an approval: its buttons are disabled and a line says how it ended. */
export interface IPendingCard {
  card: HTMLElement;
  buttons: (HTMLButtonElement | HTMLInputElement)[];
  answered: HTMLElement;
}

export interface IQuestionCard extends IPendingCard {
  options: HTMLElement;
}

/** Ids of option descriptions, unique in the page. */
let optionDescriptions = 0;

/** `send(value, button)`: an option's button, or null for the free-text answer. */
export function questionCard(
  e: EntryOf<'question'>,
  send: (
    card: IQuestionCard,
    value: string,
    button: HTMLButtonElement | null
  ) => void
): IQuestionCard {
  const q = e.question;
  const card = h('section', {
    class: 'ja-card ja-question ja-flash',
    'data-severity': q.severity,
    'aria-label': `Question: ${nameOf(q.question)}`
  });
  const buttons: (HTMLButtonElement | HTMLInputElement)[] = [];
  const answered = h('p', { class: 'ja-answered', hidden: true });
  const options = h('div', {
    class: 'ja-options',
    role: 'group',
    'aria-label': 'Answer options'
  });
  const parts: IQuestionCard = { card, buttons, answered, options };
  for (const option of q.options || []) {
    const isDefault =
      q.default !== null &&
      q.default !== undefined &&
      option.value === q.default;
    // The description shows under the label. It is the button's description, not part
    // of its name (aria-hidden here, read through aria-describedby), so the option is
    // still called by its label.
    const descriptionId = option.description
      ? `ja-option-description-${++optionDescriptions}`
      : undefined;
    const button = h(
      'button',
      {
        type: 'button',
        class: `ja-option${isDefault ? ' ja-default' : ''}`,
        'data-value': option.value,
        'aria-describedby': descriptionId
      },
      h('span', { class: 'ja-option-label', text: option.label }),
      option.description
        ? h('span', {
            class: 'ja-option-description',
            id: descriptionId,
            'aria-hidden': 'true',
            text: option.description
          })
        : null
    );
    button.addEventListener('click', () => send(parts, option.value, button));
    buttons.push(button);
    options.append(button);
  }
  let free: HTMLElement | null = null;
  if (q.allow_custom || !(q.options || []).length) {
    const input = h('input', {
      type: 'text',
      class: 'ja-free-input',
      'aria-label': 'Your answer',
      placeholder: 'Type your answer…'
    });
    const submit = h('button', { type: 'submit', text: 'Answer' });
    free = h('form', { class: 'ja-free' }, input, submit);
    free.addEventListener('submit', event => {
      event.preventDefault();
      if (!input.value.trim()) return;
      send(parts, input.value, null);
    });
    buttons.push(input, submit);
  }
  const children = [
    h(
      'div',
      { class: 'ja-card-head' },
      h('h3', { text: 'Question' }),
      h('span', { class: 'ja-badge', text: q.severity })
    ),
    h('p', { class: 'ja-question-text', text: q.question }),
    q.context ? h('p', { class: 'ja-context', text: q.context }) : null,
    (q.options || []).length ? options : null,
    free,
    answered
  ];
  card.append(...children.filter((c): c is HTMLElement => Boolean(c)));
  return parts;
}

type Preview = NonNullable<EntryOf<'permission_request'>['preview']>;

/** What the call would do, as the user judges it: the code, the command, the diff. */
export function previewSection(preview: Preview): HTMLElement | null {
  // `kind` is optional in the generated types (it has a default); the kernel always sends it.
  if (preview.kind === 'cell') return cellPreview(preview);
  if (preview.kind === 'command') return commandPreview(preview);
  if (preview.kind === 'file') return filePreview(preview);
  return null;
}

function cellWhere(p: Extract<Preview, { kind?: 'cell' }>): string {
  return p.index !== null && p.index !== undefined
    ? `cell ${p.index}${p.count ? ` of ${p.count}` : ''}`
    : 'a cell';
}

/** An approval card's accessible name: what the call does ("Approval: run cell 3 of 12"). */
function approvalName(e: EntryOf<'permission_request'>): string {
  const preview = e.preview;
  if (preview?.kind === 'cell' && preview.index)
    return `Approval: run ${cellWhere(preview)}`;
  const summary = nameOf(e.summary || e.tool_name);
  return `Approval: ${summary.charAt(0).toLowerCase()}${summary.slice(1)}`;
}

function cellPreview(p: Extract<Preview, { kind?: 'cell' }>): HTMLElement {
  const where = cellWhere(p);
  const link = cellLink(p.cell_id, where);
  return h(
    'div',
    { class: 'ja-preview ja-preview-cell' },
    h('p', { class: 'ja-preview-where' }, 'Runs ', link, ':'),
    h(
      'pre',
      { class: 'ja-pre ja-code-block' },
      highlightCode(clip(p.source), p.language || 'python')
    )
  );
}

const EFFECT_LABELS: Record<string, string> = {
  inert: 'changes nothing',
  reads: 'only reads',
  writes: 'writes',
  runs_code: 'runs code',
  unknown: 'unknown'
};

function commandPreview(
  p: Extract<Preview, { kind?: 'command' }>
): HTMLElement {
  const programs = (p.programs || []).map(program =>
    h(
      'li',
      { 'data-effect': program.effect },
      h('code', { text: program.text }),
      ' ',
      h('span', {
        class: 'ja-effect',
        text: EFFECT_LABELS[program.effect] ?? program.effect
      }),
      program.note && program.note !== EFFECT_LABELS[program.effect]
        ? ` — ${program.note}`
        : '',
      (program.writes || []).length
        ? ` (${(program.writes || []).join(', ')})`
        : ''
    )
  );
  const redirects = (p.redirects || []).map(text =>
    h(
      'li',
      { 'data-effect': 'writes' },
      h('code', { text }),
      ' ',
      h('span', { class: 'ja-effect', text: 'writes' }),
      ' — a redirection'
    )
  );
  return h(
    'div',
    { class: 'ja-preview ja-preview-command' },
    h(
      'pre',
      { class: 'ja-pre ja-code-block' },
      highlightCode(clip(p.command), 'bash')
    ),
    p.working_dir && p.working_dir !== '.'
      ? h('p', { class: 'ja-meta', text: `in ${p.working_dir}` })
      : null,
    programs.length || redirects.length
      ? h(
          'ul',
          { class: 'ja-programs', 'aria-label': 'What it runs' },
          programs,
          redirects
        )
      : null,
    p.sandbox
      ? h('p', { class: 'ja-preview-sandbox', text: `Sandbox: ${p.sandbox}` })
      : null
  );
}

const FILE_ACTIONS: Record<string, string> = {
  create: 'Creates',
  overwrite: 'Replaces',
  edit: 'Edits',
  delete: 'Deletes'
};

function filePreview(p: Extract<Preview, { kind?: 'file' }>): HTMLElement {
  return h(
    'div',
    { class: 'ja-preview ja-preview-file' },
    h(
      'p',
      { class: 'ja-preview-where' },
      `${FILE_ACTIONS[p.action] ?? p.action} `,
      h('code', { text: p.path })
    ),
    p.diff
      ? renderDiff(clip(p.diff))
      : h('p', { class: 'ja-meta', text: 'Not a text file: no diff to show.' })
  );
}

/** `decide(allow, remember, scope)`: Allow, Always allow (in a scope), Deny. */
export function approvalCard(
  e: EntryOf<'permission_request'>,
  decide: (
    card: IPendingCard,
    allow: boolean,
    remember: boolean,
    scope: string | null
  ) => void
): IPendingCard {
  const remember = e.remember ?? null;
  const options = e.remember_options || [];
  const first = options[0] ?? null;
  const allow = h('button', {
    type: 'button',
    class: 'ja-primary',
    text: 'Allow'
  });
  const always = h('button', {
    type: 'button',
    class: 'ja-always',
    text: first ? first.label : 'Always allow',
    hidden: remember === null && first === null
  });
  const more = h('button', {
    type: 'button',
    class: 'ja-always-more',
    'aria-label': 'Other scopes',
    'aria-haspopup': 'menu',
    'aria-expanded': 'false',
    text: '▾',
    hidden: options.length < 2
  });
  const menu = h('div', {
    class: 'ja-always-menu',
    role: 'menu',
    'aria-label': '“Always allow” scopes',
    hidden: true
  });
  const deny = h('button', {
    type: 'button',
    class: 'ja-danger',
    text: 'Deny'
  });
  const items = options.map(option =>
    h('button', {
      type: 'button',
      role: 'menuitem',
      class: 'ja-scope',
      'data-scope': option.id,
      title: `Remembers for this session: ${(option.rules || []).join('; ')}`,
      text: option.label
    })
  );
  menu.append(...items);
  const buttons = [allow, always, more, ...items, deny];
  const answered = h('p', { class: 'ja-answered', hidden: true });
  const warnings = (e.warnings || []).map(text => h('li', { text }));
  // The cells the call names, at the place the preview gives (a run's cell).
  const cells = inputCells(e.input);
  if (e.preview?.kind === 'cell' && e.preview.index)
    cells.set(e.preview.cell_id, e.preview.index);
  const card = h(
    'section',
    { class: 'ja-card ja-approval ja-flash', 'aria-label': approvalName(e) },
    h(
      'div',
      { class: 'ja-card-head' },
      h('h3', { text: 'Approval needed' }),
      h('span', { class: 'ja-badge', text: toolLabel(e.tool_name) })
    ),
    h('p', { class: 'ja-approval-summary' }, withCellLinks(e.summary, cells)),
    e.preview ? previewSection(e.preview) : null,
    warnings.length
      ? h(
          'ul',
          { class: 'ja-warnings', role: 'alert', 'aria-label': 'Warnings' },
          warnings
        )
      : null,
    e.reason ? h('p', { class: 'ja-context', text: e.reason }) : null,
    h('p', {
      class: 'ja-remember',
      text:
        remember === null
          ? '“Always allow” is not offered: a call like this asks every time.'
          : `“Always allow” remembers: ${remember}.`
    }),
    h(
      'details',
      { class: 'ja-raw-input' },
      h('summary', { text: 'Input' }),
      h('pre', { class: 'ja-pre', text: clip(pretty(e.input)) })
    ),
    h(
      'div',
      { class: 'ja-actions' },
      allow,
      h('span', { class: 'ja-always-group' }, always, more, menu),
      deny
    ),
    answered
  );
  if (remember !== null)
    always.title = `Remembers for this session: ${remember}`;
  const parts: IPendingCard = { card, buttons, answered };
  const closeMenu = () => {
    menu.hidden = true;
    more.setAttribute('aria-expanded', 'false');
  };
  allow.addEventListener('click', () => decide(parts, true, false, null));
  always.addEventListener('click', () =>
    decide(parts, true, true, first ? first.id : null)
  );
  more.addEventListener('click', () => {
    menu.hidden = !menu.hidden;
    more.setAttribute('aria-expanded', String(!menu.hidden));
    if (!menu.hidden) items[0]?.focus();
  });
  // Esc closes the open menu first (and is not the panel's Stop: it is handled here).
  const closeOnEscape = (event: Event) => {
    const key = event as KeyboardEvent;
    if (key.key !== 'Escape' || menu.hidden || key.isComposing) return;
    key.preventDefault();
    key.stopPropagation();
    closeMenu();
    more.focus();
  };
  more.addEventListener('keydown', closeOnEscape);
  menu.addEventListener('keydown', closeOnEscape);
  items.forEach((item, i) =>
    item.addEventListener('click', () => {
      closeMenu();
      decide(parts, true, true, options[i].id);
    })
  );
  deny.addEventListener('click', () => decide(parts, false, false, null));
  return parts;
}
