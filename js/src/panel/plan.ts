/**
 * The plan: one source of truth for the plan card in the transcript and the strip pinned
 * above it (plan-strip.ts). The transcript feeds it the plan's entries and the ends of
 * runs; the card is updated in place and every change is reported as an IPlanProgress.
 *
 * A plan is executed once: while its execution runs (or after it completed) the button is
 * disabled; a Stop or an error of that run offers to carry on, as execute_plan() does, and
 * once it carries on the step it was cut short in is in progress again. A finished plan
 * stays pinned until another run starts: that run is about something else.
 */
import { planCard, STEP_LABELS } from './cards';
import type { IPlanCard } from './cards';
import { h } from './dom';
import { renderMarkdown } from './markdown';
import type { EntryOf, ITranscriptActions, Plan } from './types';

/** A step's status as shown: the kernel's, or `stopped` (its run was cut short). */
export type StepShown = EntryOf<'plan_step'>['status'] | 'stopped';

export interface IStepProgress {
  number: number;
  action: string;
  status: StepShown;
}

/** What the strip shows of the newest plan. */
export interface IPlanProgress {
  goal: string;
  steps: IStepProgress[];
  /** Steps done. */
  done: number;
  /** The step in progress, else the one cut short, else the next pending (null at the end). */
  current: IStepProgress | null;
  /** Every step is done or skipped. */
  finished: boolean;
  /** The plan's execution is running (or was asked for and is starting). */
  running: boolean;
  /** The button the plan offers now (none while it runs or once it is executed). */
  action: 'Execute plan' | 'Continue plan' | null;
  /** The button is there but cannot be used now (the agent is busy). */
  disabled: boolean;
}

interface IPlanState extends IPlanCard {
  plan: Plan;
  status: Map<number, StepShown>;
  /** The plan's execution is running or done. */
  executed: boolean;
  /** That run, once known (from the run the button started, or the first step marked). */
  runId: string | null;
  /** The button was clicked and its run has not started yet. */
  starting: boolean;
  /** Its execution was cut short: the button carries on. */
  cutShort: boolean;
  /** Finished, and a run about something else started since: no longer pinned. */
  unpinned: boolean;
}

/** The line a run started with a button shows instead of a user's message. */
const ACTIONS: Record<NonNullable<EntryOf<'user'>['action']>, string> = {
  execute_plan: '▶ Executing the plan',
  compact: '⇣ Compacting the conversation'
};

/** A run the user started with a button: the action, and the prompt it became folded. */
export function actionLine(
  action: NonNullable<EntryOf<'user'>['action']>,
  prompt: string
): HTMLElement {
  return h(
    'div',
    { class: 'ja-line ja-action', 'data-action': action },
    h('div', { class: 'ja-action-label', text: ACTIONS[action] }),
    h(
      'details',
      { class: 'ja-told' },
      h('summary', { text: 'What the agent was told' }),
      renderMarkdown(prompt)
    )
  );
}

export class PlanTracker {
  /** Called after every change of the newest plan (null: there is none). */
  onChange: ((progress: IPlanProgress | null) => void) | null = null;
  private state: IPlanState | null = null;

  constructor(private readonly actions: ITranscriptActions) {}

  reset(): void {
    this.state = null;
    this.notify();
  }

  /** A new plan: its card (the older plan's button is disabled for good). */
  show(plan: Plan): HTMLElement {
    if (this.state) this.state.button.disabled = true;
    const state: IPlanState = {
      ...planCard(plan),
      plan,
      status: new Map(plan.steps.map(s => [s.step_number, 'pending'])),
      executed: false,
      runId: null,
      starting: false,
      cutShort: false,
      unpinned: false
    };
    state.button.addEventListener('click', () => this.execute());
    this.state = state;
    this.refresh();
    return state.card;
  }

  /** Execute (or carry on with) the newest plan: the card's button and the strip's. */
  execute(): void {
    const state = this.state;
    if (!state || state.executed) return;
    state.executed = true;
    state.starting = true;
    const resumed = this.carryOn(state);
    this.refresh();
    // The button just clicked is disabled now: focus goes on to the message input.
    this.actions.focusInput?.();
    this.actions.command('execute_plan').catch((error: Error) => {
      state.executed = false;
      state.starting = false;
      for (const n of resumed) this.mark(state, n, 'stopped');
      this.refresh();
      this.actions.error(error.message);
    });
  }

