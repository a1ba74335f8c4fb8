/**
 * The plan's state (src/panel/plan.ts) and the strip pinned above the transcript
 * (src/panel/plan-strip.ts), driven by transcript entries on a fake DOM: the strip shows
 * the newest plan's goal, step in hand and count, follows every step mark, offers the same
 * button as the plan card (Execute plan, Continue plan after its run stopped, none while
 * it runs), and a run started with Execute plan shows as that action, its prompt folded.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { PlanStrip } from '../src/panel/plan-strip';
import { Transcript } from '../src/panel/transcript';
import type { TranscriptEntry } from '../src/panel/types';
import { FakeElement, install } from './fakedom';

install();

const PLAN: TranscriptEntry = {
  kind: 'plan',
  plan: {
    goal: 'Clean the sales data',
    steps: [
      { step_number: 1, action: 'Load sales.csv' },
      { step_number: 2, action: 'Drop duplicate rows' },
      { step_number: 3, action: 'Save clean.csv' }
    ]
  }
};

const START = (run_id: string, action?: 'execute_plan'): TranscriptEntry => ({
  kind: 'agent_start',
  run_id,
  task: 'Execute the approved plan. Work through its steps with update_plan_step.',
  role: 'actor',
  model: 'm',
  loop: 'react',
  max_steps: 30,
  action
});

function setup() {
  const root = new FakeElement('div');
  const commands: string[] = [];
  const state = { busy: false };
  const transcript = new Transcript(
    root as unknown as HTMLElement,
    {
      command: name => {
        commands.push(name);
        return Promise.resolve({ ok: true });
      },
      busy: () => state.busy,
      error: () => undefined
    },
    true
  );
  const strip = new PlanStrip(() => transcript.plan.execute());
  transcript.plan.onChange = progress => strip.update(progress);
  const el = strip.el as unknown as FakeElement;
  const part = (cls: string) => el.querySelector(`.${cls}`) as FakeElement;
  return {
    root,
    transcript,
    commands,
    state,
    el,
    apply: (...entries: TranscriptEntry[]) =>
      entries.forEach(e => transcript.apply(e)),
    goal: () => part('ja-strip-goal').textContent,
    step: () => part('ja-strip-step').textContent,
    count: () => part('ja-strip-count').textContent,
    button: () => part('ja-strip-execute'),
    cardButton: () => root.querySelector('button.ja-execute') as FakeElement
  };
}

describe('the plan strip', () => {
  it('is hidden without a plan and shows a new plan with its button', () => {
    const t = setup();
    assert.equal(t.el.hasAttribute('hidden'), true);
    t.apply(PLAN);
    assert.equal(t.el.hasAttribute('hidden'), false);
    assert.equal(t.goal(), 'Plan: Clean the sales data');
    assert.equal(t.step(), 'Step 1 of 3: Load sales.csv pending');
    assert.equal(t.count(), '0 of 3 done');
    assert.equal(t.button().textContent, 'Execute plan');
    assert.equal(t.button().hasAttribute('hidden'), false);
    assert.equal(t.el.dataset.state, 'review');
  });

  it("executes the plan like the card's button, then shows none while it runs", () => {
    const t = setup();
    t.apply(PLAN);
    t.button().click();
    assert.deepEqual(t.commands, ['execute_plan']);
    assert.equal(t.button().hasAttribute('hidden'), true);
    assert.equal(t.cardButton().hasAttribute('disabled'), true);
    t.cardButton().click(); // disabled: no second command
    assert.deepEqual(t.commands, ['execute_plan']);
    t.state.busy = true;
    t.apply(START('r1', 'execute_plan'));
    assert.equal(t.el.dataset.state, 'running');
  });

  it('follows the steps as the Actor marks them', () => {
    const t = setup();
    t.apply(PLAN);
    t.state.busy = true;
    t.apply(
      START('r1', 'execute_plan'),
      { kind: 'plan_step', step_number: 1, status: 'done', run_id: 'r1' },
      { kind: 'plan_step', step_number: 2, status: 'in_progress', run_id: 'r1' }
    );
    assert.equal(t.step(), 'Step 2 of 3: Drop duplicate rows in progress');
    assert.equal(t.count(), '1 of 3 done');
    assert.equal(t.button().hasAttribute('hidden'), true);
    assert.equal(t.el.dataset.state, 'running');
    // The card in the transcript says the same.
    assert.deepEqual(
      t.root.querySelectorAll('td.ja-step-status').map(s => s.textContent),
      ['done', 'in progress', 'pending']
    );
  });

  it("offers Continue plan after a stop of the plan's run, not of another run", () => {
    const t = setup();
    t.apply(PLAN);
    t.button().click();
    t.state.busy = true;
    t.apply(START('r1', 'execute_plan'), {
      kind: 'plan_step',
      step_number: 1,
      status: 'in_progress',
      run_id: 'r1'
    });
    t.state.busy = false;
    t.apply({ kind: 'stopped', reason: 'manual_stop', run_id: 'other' });
    assert.equal(t.button().hasAttribute('hidden'), true);
    t.apply({ kind: 'stopped', reason: 'manual_stop', run_id: 'r1' });
    assert.equal(t.button().hasAttribute('hidden'), false);
    assert.equal(t.button().textContent, 'Continue plan');
    assert.equal(t.cardButton().textContent, 'Continue plan');
    assert.equal(t.step(), 'Step 1 of 3: Load sales.csv stopped');
    assert.equal(t.el.dataset.state, 'stopped');
    t.button().click();
    assert.deepEqual(t.commands, ['execute_plan', 'execute_plan']);
  });

  it('after Continue plan, says the step in hand is in progress, not stopped', () => {
    const t = setup();
    t.apply(PLAN);
    t.button().click();
    t.state.busy = true;
    t.apply(
      START('r1', 'execute_plan'),
      { kind: 'plan_step', step_number: 1, status: 'done', run_id: 'r1' },
      { kind: 'plan_step', step_number: 2, status: 'in_progress', run_id: 'r1' }
    );
    t.state.busy = false;
    t.apply({ kind: 'stopped', reason: 'manual_stop', run_id: 'r1' });
    assert.equal(t.step(), 'Step 2 of 3: Drop duplicate rows stopped');
    t.button().click();
    // At once, before the run even starts: the agent carries on with step 2.
    assert.equal(t.step(), 'Step 2 of 3: Drop duplicate rows in progress');
    assert.equal(t.el.dataset.state, 'running');
    t.state.busy = true;
    t.apply(START('r2', 'execute_plan'));
    assert.equal(t.step(), 'Step 2 of 3: Drop duplicate rows in progress');
    assert.deepEqual(
      t.root.querySelectorAll('td.ja-step-status').map(s => s.textContent),
      ['done', 'in progress', 'pending']
    );
    assert.equal(t.button().hasAttribute('hidden'), true);
  });

  it('carries on the same way when the execution is started from code', () => {
    const t = setup();
    t.apply(
      PLAN,
      { kind: 'plan_step', step_number: 1, status: 'in_progress' },
      { kind: 'plan_stopped' } // a resumed session whose execution was cut short
    );
    assert.equal(t.step(), 'Step 1 of 3: Load sales.csv stopped');
    t.state.busy = true;
    t.apply(START('r3', 'execute_plan')); // agent.execute_plan() in a cell
    assert.equal(t.step(), 'Step 1 of 3: Load sales.csv in progress');
    assert.equal(t.button().hasAttribute('hidden'), true);
  });

  it('puts the Continue plan back when the kernel refuses to carry on', async () => {
    const t = setup();
    t.apply(
      PLAN,
      { kind: 'plan_step', step_number: 1, status: 'in_progress' },
      { kind: 'plan_stopped' }
    );
    t.transcript.actions.command = () => Promise.reject(new Error('busy'));
    t.button().click();
    assert.equal(t.step(), 'Step 1 of 3: Load sales.csv in progress');
    await new Promise(resolve => setImmediate(resolve));
    assert.equal(t.step(), 'Step 1 of 3: Load sales.csv stopped');
    assert.equal(t.button().textContent, 'Continue plan');
  });

  it('unpins a finished plan once a run about something else starts', () => {
    const t = setup();
    t.apply(PLAN, START('r1', 'execute_plan'));
    for (const n of [1, 2, 3])
      t.apply({ kind: 'plan_step', step_number: n, status: 'done' });
    t.apply({ kind: 'completed', summary: 'All done.', run_id: 'r1' });
    assert.equal(t.el.hasAttribute('hidden'), false); // "✔ Plan done", for now
    t.apply(START('r2'));
    assert.equal(t.el.hasAttribute('hidden'), true);
    // The plan card stays where it was in the transcript; a new plan is pinned again.
    assert.equal(t.root.querySelectorAll('section.ja-plan').length, 1);
    t.apply(PLAN);
    assert.equal(t.el.hasAttribute('hidden'), false);
  });

  it('keeps an unfinished plan pinned during other runs', () => {
    const t = setup();
    t.apply(PLAN, START('r1'), { kind: 'completed', summary: 'Answered.' });
    assert.equal(t.el.hasAttribute('hidden'), false);
    assert.equal(t.button().textContent, 'Execute plan');
  });

  it('disables its button while the agent is busy with something else', () => {
    const t = setup();
    t.apply(PLAN);
    t.state.busy = true;
    t.transcript.refreshControls();
    assert.equal(t.button().hasAttribute('disabled'), true);
    t.state.busy = false;
    t.transcript.refreshControls();
    assert.equal(t.button().hasAttribute('disabled'), false);
  });

  it('says the plan is done when every step is', () => {
    const t = setup();
    t.apply(PLAN);
    for (const n of [1, 2, 3])
      t.apply({ kind: 'plan_step', step_number: n, status: 'done' });
    t.apply({ kind: 'completed', summary: 'All done.' });
    assert.equal(t.count(), '3 of 3 done');
    assert.equal(t.step(), '');
    assert.equal(t.button().hasAttribute('hidden'), true);
    assert.equal(
      (t.el.querySelector('.ja-strip-done') as FakeElement).hasAttribute(
        'hidden'
      ),
      false
    );
    assert.equal(t.el.dataset.state, 'done');
  });

  it('shows the newest plan, and goes when the transcript is reset', () => {
    const t = setup();
    t.apply(PLAN, {
      kind: 'plan_step',
      step_number: 1,
      status: 'in_progress'
    });
    t.state.busy = false;
    t.apply({
      kind: 'plan',
      plan: {
        goal: 'A second plan',
        steps: [{ step_number: 1, action: 'Only step' }]
      }
    });
    assert.equal(t.goal(), 'Plan: A second plan');
    assert.equal(t.step(), 'Step 1 of 1: Only step pending');
    assert.equal(t.count(), '0 of 1 done');
    assert.equal(t.button().textContent, 'Execute plan');
    assert.equal(t.button().hasAttribute('hidden'), false);
    t.transcript.reset();
    assert.equal(t.el.hasAttribute('hidden'), true);
  });

  it('shortens a long goal, keeping all of it in the tooltip', () => {
    const t = setup();
    const goal = 'word '.repeat(40).trim();
    t.apply({
      kind: 'plan',
      plan: { goal, steps: [{ step_number: 1, action: 'a' }] }
    });
    assert.ok(t.goal().length <= 'Plan: '.length + 90);
    assert.ok(t.goal().endsWith('…'));
    assert.equal(
      (t.el.querySelector('.ja-strip-goal') as FakeElement).title,
      goal
    );
  });
});

describe('a run started with Execute plan', () => {
  it('shows as the action, with what the agent was told folded', () => {
    const t = setup();
    t.apply(PLAN, START('r1', 'execute_plan'));
    assert.equal(t.root.querySelectorAll('div.ja-user').length, 0);
    const action = t.root.querySelector('div.ja-action') as FakeElement;
    assert.equal(
      action.querySelector('.ja-action-label')?.textContent,
      '▶ Executing the plan'
    );
    const told = action.querySelector('details.ja-told') as FakeElement;
    assert.equal(told.hasAttribute('open'), false);
    assert.equal(
      told.querySelector('summary')?.textContent,
      'What the agent was told'
    );
    assert.match(told.textContent, /update_plan_step/);
  });

  it('shows the same in a resumed session (a user entry with the action)', () => {
    const t = setup();
    t.apply({
      kind: 'user',
      text: 'Execute the approved plan.\n\n## Plan',
      action: 'execute_plan'
    });
    assert.equal(t.root.querySelectorAll('div.ja-user').length, 0);
    assert.equal(
      t.root.querySelector('.ja-action-label')?.textContent,
      '▶ Executing the plan'
    );
  });

  it('a typed task is still the user’s bubble', () => {
    const t = setup();
    t.apply(START('r1'));
    assert.equal(t.root.querySelectorAll('div.ja-action').length, 0);
    assert.equal(t.root.querySelectorAll('div.ja-user').length, 1);
  });
});

describe('the end of a planning run', () => {
  it('says the plan is ready for review, not that anything was completed', () => {
    const t = setup();
    t.apply(PLAN, {
      kind: 'completed',
      summary: 'Plan: Clean the sales data',
      plan_ready: true
    });
    const line = t.root.querySelector('div.ja-completed') as FakeElement;
    assert.equal(
      line.textContent,
      '✔ Plan ready for review: Clean the sales data'
    );
    assert.equal(t.button().textContent, 'Execute plan');
    assert.equal(t.button().hasAttribute('disabled'), false);
  });

  it('a run that completed its work still says so', () => {
    const t = setup();
    t.apply({ kind: 'completed', summary: 'Removed them.' });
    assert.equal(
      t.root.querySelector('div.ja-completed')?.textContent,
      '✔ Completed: Removed them.'
    );
  });
});
