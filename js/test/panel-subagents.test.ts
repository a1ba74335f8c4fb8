/**
 * Subagents in the transcript (src/panel/transcript.ts, tool-card.ts) on a fake DOM: a
 * subagent's events nest under the card of the delegate call that started it, as a
 * transcript of its own with its role, tool calls, text and end (its task is said once,
 * on the call's row); several stay
 * apart and in order; its approval card works like the agent's own and sends the
 * subagent's request id, and two of one call are named apart; a subagent's plan offers no
 * Execute button.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import type { EntryOf, TranscriptEntry } from '../src/panel/types';
import { html, install } from './fakedom';
import { transcriptHarness } from './transcript-harness';

install();

const setup = transcriptHarness;

type Inner = EntryOf<'subagent_output'>['event'];

function delegateCall(id: string, task: string): TranscriptEntry {
  return {
    kind: 'tool_start',
    tool_use_id: id,
    name: 'delegate',
    input: { task },
    summary: `Delegate (planner): ${task}`
  };
}

function spawned(
  child: string,
  toolUseId: string,
  task: string
): TranscriptEntry {
  return {
    kind: 'subagent_spawned',
    child_session_id: child,
    agent_type: 'planner',
    parent_tool_use_id: toolUseId,
    task
  };
}

function out(child: string, event: Inner): TranscriptEntry {
  return { kind: 'subagent_output', child_session_id: child, event };
}

describe('a subagent', () => {
  it('nests under its delegate card: role, its tool calls, text and end; the task once', () => {
    const t = setup();
    t.apply(
      delegateCall('tu1', 'count rows'),
      spawned('s1', 'tu1', 'count rows'),
      out('s1', {
        kind: 'agent_start',
        task: 'count rows',
        role: 'planner',
        model: 'scripted',
        loop: 'tool_use',
        max_steps: 29
      }),
      out('s1', { kind: 'state', state: 'running', previous: 'idle' }),
      out('s1', {
        kind: 'tool_start',
        tool_use_id: 'c1',
        name: 'read_file',
        input: { path: 'a.csv' },
        summary: 'read a.csv'
      }),
      out('s1', {
        kind: 'tool_end',
        tool_use_id: 'c1',
        name: 'read_file',
        result: '3 lines'
      }),
      out('s1', { kind: 'text_delta', text: 'It has ' }),
      out('s1', { kind: 'text', text: 'It has 3 rows.' }),
      out('s1', { kind: 'completed', summary: 'It has 3 rows.' })
    );
    const [card] = t.find('details.ja-tool');
    assert.equal(card.dataset.tool, 'delegate');
    assert.equal(
      card.hasAttribute('open'),
      true,
      'open while its subagent works'
    );
    const [box] = card.querySelectorAll('details.ja-subagent');
    assert.ok(box, html(card));
    assert.match(box.querySelector('summary')!.textContent, /↳ planner/);
    // The task once, on the delegate row: not again on the subagent's row, nor as a
    // message of its own (the call's raw input is folded away under Details).
    assert.match(card.querySelector('summary')!.textContent, /count rows/);
    assert.doesNotMatch(
      box.querySelector('summary')!.textContent,
      /count rows/
    );
    assert.equal(box.querySelectorAll('.ja-user').length, 0);
    assert.equal(
      box.getAttribute('aria-label'),
      'Subagent (planner): count rows'
    );
    // The child's own tool card and text are inside the box, not in the parent's log.
    const inner = box.querySelectorAll('details.ja-tool');
    assert.deepEqual(
      inner.map(c => c.dataset.tool),
      ['read_file']
    );
    assert.equal(inner[0].dataset.state, 'done');
    assert.match(box.textContent, /It has 3 rows\./);
    assert.equal(
      t.root.children.filter(c => c.classList.contains('ja-tool')).length,
      1,
      'one card at the top: the delegate call'
    );
    assert.equal(box.dataset.state, 'running');

    t.apply({
      kind: 'subagent_complete',
      child_session_id: 's1',
      result: 'It has 3 rows.',
      state: 'completed'
    });
    assert.equal(box.dataset.state, 'completed');
    assert.match(box.querySelector('summary')!.textContent, /done$/);
    t.apply({
      kind: 'tool_end',
      tool_use_id: 'tu1',
      name: 'delegate',
      result: 'The planner subagent finished.\n\nIt has 3 rows.'
    });
    assert.equal(card.dataset.state, 'done');
    assert.equal(
      card.querySelectorAll('details.ja-subagent').length,
      1,
      'kept'
    );
  });

  it('says a subagent the user stopped "stopped", not a red "cancelled"', () => {
    const t = setup();
    t.apply(
      delegateCall('tu1', 'count rows'),
      spawned('s1', 'tu1', 'count rows'),
      {
        kind: 'subagent_complete',
        child_session_id: 's1',
        state: 'cancelled'
      }
    );
    const [box] = t.find('details.ja-subagent');
    assert.equal(box.dataset.state, 'cancelled');
    assert.match(box.querySelector('summary')!.textContent, /stopped$/);
  });

  it('keeps several apart, each in its own card, in order', () => {
    const t = setup();
    t.apply(
      delegateCall('tu1', 'A'),
      delegateCall('tu2', 'B'),
      spawned('sa', 'tu1', 'A'),
      spawned('sb', 'tu2', 'B'),
      // Interleaved, as two subagents running at once stream.
      out('sb', { kind: 'text_delta', text: 'from B' }),
      out('sa', { kind: 'text_delta', text: 'from A' }),
      out('sb', { kind: 'text', text: 'from B' }),
      out('sa', { kind: 'text', text: 'from A' })
    );
    const cards = t.find('details.ja-tool');
    assert.equal(cards.length, 2);
    const texts = cards.map(c =>
      c
        .querySelector('details.ja-subagent .ja-subagent-body')!
        .textContent.trim()
    );
    assert.deepEqual(texts, ['from A', 'from B']);
  });

  it("shows its approval card in its box, and Allow sends the subagent's request id", () => {
    const t = setup();
    t.apply(
      delegateCall('tu1', 'write it'),
      spawned('s1', 'tu1', 'write it'),
      out('s1', {
        kind: 'tool_start',
        tool_use_id: 'c1',
        name: 'create_file',
        input: { path: 'x.txt' },
        summary: 'create x.txt'
      }),
      out('s1', {
        kind: 'permission_request',
        request_id: 'child-r1',
        tool_use_id: 'c1',
        tool_name: 'create_file',
        summary: 'create x.txt',
        input: { path: 'x.txt' }
      })
    );
    const [box] = t.find('details.ja-subagent');
    assert.equal(box.hasAttribute('open'), true);
    const [approval] = box.querySelectorAll('section.ja-approval');
    assert.ok(approval, html(box));
    const allow = approval
      .querySelectorAll('button')
      .find(b => b.textContent === 'Allow')!;
    allow.click();
    assert.deepEqual(t.commands, [
      ['approve', { request_id: 'child-r1', allow: true, remember: false }]
    ]);
    const [tool] = box.querySelectorAll('details.ja-tool');
    assert.equal(tool.dataset.state, 'waiting');
    t.apply(
      out('s1', {
        kind: 'permission_response',
        request_id: 'child-r1',
        tool_name: 'create_file',
        allowed: true
      })
    );
    assert.equal(approval.dataset.state, 'allowed');
  });

  it('offers no Execute button for its plan, and no Retry after its error', () => {
    const t = setup();
    t.apply(
      delegateCall('tu1', 'plan it'),
      spawned('s1', 'tu1', 'plan it'),
      out('s1', {
        kind: 'plan',
        plan: {
          goal: 'Clean the data',
          steps: [{ step_number: 1, action: 'Drop duplicates' }]
        }
      }),
      out('s1', { kind: 'error', message: 'The model failed.' })
    );
    const [box] = t.find('details.ja-subagent');
    assert.match(box.textContent, /Clean the data/);
    assert.deepEqual(
      box.querySelectorAll('button').map(b => b.textContent),
      []
    );
  });

  it("names two subagents' approvals of the same call apart", () => {
    const t = setup();
    const asks = (child: string, request: string): TranscriptEntry =>
      out(child, {
        kind: 'permission_request',
        request_id: request,
        tool_use_id: `${request}-call`,
        tool_name: 'create_file',
        summary: 'Create x.txt',
        input: { path: 'x.txt' }
      });
    t.apply(
      delegateCall('tu1', 'write it'),
      delegateCall('tu2', 'write it'),
      spawned('s1', 'tu1', 'write it'),
      spawned('s2', 'tu2', 'write it'),
      asks('s1', 'r1'),
      asks('s2', 'r2'),
      asks('s1', 'r3')
    );
    // Landmarks of one role and one name could not be told apart in a screen reader's
    // list of them (axe-core's landmark-unique).
    assert.deepEqual(
      t.find('section.ja-approval').map(s => s.getAttribute('aria-label')),
      [
        'Approval: create x.txt',
        'Approval: create x.txt (3)',
        'Approval: create x.txt (2)'
      ]
    );
  });

  it('shows output of a subagent whose start it never saw (a trimmed log)', () => {
    const t = setup();
    t.apply(out('lost', { kind: 'text', text: 'still here' }));
    const [box] = t.find('details.ja-subagent');
    assert.match(box.textContent, /still here/);
  });
});
