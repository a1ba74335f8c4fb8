/**
 * What the header's status line and the usage line say, from the panel's state: pure
 * functions of the traits, so a new state or usage field is one place to change.
 */
import type { PanelState, PanelUsage } from './types';

/** The part of the model's traits the status line reads. */
export interface IStateReader {
  get<K extends keyof PanelState>(name: K): PanelState[K];
}

export function statusText(model: IStateReader): string {
  const text = stateText(model);
  // Paused by the user, the run goes on to its next step or tool call, then waits.
  const going = model.get('busy') && model.get('status') !== 'paused';
  return going && model.get('pausing')
    ? `${text} · pausing at the next step`
    : text;
}

function stateText(model: IStateReader): string {
  const status = model.get('status');
  const detail = model.get('detail');
  switch (status) {
    case 'idle':
      return 'ready';
    case 'running':
      return 'working…';
    case 'thinking':
      return 'thinking…';
    case 'tool_executing':
      return `running tool ${detail || '…'}`;
    case 'waiting_user':
      return `waiting for you${detail ? ` (${detail.replace(/^waiting for /, '')})` : ''}`;
    case 'paused':
      return `paused${detail ? ` ${detail}` : ''}`;
    case 'completed':
      // A planning run ends with its plan: nothing is done yet, the plan awaits the user.
      return model.get('plan_ready') ? 'plan ready for review' : 'completed';
    case 'cancelled': {
      // The user's Stop is "stopped" (the transcript's last line has its sentence); a limit
      // or a timeout says which, in the kernel's words. (The state comes a moment before
      // the reason: until then, "stopped".)
      const reason = model.get('stop_reason') || '';
      if (!reason || reason === 'manual_stop') return 'stopped';
      return `stopped: ${detail || reason.replace(/_/g, ' ')}`;
    }
    case 'error':
      return `error: ${detail}`;
    default: {
      // Every state is named above (the compiler checks); a newer kernel's shows as is.
      const unknown: never = status;
      return String(unknown);
    }
  }
}

function number(n: number | undefined): string {
  return Number(n || 0).toLocaleString('en-US');
}

export function usageText(usage: PanelUsage | null | undefined): string {
  if (!usage || usage.run_input_tokens === undefined) return '';
  const cached = (input?: number, read?: number) =>
    input ? ` (${Math.round((100 * (read as number)) / input)}% cached)` : '';
  // No cost for a scripted replay: the kernel leaves it out. A model no price table
  // knows (a local one) is "cost unknown", never $0.
  const cost = (usd?: number, unpriced?: number) => {
    if (usd === undefined) return '';
    const dollars = `$${Number(usd).toFixed(4)}`;
    if (!unpriced) return ` · ${dollars}`;
    if (!usd) return ' · cost unknown';
    return ` · ${dollars} + unknown (${unpriced} ${unpriced === 1 ? 'call' : 'calls'} unpriced)`;
  };
  return (
    `Run: ${number(usage.run_input_tokens)} in${cached(usage.run_input_tokens, usage.run_cache_read_input_tokens)}, ` +
    `${number(usage.run_output_tokens)} out${cost(usage.run_cost_usd, usage.run_unpriced_calls)}` +
    ` — Session: ${number(usage.session_input_tokens)} in${cached(usage.session_input_tokens, usage.session_cache_read_input_tokens)}, ` +
    `${number(usage.session_output_tokens)} out${cost(usage.session_cost_usd, usage.session_unpriced_calls)}`
  );
}
