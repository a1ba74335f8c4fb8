/**
 * The panel's transcript (src/panel/transcript.ts) on a fake DOM: streamed deltas merge
 * into one block, a tool card and a plan are updated in place, a stop closes what was
 * open, questions and approvals send their commands, every entry is applied once, and an
 * unknown entry kind is never dropped silently. For screen readers:
 * panel-transcript-screen-reader.test.ts; links to cells: panel-cell-references.test.ts.
 */
import { strict as assert } from 'node:assert';
import { afterEach, describe, it, mock } from 'node:test';

import { Transcript, UnknownEntryError } from '../src/panel/transcript';
import type { TranscriptEntry } from '../src/panel/types';
import { FakeElement, html, install } from './fakedom';
import { setup } from './transcript-setup';

install();

/** Lets rejected commands' handlers run. */
const settle = () => new Promise(resolve => setImmediate(resolve));

afterEach(() => {
  mock.restoreAll();
  mock.timers.reset();
});

describe('the transcript', () => {
  it('merges streamed deltas into one text block, rendered as markdown', () => {
    const t = setup();
    t.apply(
      { kind: 'text_delta', n: 1, text: '# Res' },
      { kind: 'text_delta', n: 2, text: 'ult\n\nsome ' },
      { kind: 'text_delta', n: 3, text: '**bold**' }
    );
    t.transcript.renderDirty();
    assert.equal(t.find('div.ja-text').length, 1);
    // Hidden from screen readers while it streams (the log announces it when it ends).
    assert.equal(
      html(t.find('div.ja-text')[0]),
      '<div class="ja-text" aria-hidden="true"><div><h3 class="ja-md-heading">Result</h3></div>' +
        '<div><p>some <strong>bold</strong></p></div></div>'
    );
    // The end of a streamed block carries no text: the view keeps what it has.
    t.apply({ kind: 'text_end', n: 4, phase: null, interrupted: false });
    assert.equal(t.find('div.ja-text').length, 1);
    assert.equal(
      html(t.find('div.ja-text')[0]),
      '<div class="ja-text"><div><h3 class="ja-md-heading">Result</h3>' +
        '<p>some <strong>bold</strong></p></div><div></div></div>'
    );
  });

  it('starts a new block for a new phase or after a tool', () => {
    const t = setup();
    t.apply(
      { kind: 'text_delta', text: 'a', phase: 'reason' },
      { kind: 'text_delta', text: 'b' },
      {
        kind: 'tool_start',
        tool_use_id: 't',
        name: 'bash',
        input: {},
        summary: 'bash'
      },
      { kind: 'text_delta', text: 'c' }
    );
    t.transcript.renderDirty();
    const blocks = t.find('div.ja-text');
    assert.deepEqual(
      blocks.map(b => b.textContent),
      ['reasona', 'b', 'c']
    );
    assert.equal(
      blocks[0].querySelector('div.ja-phase')?.textContent,
      'reason'
    );
  });

  it('keeps a code fence open while it streams', () => {
    const t = setup();
    t.apply({ kind: 'text_delta', text: '```\nx = 1\n\ny = 2\n' });
    t.transcript.renderDirty();
    assert.equal(t.find('pre').length, 1);
    assert.equal(t.find('code')[0].textContent, 'x = 1\n\ny = 2\n');
  });

  it('applies each entry once: an n not above the last is dropped', () => {
    const t = setup();
    t.apply(
      { kind: 'note', n: 1, text: 'one' },
      { kind: 'note', n: 1, text: 'again' },
      { kind: 'note', n: 2, text: 'two' }
    );
    assert.deepEqual(
      t.find('div.ja-note').map(n => n.textContent),
      ['one', 'two']
    );
  });

  it('replaces a reply that broke off when the model retries', () => {
    const t = setup();
    t.apply(
      { kind: 'text_delta', text: 'half a rep' },
      { kind: 'retry', attempt: 1, reason: 'overloaded', delay: 0.5 },
      { kind: 'text', text: 'whole reply' }
    );
    assert.deepEqual(
      t.find('div.ja-text').map(b => b.textContent),
      ['whole reply']
    );
    assert.match(t.find('div.ja-warning')[0].textContent, /overloaded/);
  });

  it("ticks a running cell's elapsed time and shows its last output line", () => {
    mock.timers.enable({ apis: ['setInterval', 'Date'] });
    const t = setup();
    t.apply({
      kind: 'tool_start',
      tool_use_id: 'tu1',
      name: 'run_cell',
      input: { cell_id: 'train' },
      summary: 'Run cell train'
    });
    const [card] = t.find('details.ja-tool');
    const status = card.querySelector('span.ja-tool-status')!;
    const line = card.querySelector('span.ja-tool-last-line')!;
    assert.equal(status.textContent, 'running…');
    assert.equal((line as unknown as HTMLElement).hidden, true);
    // No event comes while the kernel is busy: the time goes on from the tool's start.
    mock.timers.tick(3000);
    assert.equal(status.textContent, 'running… 3 s');
    mock.timers.tick(72_000);
    assert.equal(status.textContent, 'running… 1 min 15 s');
    t.apply({ kind: 'tool_progress', tool_use_id: 'tu1', output: 'epoch 1' });
    t.apply({ kind: 'tool_progress', tool_use_id: 'tu1', output: 'epoch 2' });
    assert.equal(line.textContent, 'epoch 2', 'the last line, not all of them');
    assert.equal((line as unknown as HTMLElement).hidden, false);
    assert.equal(card.querySelector('pre.ja-tool-output')!.textContent, '');
    t.apply({
      kind: 'tool_end',
      tool_use_id: 'tu1',
      name: 'run_cell',
      result: 'Cell train is still running (1 min 15 s so far)',
      duration: 75
    });
    mock.timers.tick(5000);
    assert.equal(status.textContent, 'done · 1 min 15 s', 'the ticker stopped');
    assert.equal((line as unknown as HTMLElement).hidden, true);
  });

  it('updates a tool card in place: running, output, then its result and diff', () => {
    const t = setup();
    t.apply({
      kind: 'tool_start',
      tool_use_id: 'tu1',
      name: 'edit_file',
      input: { path: 'a.py' },
      summary: 'edit a.py'
    });
    const [card] = t.find('details.ja-tool');
    assert.equal(card.dataset.state, 'running');
    assert.equal(
      card.querySelector('span.ja-tool-summary')?.textContent,
      'edit a.py'
    );
    assert.equal(
      card.querySelector('span.ja-tool-status')?.textContent,
      'running…'
    );

    t.apply({ kind: 'tool_progress', tool_use_id: 'tu1', output: 'step 1\n' });
    const output = card.querySelector('pre.ja-tool-output')!;
    assert.equal((output as unknown as HTMLElement).hidden, false);
    assert.equal(output.textContent, 'step 1\n');

    const diff = '--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2';
    t.apply({
      kind: 'tool_end',
      tool_use_id: 'tu1',
      name: 'edit_file',
      result: `Edited a.py.\n${diff}`,
      duration: 0.25,
      diff
    });
    assert.equal(t.find('details.ja-tool').length, 1, 'the same card');
    assert.equal(card.dataset.state, 'done');
    assert.equal(
      card.querySelector('span.ja-tool-status')?.textContent,
      'done · 250 ms'
    );
    assert.equal(
      card.querySelector('div.ja-tool-result pre.ja-pre')?.textContent,
      'Edited a.py.'
    );
    assert.deepEqual(
      card.querySelectorAll('pre.ja-diff span').map(s => s.className),
      [
        'ja-diff-file',
        'ja-diff-file',
        'ja-diff-hunk',
        'ja-diff-del',
        'ja-diff-add'
      ]
    );
    // Folded: a row that did what it was asked shows its result on a click.
    assert.equal((card as unknown as HTMLDetailsElement).open, false);
  });

  it('keeps a row folded, its raw input behind a "Details" toggle, unless it fails', () => {
    const t = setup();
    t.apply(
      {
        kind: 'tool_start',
        tool_use_id: 'ok',
        name: 'read_file',
        input: { path: 'a.py' },
        summary: 'Read a.py'
      },
      {
        kind: 'tool_end',
        tool_use_id: 'ok',
        name: 'read_file',
        result: 'x = 1',
        outcome: 'ok'
      },
      {
        kind: 'tool_start',
        tool_use_id: 'bad',
        name: 'read_file',
        input: { path: 'gone.py' },
        summary: 'Read gone.py'
      },
      {
        kind: 'tool_end',
        tool_use_id: 'bad',
        name: 'read_file',
        result: 'No such file: gone.py',
        is_error: true,
        error_line: 'No such file: gone.py',
        outcome: 'error'
      }
    );
    const [ok, bad] = t.find(
      'details.ja-tool'
    ) as unknown as HTMLDetailsElement[];
    assert.equal(ok.open, false);
    assert.equal(bad.open, true); // what went wrong, without a click
    const raw = (ok as unknown as FakeElement).querySelector(
      'details.ja-raw-input'
    )!;
    assert.equal(raw.querySelector('summary')?.textContent, 'Details');
    assert.equal(raw.hasAttribute('open'), false);
    assert.equal(
      raw.querySelector('pre')?.textContent,
      '{\n  "path": "a.py"\n}'
    );
    // The raw input comes after the result, not before it.
    const body = (ok as unknown as FakeElement).querySelector(
      'div.ja-tool-body'
    )!;
    assert.deepEqual(
      body.children.map(c => c.className),
      ['ja-pre ja-tool-output', 'ja-tool-result', 'ja-raw-input']
    );
  });

  it('opens a row while it waits for the user, and folds it again after', () => {
    const t = setup();
    t.apply(
      {
        kind: 'tool_start',
        tool_use_id: 'tu1',
        name: 'execute_command',
        input: { command: 'ls' },
        summary: 'Run: ls'
      },
      {
        kind: 'permission_request',
        request_id: 'r1',
        tool_use_id: 'tu1',
        tool_name: 'execute_command',
        summary: 'Run: ls'
      }
    );
    const [card] = t.find('details.ja-tool');
    assert.equal(card.dataset.state, 'waiting');
    assert.equal(card.hasAttribute('open'), true);
    t.apply({
      kind: 'permission_response',
      request_id: 'r1',
      tool_name: 'execute_command',
      allowed: true
    });
    assert.equal(card.dataset.state, 'running');
    assert.equal(card.hasAttribute('open'), false);
  });

  it('hides the control tools unless they fail', () => {
    const t = setup();
    t.apply(
      {
        kind: 'tool_start',
        tool_use_id: 'a',
        name: 'ask_user',
        input: {},
        summary: 'ask'
      },
      {
        kind: 'tool_end',
        tool_use_id: 'b',
        name: 'submit_plan',
        result: 'bad plan',
        is_error: true
      }
    );
    const [asked, failed] = t.find('details.ja-tool');
    assert.equal((asked as unknown as HTMLElement).hidden, true);
    assert.equal((failed as unknown as HTMLElement).hidden, false);
    assert.equal(failed.dataset.state, 'error');
    // Stopped while it asked: its question's card says so; the row stays hidden.
    t.apply({
      kind: 'tool_end',
      tool_use_id: 'a',
      name: 'ask_user',
      result: 'Interrupted by the user before this tool finished.',
      is_error: true,
      outcome: 'interrupted'
    });
    assert.equal(asked.dataset.state, 'stopped');
    assert.equal((asked as unknown as HTMLElement).hidden, true);
  });

  it('a stop marks running tools stopped (not failed), closes open questions and says why', () => {
    const t = setup();
    t.apply(
      {
        kind: 'tool_start',
        tool_use_id: 'tu',
        name: 'bash',
        input: {},
        summary: 'bash'
      },
      {
        kind: 'question',
        question_id: 'q1',
        question: {
          question: 'Which one?',
          severity: 'minor',
          options: [{ label: 'A', value: 'a' }]
        }
      },
      {
        kind: 'stopped',
        reason: 'manual_stop',
        message: 'Stopped by the user.'
      }
    );
    const [tool] = t.find('details.ja-tool');
    assert.equal(tool.dataset.state, 'stopped');
    assert.equal(
      tool.querySelector('span.ja-tool-status')?.textContent,
      'stopped'
    );
    const [question] = t.find('section.ja-question');
    assert.equal(question.dataset.state, 'closed');
    assert.equal(question.classList.contains('ja-flash'), false);
    assert.equal(
      question.querySelector('p.ja-answered')?.textContent,
      'Not answered: the run stopped.'
    );
    assert.ok(
      question.querySelectorAll('button').every(b => b.hasAttribute('disabled'))
    );
    // The kernel's sentence, not "Stopped (manual stop): Stopped by the user."
    assert.equal(
      t.find('div.ja-stopped')[0].textContent,
      '■ Stopped by the user.'
    );
  });

  it("says a run stopped at a limit in the kernel's words, never the reason's code", () => {
    const t = setup();
    t.apply(
      {
        kind: 'stopped',
        reason: 'iteration_limit',
        message: 'Reached the limit of 30 steps.'
      },
      { kind: 'stopped', reason: 'time_limit', message: '' }
    );
    assert.deepEqual(
      t.find('div.ja-stopped').map(l => l.textContent),
      ['■ Stopped: Reached the limit of 30 steps.', '■ Stopped: time limit']
    );
  });

  it('a command the user stopped says "stopped" with the time it ran, not "failed"', () => {
    mock.timers.enable({ apis: ['setInterval', 'Date'] });
    const t = setup();
    t.apply({
      kind: 'tool_start',
      tool_use_id: 'tu1',
      name: 'execute_command',
      input: { command: 'sleep 30' },
      summary: 'Run: sleep 30'
    });
    const [card] = t.find('details.ja-tool');
    const status = card.querySelector('span.ja-tool-status')!;
    // A shell command ticks as a cell does, while the kernel says nothing.
    mock.timers.tick(12_000);
    assert.equal(status.textContent, 'running… 12 s');
    t.apply(
      {
        kind: 'tool_end',
        tool_use_id: 'tu1',
        name: 'execute_command',
        result: 'Interrupted by the user before this tool finished.',
        is_error: true,
        outcome: 'interrupted',
        error_line: null
      },
      {
        kind: 'stopped',
        reason: 'manual_stop',
        message: 'Stopped by the user.'
      }
    );
    assert.equal(card.dataset.state, 'stopped');
    assert.equal(status.textContent, 'stopped · 12.0 s');
    assert.equal(card.hasAttribute('open'), false); // nothing failed to show
    assert.equal(
      card.querySelector('span.ja-tool-error-line')!.hasAttribute('hidden'),
      true
    );
    mock.timers.tick(5000);
    assert.equal(status.textContent, 'stopped · 12.0 s', 'the ticker stopped');
  });

  it("a call the user denied says so in their words; the model's instruction is folded", () => {
    const t = setup();
    const told =
      'The user declined this call. Do not repeat it; take another approach or ask the user what they want.';
    t.apply(
      {
        kind: 'tool_start',
        tool_use_id: 'tu1',
        name: 'execute_command',
        input: { command: 'rm a.tmp' },
        summary: 'Run: rm a.tmp'
      },
      {
        kind: 'tool_end',
        tool_use_id: 'tu1',
        name: 'execute_command',
        result: told,
        is_error: true,
        outcome: 'denied',
        error_line: 'You denied this call: it did not run.'
      }
    );
    const [card] = t.find('details.ja-tool');
    assert.equal(card.dataset.state, 'denied');
    assert.equal(
      card.querySelector('span.ja-tool-status')?.textContent,
      'denied'
    );
    const row = card.querySelector('summary')!;
    assert.equal(
      row.querySelector('span.ja-tool-error-line')?.textContent,
      'You denied this call: it did not run.'
    );
    assert.ok(!row.textContent.includes('Do not repeat'), row.textContent);
    assert.equal(card.hasAttribute('open'), false);
    assert.equal(
      card.querySelector('div.ja-tool-result pre')?.textContent,
      told
    );
  });

  it('a question the kernel took stays answered when the run stops before its entry', async () => {
    const t = setup();
    t.apply({
      kind: 'question',
      question_id: 'q1',
      question: {
        question: 'Go?',
        severity: 'major',
        options: [
          { label: 'Yes', value: 'y' },
          { label: 'No', value: 'n' }
        ]
      }
    });
    t.find('button.ja-option')[1].click();
    await settle(); // the kernel took the answer
    const [card] = t.find('section.ja-question');
    assert.equal(card.dataset.state, 'answered');
    assert.equal(
      card.querySelector('p.ja-answered')?.textContent,
      'Answered: No'
    );
    // The run stopped before the answer's own entry came: still answered.
    t.apply({
      kind: 'stopped',
      reason: 'manual_stop',
      message: 'Stopped by the user.'
    });
    assert.equal(
      card.querySelector('p.ja-answered')?.textContent,
      'Answered: No'
    );
    t.apply({ kind: 'answer', question_id: 'q1', value: 'n', label: 'No' });
    assert.equal(
      card.querySelector('p.ja-answered')?.textContent,
      'Answered: No'
    );
  });

  it('an approval the kernel took shows its verdict when the run stops before its entry', async () => {
    const t = setup();
    t.apply({
      kind: 'permission_request',
      request_id: 'r1',
      tool_use_id: 'tu1',
      tool_name: 'execute_command',
      summary: 'Run: ls'
    });
    t.find('section.ja-approval button')[0].click(); // Allow
    await settle();
    t.apply({
      kind: 'stopped',
      reason: 'manual_stop',
      message: 'Stopped by the user.'
    });
    const [card] = t.find('section.ja-approval');
    assert.equal(card.dataset.state, 'allowed');
    assert.equal(card.querySelector('p.ja-answered')?.textContent, 'Allowed');
  });

  it('a click the kernel refuses after the run ended leaves the card closed', async () => {
    const t = setup({ fail: 'the agent is not waiting for an answer' });
    t.apply({
      kind: 'question',
      question_id: 'q1',
      question: {
        question: 'Go?',
        severity: 'major',
        options: [{ label: 'Yes', value: 'y' }]
      }
    });
    t.find('button.ja-option')[0].click();
    t.apply({
      kind: 'stopped',
      reason: 'manual_stop',
      message: 'Stopped by the user.'
    });
    await settle();
    const [card] = t.find('section.ja-question');
    assert.equal(card.dataset.state, 'closed');
    assert.equal(
      card.querySelector('p.ja-answered')?.textContent,
      'Not answered: the run stopped.'
    );
    assert.ok(
      card.querySelectorAll('button').every(b => b.hasAttribute('disabled'))
    );
  });

  it('a question answered by a click sends the answer and shows it', async () => {
    const t = setup();
    t.apply({
      kind: 'question',
      question_id: 'q1',
      question: {
        question: 'Go?',
        severity: 'major',
        default: 'y',
        options: [
          { label: 'Yes', value: 'y' },
          { label: 'No', value: 'n' }
        ]
      }
    });
    const [yes, no] = t.find('button.ja-option');
    assert.ok(yes.classList.contains('ja-default'));
    no.click();
    assert.deepEqual(t.commands, [
      ['answer', { question_id: 'q1', value: 'n' }]
    ]);
    assert.ok(no.classList.contains('ja-chosen'));
    t.apply({ kind: 'answer', question_id: 'q1', value: 'n', label: 'No' });
    assert.equal(t.find('section.ja-question')[0].dataset.state, 'answered');
    assert.equal(t.find('p.ja-answered')[0].textContent, 'Answered: No');
  });

  it('an approval sends the decision and, when the command fails, can be clicked again', async () => {
    const t = setup({ fail: 'the kernel is gone' });
    t.apply({
      kind: 'permission_request',
      request_id: 'r1',
      tool_use_id: 'tu1',
      tool_name: 'bash',
      summary: 'rm -rf build',
      remember: 'bash rm *'
    });
    const allow = t.find('section.ja-approval button')[0];
    const always = t.find('section.ja-approval button')[1];
    assert.equal(always.title, 'Remembers for this session: bash rm *');
    always.click();
    assert.deepEqual(t.commands, [
      ['approve', { request_id: 'r1', allow: true, remember: true }]
    ]);
    assert.ok(allow.hasAttribute('disabled'));
    await settle();
    assert.equal(allow.hasAttribute('disabled'), false);
    assert.deepEqual(t.errors, ['the kernel is gone']);
    t.apply({
      kind: 'permission_response',
      request_id: 'r1',
      tool_name: 'bash',
      allowed: true,
      remember: true,
      rule: 'bash rm *'
    });
    const [card] = t.find('section.ja-approval');
    assert.equal(card.dataset.state, 'allowed');
    assert.equal(
      card.querySelector('p.ja-answered')?.textContent,
      'Always allowed (bash rm *)'
    );
  });

  it('a plan whose run stops offers to continue, its running step marked stopped', () => {
    const t = setup();
    t.apply({
      kind: 'plan',
      plan: {
        goal: 'Clean the data',
        steps: [
          { step_number: 1, action: 'load' },
          { step_number: 2, action: 'clean' }
        ]
      }
    });
    const button = t.find('button.ja-execute')[0];
    button.click();
    assert.deepEqual(t.commands, [['execute_plan', undefined]]);
    t.apply(
      {
        kind: 'agent_start',
        run_id: 'r9',
        task: 'Execute the plan',
        role: 'actor',
        model: 'm',
        loop: 'react',
        max_steps: 30
      },
      { kind: 'plan_step', step_number: 1, status: 'done', run_id: 'r9' },
      { kind: 'plan_step', step_number: 2, status: 'in_progress', run_id: 'r9' }
    );
    assert.equal(t.find('td.ja-step-status')[1].textContent, 'in progress');
    t.apply({ kind: 'stopped', reason: 'manual_stop', run_id: 'r9' });
    assert.equal(button.textContent, 'Continue plan');
    assert.equal(button.hasAttribute('disabled'), false);
    assert.deepEqual(
      t.find('td.ja-step-status').map(s => s.dataset.status),
      ['done', 'stopped']
    );
  });

  it('throws on an unknown entry kind when strict, and logs it otherwise', () => {
    const t = setup();
    const entry = { kind: 'no_such_kind' } as unknown as TranscriptEntry;
    assert.throws(() => t.transcript.apply(entry), UnknownEntryError);

    const logged = mock.method(console, 'error', () => {});
    const lenient = new Transcript(
      new FakeElement('div') as unknown as HTMLElement,
      { command: () => Promise.resolve(), busy: () => false, error: () => {} }
    );
    lenient.apply(entry);
    assert.equal(logged.mock.callCount(), 1);
    assert.match(String(logged.mock.calls[0].arguments[0]), /no_such_kind/);
  });

  it('renders text as text: markup in a tool summary or a note stays inert', () => {
    const t = setup();
    t.apply(
      { kind: 'note', text: '<img src=x onerror=alert(1)>' },
      {
        kind: 'tool_start',
        tool_use_id: 'x',
        name: '<b>',
        // Not what the kernel sends (an object): a view renders whatever arrives as text.
        input: '<script>' as unknown as Record<string, unknown>,
        summary: '<script>'
      }
    );
    assert.equal(
      t.root
        .descendants()
        .filter(e => ['img', 'script', 'b'].includes(e.localName)).length,
      0
    );
    assert.equal(
      t.find('div.ja-note')[0].textContent,
      '<img src=x onerror=alert(1)>'
    );
  });
});
