/**
 * The plan's card: its goal, the step table (each step's status updated in place), risks,
 * prerequisites and the Execute plan button.
 */
import { h } from './dom';
import { nameOf } from './labels';
import type { Plan } from './types';

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
