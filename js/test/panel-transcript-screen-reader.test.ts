/**
 * The panel's transcript (src/panel/transcript.ts) for screen readers, on a fake DOM: a
 * polite live log, a streaming block kept out of it until it ends, every card named for
 * what it holds, and an option's description read as its description.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { install } from './fakedom';
import { setup } from './transcript-setup';

install();

describe('the transcript for screen readers', () => {
  it('is a polite live log of entries', () => {
    const t = setup();
    assert.equal(t.root.getAttribute('role'), 'log');
    assert.equal(t.root.getAttribute('aria-live'), 'polite');
    assert.equal(t.root.getAttribute('aria-relevant'), 'additions');
  });

  it('keeps a streaming block out of the log until it ends, then shows it once', () => {
    const t = setup();
    t.apply({ kind: 'text_delta', n: 1, text: 'Loading the ' });
    t.transcript.renderDirty();
    const [block] = t.find('div.ja-text');
    assert.equal(block.getAttribute('aria-hidden'), 'true');
    t.apply({ kind: 'text_delta', n: 2, text: 'data.' });
    t.transcript.renderDirty();
    assert.equal(block.getAttribute('aria-hidden'), 'true', 'per token');
    t.apply({ kind: 'text_end', n: 3, phase: null, interrupted: false });
    assert.equal(block.hasAttribute('aria-hidden'), false);
    assert.equal(block.textContent, 'Loading the data.');
    // A block that arrives whole (a snapshot) is in the log at once.
    t.apply({ kind: 'text', n: 4, text: 'Done.' });
    assert.equal(t.find('div.ja-text')[1].hasAttribute('aria-hidden'), false);
    // A stop ends a streaming block too.
    t.apply({ kind: 'text_delta', n: 5, text: 'Half' });
    t.apply({ kind: 'stopped', n: 6, reason: 'manual_stop', message: '' });
    assert.equal(t.find('div.ja-text')[2].hasAttribute('aria-hidden'), false);
  });

  it('names every card for what it holds', () => {
    const t = setup();
    t.apply(
      {
        kind: 'plan',
        n: 1,
        plan: {
          goal: 'Clean the sales data',
          steps: [{ step_number: 1, action: 'Load' }]
        }
      },
      {
        kind: 'question',
        n: 2,
        question_id: 'q1',
        question: { question: 'Which column?', severity: 'major' }
      },
      {
        kind: 'permission_request',
        n: 3,
        request_id: 'r1',
        tool_use_id: 'tu1',
        tool_name: 'run_cell',
        summary: 'Run cell c3',
        input: { cell_id: 'c3' },
        preview: {
          kind: 'cell',
          cell_id: 'c3',
          source: 'x',
          index: 3,
          count: 12
        }
      },
      {
        kind: 'permission_request',
        n: 4,
        request_id: 'r2',
        tool_use_id: 'tu2',
        tool_name: 'execute_command',
        summary: 'Execute `ls -la`'
      },
      {
        kind: 'tool_start',
        n: 5,
        tool_use_id: 'tu3',
        name: 'read_file',
        input: { path: 'sales.csv' },
        summary: 'Read sales.csv'
      }
    );
    const names = t
      .find('section.ja-card, details.ja-tool')
      .map(card => card.getAttribute('aria-label'));
    assert.deepEqual(names, [
      'Plan: Clean the sales data',
      'Question: Which column?',
      'Approval: run cell 3 of 12',
      'Approval: execute `ls -la`',
      'Tool: Read sales.csv'
    ]);
  });

  it("shows an option's description under its label, as its description", () => {
    const t = setup();
    t.apply({
      kind: 'question',
      n: 1,
      question_id: 'q1',
      question: {
        question: 'Which column?',
        severity: 'major',
        options: [
          {
            label: 'price',
            value: 'price',
            description: 'What was <b>paid</b>'
          },
          { label: 'qty', value: 'qty' }
        ]
      }
    });
    const [price, qty] = t.find('button.ja-option');
    const label = price.querySelector('span.ja-option-label')!;
    const description = price.querySelector('span.ja-option-description')!;
    assert.equal(label.textContent, 'price');
    assert.equal(description.textContent, 'What was <b>paid</b>'); // text, inert
    assert.equal(description.children.length, 0);
    // Named by its label; the description read as its description, not only a tooltip.
    assert.equal(description.getAttribute('aria-hidden'), 'true');
    assert.equal(
      price.getAttribute('aria-describedby'),
      description.getAttribute('id')
    );
    assert.equal(price.hasAttribute('title'), false);
    assert.equal(qty.hasAttribute('aria-describedby'), false);
    assert.equal(qty.querySelector('span.ja-option-description'), null);
  });
});
