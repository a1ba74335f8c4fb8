/**
 * The context window in the panel (src/panel/context.ts): the gauge's words, and the
 * transcript's marker where the conversation was compacted, worded as the kernel's
 * CompactionEvent.describe() words it.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { contextText, describeCompaction, tokens } from '../src/panel/context';
import { Transcript } from '../src/panel/transcript';
import { FakeElement, install } from './fakedom';

install();

describe('the context gauge in words', () => {
  it('gives tokens in a few characters', () => {
    assert.deepEqual([950, 90_000, 199_600, 1_048_576].map(tokens), [
      '950',
      '90k',
      '200k',
      '1.0M'
    ]);
  });

  it('shows nothing before there is a conversation', () => {
    assert.equal(contextText({}), '');
    assert.equal(contextText(undefined), '');
  });

  it('leaves out the cached share when nothing was read from the cache', () => {
    assert.equal(
      contextText({ used_tokens: 3_000, window: 200_000, cached_tokens: 0 }),
      'Context 2% · 3k / 200k'
    );
  });
});

describe('the compaction marker', () => {
  it('words a compaction as the kernel does', () => {
    // The lines CompactionEvent.describe() gives for the same fields (events.py).
    assert.equal(
      describeCompaction({
        reason: 'manual',
        cleared: 3,
        summarised: 12,
        tokens_before: 150_000,
        tokens_after: 21_500
      }),
      'Compacted the conversation (you asked): cleared 3 old tool results and ' +
        'summarised 12 earlier messages; about 150,000 → 21,500 tokens.'
    );
    assert.equal(
      describeCompaction({
        reason: 'auto',
        cleared: 1,
        tokens_before: 1_200,
        tokens_after: 900
      }),
      'Compacted the conversation (the context window was filling up): cleared 1 ' +
        'old tool result; about 1,200 → 900 tokens.'
    );
    assert.equal(
      describeCompaction({
        reason: 'too_long',
        summarised: 1,
        tokens_before: 210_000,
        tokens_after: 3_000
      }),
      'Compacted the conversation (the API said the prompt was too long): ' +
        'summarised 1 earlier message; about 210,000 → 3,000 tokens.'
    );
  });

  it('is a divider in the transcript, with the summary folded when there is one', () => {
    const root = new FakeElement('div');
    const transcript = new Transcript(
      root as unknown as HTMLElement,
      {
        command: async () => ({}),
        busy: () => false,
        error: () => undefined
      },
      true
    );
    transcript.apply({ kind: 'text', n: 1, text: 'Read them all.' });
    transcript.apply({
      kind: 'compaction',
      n: 2,
      reason: 'auto',
      cleared: 4,
      tokens_before: 160_000,
      tokens_after: 90_000
    });
    transcript.apply({
      kind: 'compaction',
      n: 3,
      reason: 'manual',
      summarised: 8,
      tokens_before: 90_000,
      tokens_after: 6_000,
      summary: 'The user asked for **three** files; all were read.'
    });
    const markers = root.querySelectorAll('div.ja-compaction');
    assert.equal(markers.length, 2);
    assert.equal(
      markers[0].querySelector('div.ja-compaction-line')?.textContent,
      '⇣ Compacted the conversation (the context window was filling up): ' +
        'cleared 4 old tool results; about 160,000 → 90,000 tokens.'
    );
    assert.equal(markers[0].querySelector('details'), null);
    const folded = markers[1].querySelector(
      'details.ja-compaction-summary'
    ) as FakeElement;
    assert.equal(folded.hasAttribute('open'), false);
    assert.equal(folded.querySelector('summary')?.textContent, 'Summary');
    // The model's words as text, never as markup.
    assert.equal(
      folded.querySelector('div.ja-compaction-text')?.textContent,
      'The user asked for **three** files; all were read.'
    );
  });

  it('shows a "Compact now" run as its marker alone', () => {
    const root = new FakeElement('div');
    const transcript = new Transcript(
      root as unknown as HTMLElement,
      { command: async () => ({}), busy: () => false, error: () => undefined },
      true
    );
    const start = {
      kind: 'agent_start',
      run_id: 'c',
      task: 'Compact the conversation now.',
      role: 'actor',
      model: 'scripted',
      loop: 'tool_use',
      max_steps: 30,
      action: 'compact'
    } as const;
    transcript.apply(start);
    transcript.apply({
      kind: 'compaction',
      run_id: 'c',
      reason: 'manual',
      summarised: 1,
      tokens_before: 5_791,
      tokens_after: 842,
      summary: 'The user asked for the answer; it is 42.'
    });
    transcript.apply({
      kind: 'completed',
      run_id: 'c',
      summary: 'Compacted the conversation.'
    });
    // Not a message, a run line, the marker and a "Completed" line: one entry.
    assert.deepEqual(
      root.children.map(c => c.className),
      ['ja-compaction']
    );
    // Nothing to compact: the run's end says so (there is no marker).
    transcript.apply({ ...start, run_id: 'd' });
    transcript.apply({
      kind: 'completed',
      run_id: 'd',
      summary: 'There was nothing to compact.'
    });
    assert.equal(root.children.length, 2);
    assert.equal(
      root.children[1].textContent,
      '✔ Completed: There was nothing to compact.'
    );
  });
});