  /** Carrying on with a plan cut short: the steps it stopped in are in progress again (as
   * the kernel has them: only this view called them stopped). Returns their numbers. */
  private carryOn(state: IPlanState): number[] {
    const resumed = [...state.status]
      .filter(([, status]) => status === 'stopped')
      .map(([n]) => n);
    for (const n of resumed) this.mark(state, n, 'in_progress');
    return resumed;
  }

  step(e: EntryOf<'plan_step'>): void {
    const state = this.state;
    const step = state?.steps.get(e.step_number);
    if (!state || !step) return;
    this.mark(state, e.step_number, e.status);
    step.status.title = e.note || '';
    // Steps being marked: the plan is being executed, from this button or from code.
    state.executed = true;
    if (e.run_id) state.runId = e.run_id;
    this.refresh();
  }

  /** A run started: the one the button asked for, if it was waiting for it; an execution
   * of the plan started from code carries on as the button's does; any other run after
   * the plan finished unpins it. */
  runStarted(
    runId: string | undefined,
    action?: EntryOf<'agent_start'>['action']
  ): void {
    const state = this.state;
    if (!state) return;
    if (state.starting) {
      state.starting = false;
      state.runId = runId ?? null;
    } else if (action === 'execute_plan' && !this.finished(state)) {
      state.executed = true;
      state.runId = runId ?? null;
      this.carryOn(state);
    } else if (this.finished(state)) {
      state.unpinned = true;
    }
    this.refresh();
  }

  private finished(state: IPlanState): boolean {
    return [...state.status.values()].every(
      s => s === 'done' || s === 'skipped'
    );
  }

  /** A run ended; `cutShort`: stopped or failed. */
  runEnded(e: { run_id?: string }, cutShort: boolean): void {
    const state = this.state;
    if (!state) return;
    state.starting = false; // a click that joined a running execution started no run
    if (cutShort && state.executed && e.run_id && state.runId === e.run_id)
      this.stopped();
    else this.refresh();
  }

  /** The plan's execution was stopped or failed (live, or in a resumed session). */
  stopped(): void {
    const state = this.state;
    if (!state) return;
    state.executed = false;
    state.runId = null;
    state.cutShort = true;
    for (const [n, status] of state.status)
      if (status === 'in_progress') this.mark(state, n, 'stopped');
    this.refresh();
  }

  /** The buttons: enabled while the plan is not running and the agent idle. */
  refresh(): void {
    const state = this.state;
    if (state) {
      state.button.textContent = state.cutShort
        ? 'Continue plan'
        : 'Execute plan';
      state.button.disabled = state.executed || this.actions.busy();
    }
    this.notify();
  }

  progress(): IPlanProgress | null {
    const state = this.state;
    if (!state) return null;
    const steps = state.plan.steps.map(s => ({
      number: s.step_number,
      action: s.action,
      status: state.status.get(s.step_number) ?? 'pending'
    }));
    const finished = steps.every(
      s => s.status === 'done' || s.status === 'skipped'
    );
    const find = (status: StepShown) => steps.find(s => s.status === status);
    const busy = this.actions.busy();
    return {
      goal: state.plan.goal,
      steps,
      done: steps.filter(s => s.status === 'done').length,
      current:
        find('in_progress') ?? find('stopped') ?? find('pending') ?? null,
      finished,
      running: state.executed && !finished && (state.starting || busy),
      action: state.executed
        ? null
        : state.cutShort
          ? 'Continue plan'
          : 'Execute plan',
      disabled: busy
    };
  }

  private mark(state: IPlanState, n: number, status: StepShown): void {
    const step = state.steps.get(n);
    if (!step) return;
    state.status.set(n, status);
    step.status.dataset.status = step.row.dataset.status = status;
    step.status.textContent =
      status === 'stopped' ? 'stopped' : (STEP_LABELS[status] ?? status);
  }

  /** The strip's news: the plan's progress, or null when no plan is pinned. */
  private notify(): void {
    this.onChange?.(this.state?.unpinned ? null : this.progress());
  }
}
