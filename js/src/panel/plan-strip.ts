/**
 * The plan strip: pinned above the transcript (outside its scroll) while there is a plan,
 * it says what the plan is for, which step is in hand and how far the plan is, and holds
 * the plan's button (Execute plan, Continue plan after a Stop, none while it runs). It
 * renders what the transcript's PlanTracker (plan.ts) reports and nothing else.
 */
import { STEP_LABELS } from './cards';
import { h } from './dom';
import type { IPlanProgress } from './plan';

/** Characters of the goal the strip shows (all of it in the tooltip). */
const GOAL_CHARS = 90;

export class PlanStrip {
  readonly el: HTMLElement;
  private readonly goal: HTMLElement;
  private readonly step: HTMLElement;
  private readonly count: HTMLElement;
  private readonly button: HTMLButtonElement;
  private readonly ended: HTMLElement;

  /** `execute`: what the strip's button does (the same as the plan card's). */
  constructor(execute: () => void) {
    this.goal = h('div', { class: 'ja-strip-goal' });
    this.step = h('div', { class: 'ja-strip-step' });
    this.count = h('span', { class: 'ja-strip-count' });
    this.button = h('button', {
      type: 'button',
      class: 'ja-primary ja-strip-execute'
    });
    this.button.addEventListener('click', () => {
      this.button.disabled = true;
      execute();
    });
    this.ended = h('span', { class: 'ja-strip-done', text: '✔ Plan done' });
    this.el = h(
      'section',
      {
        class: 'ja-plan-strip',
        // A group, not a region: the plan card is the region named Plan.
        role: 'group',
        'aria-label': 'Plan progress',
        hidden: true
      },
      this.goal,
      h(
        'div',
        { class: 'ja-strip-row' },
        this.step,
        this.count,
        this.button,
        this.ended
      )
    );
  }

  update(progress: IPlanProgress | null): void {
    this.el.hidden = progress === null;
    if (progress === null) return;
    const { goal, steps, current } = progress;
    this.goal.title = goal;
    this.goal.textContent = `Plan: ${
      goal.length > GOAL_CHARS ? `${goal.slice(0, GOAL_CHARS - 1)}…` : goal
    }`;
    this.step.replaceChildren();
    if (current) {
      const status = h('span', {
        class: 'ja-step-status',
        'data-status': current.status,
        text:
          current.status === 'stopped'
            ? 'stopped'
            : (STEP_LABELS[current.status] ?? current.status)
      });
      this.step.append(
        h('span', {
          class: 'ja-strip-title',
          text: `Step ${current.number} of ${steps.length}: ${current.action}`,
          title: current.action
        }),
        ' ',
        status
      );
    }
    this.step.hidden = current === null;
    this.count.textContent = `${progress.done} of ${steps.length} done`;
    this.button.hidden = progress.action === null;
    this.button.textContent = progress.action ?? '';
    this.button.disabled = progress.disabled;
    this.ended.hidden = !progress.finished;
    this.el.dataset.state = progress.finished
      ? 'done'
      : progress.running
        ? 'running'
        : progress.action === 'Continue plan'
          ? 'stopped'
          : 'review';
  }
}
