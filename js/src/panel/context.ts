/**
 * The context window in the panel: the gauge (how full the model's window is, how much of
 * it the prompt cache served) with its Compact now button, and the transcript's marker
 * where the conversation was compacted. The kernel sends the numbers (the `context` trait,
 * `compaction` entries); the wording here is CompactionEvent.describe()'s in events.py.
 */
import { h } from './dom';
import type { EntryOf, PanelContext } from './types';

/** Shares of the window from which the gauge warns, then alarms. */
export const CONTEXT_HIGH = 0.7;
export const CONTEXT_FULL = 0.9;

const WHY: Record<EntryOf<'compaction'>['reason'], string> = {
  auto: 'the context window was filling up',
  manual: 'you asked',
  too_long: 'the API said the prompt was too long'
};

function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** Tokens in a few characters: 950, 90k, 1.2M. */
export function tokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1_000) return `${Math.round(n / 1_000)}k`;
  return String(Math.round(n));
}

/** "Context 45% · 90k / 200k · 80% cached"; empty when there is nothing to show. */
export function contextText(context: PanelContext | null | undefined): string {
  if (!context || !context.window || context.used_tokens === undefined)
    return '';
  const used = context.used_tokens;
  const share = Math.round((100 * used) / context.window);
  let text = `Context ${share}% · ${tokens(used)} / ${tokens(context.window)}`;
  if (context.estimated) text += ' (estimated)';
  else if (used > 0 && context.cached_tokens)
    text += ` · ${Math.round((100 * context.cached_tokens) / used)}% cached`;
  return text;
}

/** What a compaction did, why, and what it saved: CompactionEvent.describe()'s line. */
export function describeCompaction(
  e: Partial<EntryOf<'compaction'>> & Pick<EntryOf<'compaction'>, 'reason'>
): string {
  const done: string[] = [];
  const cleared = e.cleared ?? 0;
  const summarised = e.summarised ?? 0;
  if (cleared)
    done.push(`cleared ${cleared} old tool result${cleared !== 1 ? 's' : ''}`);
  if (summarised)
    done.push(
      `summarised ${summarised} earlier message${summarised !== 1 ? 's' : ''}`
    );
  return (
    `Compacted the conversation (${WHY[e.reason] ?? e.reason}): ${done.join(' and ')}; ` +
    `about ${count(e.tokens_before ?? 0)} → ${count(e.tokens_after ?? 0)} tokens.`
  );
}

/** The transcript's marker: a divider with the line, and the summary folded. */
export function compactionMarker(e: EntryOf<'compaction'>): HTMLElement {
  const marker = h(
    'div',
    { class: 'ja-compaction' },
    h('div', {
      class: 'ja-compaction-line',
      text: `⇣ ${describeCompaction(e)}`
    })
  );
  if (e.summary)
    marker.append(
      h(
        'details',
        { class: 'ja-compaction-summary' },
        h('summary', { text: 'Summary' }),
        h('div', { class: 'ja-compaction-text', text: e.summary })
      )
    );
  return marker;
}

/** The gauge and its button, in the panel's usage area. */
export class ContextGauge {
  readonly el: HTMLElement;
  readonly meter: HTMLElement;
  readonly button: HTMLButtonElement;
  private readonly gauge: HTMLElement;
  private readonly fill: HTMLElement;
  private readonly label: HTMLElement;

  /** `compact`: what Compact now does (the view sends the command). */
  constructor(compact: () => void) {
    this.fill = h('span', { class: 'ja-context-fill' });
    this.meter = h(
      'div',
      {
        class: 'ja-context-bar',
        role: 'meter',
        'aria-label': 'Context window used',
        'aria-valuemin': 0,
        'aria-valuemax': 100,
        'aria-valuenow': 0
      },
      this.fill
    );
    this.label = h('span', { class: 'ja-context-text' });
    this.button = h('button', {
      type: 'button',
      class: 'ja-compact',
      text: 'Compact now',
      title:
        'Clear old tool results and summarise earlier turns, so the conversation ' +
        'takes less of the context window (the saved history stays whole)'
    });
    this.button.addEventListener('click', () => {
      this.button.disabled = true;
      compact();
    });
    this.gauge = h(
      'span',
      { class: 'ja-context-gauge' },
      this.meter,
      this.label
    );
    this.el = h('div', { class: 'ja-context' }, this.gauge, this.button);
  }

  /** Show `context`; the button works when a run could start and there is a conversation. */
  update(context: PanelContext | null | undefined, busy: boolean): void {
    const text = contextText(context);
    this.gauge.hidden = !text;
    this.label.textContent = text;
    this.button.disabled = busy || !text;
    if (!text || !context?.window) return;
    const used = context.used_tokens ?? 0;
    const share = Math.min(1, used / context.window);
    const percent = Math.round(100 * share);
    this.meter.setAttribute('aria-valuenow', String(percent));
    this.meter.setAttribute(
      'aria-valuetext',
      `${percent}%: ${count(used)} of ${count(context.window)} tokens` +
        (context.estimated ? ' (estimated)' : '')
    );
    this.meter.dataset.level =
      share >= CONTEXT_FULL ? 'full' : share >= CONTEXT_HIGH ? 'high' : 'ok';
    this.fill.setAttribute('style', `width: ${percent}%`);
    this.meter.title = `${count(used)} of ${count(context.window)} tokens`;
  }
}
