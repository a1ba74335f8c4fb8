/**
 * The trust prompt: what trusting the folder's settings would enable, as the kernel
 * rendered it from their effect (jupyter_agent/config/trust.py), shown from the moment the panel
 * opens. Every effect is listed (the card scrolls, nothing is "… and N more"); each
 * summary is the kernel's words, and the settings' own text (a detail's name and value)
 * is data, shown in <code> as text, never as markup.
 */
import { h } from './dom';
import type { TrustDetail, TrustEffect, TrustPrompt } from './types';

/** The groups of the prompt, in the order it lists them. */
const GROUPS: [TrustEffect['kind'], string][] = [
  ['mcp_server', 'Programs and servers it would start or reach'],
  ['provider', 'Where conversations would be sent'],
  ['models', 'Models'],
  ['role', 'Roles'],
  ['rule', 'Rules'],
  ['default_rules', 'Built-in rules'],
  ['cells', 'Cells'],
  ['context', 'Context window']
];

function detailItem(d: TrustDetail): HTMLElement {
  return h(
    'li',
    { class: 'ja-trust-detail' },
    h('span', { class: 'ja-trust-label', text: d.label }),
    d.name ? [' ', h('code', { text: d.name })] : null,
    d.value ? [': ', h('code', { text: d.value })] : null
  );
}

function effectItem(e: TrustEffect): HTMLElement {
  const details = e.details || [];
  return h(
    'li',
    { class: 'ja-trust-effect', 'data-kind': e.kind },
    h('span', { class: 'ja-trust-summary', text: e.summary }),
    details.length
      ? h(
          'details',
          { class: 'ja-trust-more' },
          h('summary', { text: 'As the settings file writes it' }),
          h('ul', { class: 'ja-trust-details' }, details.map(detailItem))
        )
      : null
  );
}

/** The headings that say what trusting would do, once it is done (the trusted line). */
const NOW: Partial<Record<TrustEffect['kind'], string>> = {
  mcp_server: 'Programs and servers it may start or reach',
  provider: 'Where conversations may be sent'
};

/** The effects, grouped by what they are about, each group under its heading (`now`:
 * what applies since the folder was trusted, not what trusting would do). */
export function effectList(effects: TrustEffect[], now = false): HTMLElement {
  const known = new Set(GROUPS.map(([kind]) => kind));
  const headings = GROUPS.map(
    ([kind, heading]) =>
      [kind, (now && NOW[kind]) || heading] as [TrustEffect['kind'], string]
  );
  const groups = [
    ...headings,
    // A kind a newer kernel sends still shows, under a plain heading.
    ...[...new Set(effects.map(e => e.kind))]
      .filter(kind => !known.has(kind))
      .map(kind => [kind, 'Other'] as [TrustEffect['kind'], string])
  ];
  return h(
    'div',
    { class: 'ja-trust-effects' },
    groups.flatMap(([kind, heading]) => {
      const mine = effects.filter(e => e.kind === kind);
      if (!mine.length) return [];
      return [
        h('h4', { text: heading }),
        h('ul', { class: 'ja-trust-list' }, mine.map(effectItem))
      ];
    })
  );
}

/**
 * The prompt's card: what trusting would enable, and the Trust button. `trust` is called
 * with the button when it is pressed (the kernel's answer clears the prompt, or says the
 * settings changed and sends the new one).
 */
export function trustCard(
  prompt: TrustPrompt,
  trust: (button: HTMLButtonElement) => void
): HTMLElement {
  const effects = prompt.effects || [];
  const button = h('button', {
    type: 'button',
    class: 'ja-primary',
    text: 'Trust this folder',
    title:
      'Apply everything listed here (remembered in ~/.jupyter_agent/trusted-folders.json)'
  });
  button.addEventListener('click', () => trust(button));
  return h(
    'section',
    {
      class: 'ja-card ja-trust',
      'aria-label': "Trust this folder's settings?"
    },
    h(
      'div',
      { class: 'ja-card-head' },
      h('h3', { text: "This folder's settings are not trusted" })
    ),
    h(
      'p',
      { class: 'ja-trust-intro' },
      'Until you trust this folder, its settings (',
      h('code', { text: prompt.source }),
      ') apply only where they narrow what the agent may do. ' +
        `Trusting it would enable ${effects.length === 1 ? 'this' : `these ${effects.length} things`}:`
    ),
    effectList(effects),
    policyNote(prompt),
    h('div', { class: 'ja-actions' }, button)
  );
}

/** What the administrator's policy fixes, whatever the folder's settings say (none: null). */
function policyNote(prompt: TrustPrompt): HTMLElement | null {
  const lines = prompt.policy || [];
  if (!lines.length) return null;
  return h(
    'div',
    { class: 'ja-trust-policy' },
    h(
      'p',
      {},
      "Whatever these settings say, your administrator's policy (",
      h('code', { text: prompt.policy_source || '' }),
      ') fixes:'
    ),
    h(
      'ul',
      {},
      lines.map(line => h('li', { text: line }))
    )
  );
}

/** The transcript's line once the folder is trusted: what applies now. */
export function trustedLine(applied: TrustPrompt): HTMLElement {
  const effects = applied.effects || [];
  return h(
    'div',
    { class: 'ja-line ja-trusted' },
    h('div', {
      text: effects.length
        ? '✔ Trusted this folder: its settings apply in full. Now:'
        : '✔ Trusted this folder: its settings apply (nothing was held back).'
    }),
    effects.length ? effectList(effects, true) : null,
    policyNote(applied)
  );
}
