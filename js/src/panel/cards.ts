/**
 * The transcript's cards: a tool call, the plan, a question, an approval. Each builder
 * makes the DOM and returns the parts the transcript updates in place later; what a click
 * does is the caller's (the transcript sends the command).
 */
import { clip, h, pretty } from './dom';
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

export interface IToolCard {
  card: HTMLDetailsElement;
  status: HTMLElement;
  output: HTMLElement;
  result: HTMLElement;
}

export function toolCard(e: {
  name: string;
  input: unknown;
  summary?: string;
}): IToolCard {
  const status = h('span', { class: 'ja-tool-status', text: 'running…' });
  const summary = h(
    'summary',
    {},
    h('span', { class: 'ja-tool-icon', 'aria-hidden': 'true', text: '⚙' }),
    h('span', { class: 'ja-tool-summary', text: e.summary || e.name }),
    status
  );
  const input = h('pre', { class: 'ja-pre', text: clip(pretty(e.input)) });
  const output = h('pre', { class: 'ja-pre ja-tool-output', hidden: true });
  const result = h('div', { class: 'ja-tool-result' });
  const card = h(
    'details',
    { class: 'ja-tool', 'data-tool': e.name, 'data-state': 'running' },
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
  return { card, status, output, result };
}

/** A tool's end: its state, time, result and (for an edit) its diff. */
export function endTool(tool: IToolCard, e: EntryOf<'tool_end'>): void {
  const { card, status, result } = tool;
  card.dataset.state = e.is_error ? 'error' : 'done';
  const took = e.duration
    ? ` · ${e.duration < 1 ? `${Math.round(e.duration * 1000)} ms` : `${e.duration.toFixed(1)} s`}`
    : '';
  status.textContent = `${e.is_error ? 'failed' : 'done'}${took}`;
  // An edit's result is its message and then its diff, for the model; the card shows the
  // message, and the diff once, coloured, below it.
  let shown = e.result;
  const diffHead = e.diff ? e.diff.split('\n', 1)[0] : '';
  const at = diffHead ? shown.indexOf(diffHead) : -1;
  if (at > 0) shown = shown.slice(0, at).trimEnd();
  result.replaceChildren(
    h('div', { class: 'ja-label', text: e.is_error ? 'Error' : 'Result' }),
    h('pre', { class: 'ja-pre', text: clip(shown) })
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
    { class: 'ja-card ja-plan', 'aria-label': 'Plan' },
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
    'aria-label': 'Question'
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
    const button = h('button', {
      type: 'button',
      class: `ja-option${isDefault ? ' ja-default' : ''}`,
      title: option.description || undefined,
      'data-value': option.value,
      text: option.label
    });
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

/** `decide(allow, remember)`: Allow, Always allow, Deny. */
export function approvalCard(
  e: EntryOf<'permission_request'>,
  decide: (card: IPendingCard, allow: boolean, remember: boolean) => void
): IPendingCard {
  const remember = e.remember ?? null;
  const allow = h('button', {
    type: 'button',
    class: 'ja-primary',
    text: 'Allow'
  });
  const always = h('button', {
    type: 'button',
    text: 'Always allow',
    hidden: remember === null
  });
  const deny = h('button', {
    type: 'button',
    class: 'ja-danger',
    text: 'Deny'
  });
  const buttons = [allow, always, deny];
  const answered = h('p', { class: 'ja-answered', hidden: true });
  const warnings = (e.warnings || []).map(text => h('li', { text }));
  const card = h(
    'section',
    { class: 'ja-card ja-approval ja-flash', 'aria-label': 'Approval' },
    h(
      'div',
      { class: 'ja-card-head' },
      h('h3', { text: 'Approval needed' }),
      h('span', { class: 'ja-badge', text: e.tool_name })
    ),
    h('p', { class: 'ja-approval-summary', text: e.summary }),
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
      {},
      h('summary', { text: 'Input' }),
      h('pre', { class: 'ja-pre', text: clip(pretty(e.input)) })
    ),
    h('div', { class: 'ja-actions' }, buttons),
    answered
  );
  if (remember !== null)
    always.title = `Remembers for this session: ${remember}`;
  const parts: IPendingCard = { card, buttons, answered };
  allow.addEventListener('click', () => decide(parts, true, false));
  always.addEventListener('click', () => decide(parts, true, true));
  deny.addEventListener('click', () => decide(parts, false, false));
  return parts;
}
