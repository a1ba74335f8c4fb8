/**
 * Cell references in the panel's transcript (src/panel/transcript.ts), on a fake DOM: the
 * cells a tool, its result or an approval names become links that reveal the cell, shown
 * by their place in the notebook once it is known, and an id is only ever literal text.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { html, install } from './fakedom';
import { type ISetup, setup } from './transcript-setup';

install();

describe('cell references in the transcript', () => {
  const LONG = '4a6b7c8d-0000-4000-8000-00000000beef';

  function reveals(t: ISetup): unknown[] {
    const seen: unknown[] = [];
    t.root.addEventListener('jupyter-agent:reveal-cell', event =>
      seen.push((event as unknown as CustomEvent).detail)
    );
    return seen;
  }

  it('names the cells a tool names: short ids first, "cell 7" once the result says where', () => {
    const t = setup();
    const seen = reveals(t);
    t.apply({
      kind: 'tool_start',
      n: 1,
      tool_use_id: 'tu1',
      name: 'insert_cell',
      input: { source: 'x', after: LONG },
      summary: `Insert code cell after ${LONG}`
    });
    const summary = t.find('span.ja-tool-summary')[0];
    assert.equal(summary.textContent, 'Insert code cell after cell 4a6b7c8d');
    // The row's summary is its toggle: a mention, its id on hover, not a link in it.
    assert.equal(summary.querySelectorAll('a').length, 0);
    const [mention] = summary.querySelectorAll('span.ja-cell-name');
    assert.equal(mention.title, `Cell id ${LONG}`);
    t.apply({
      kind: 'tool_end',
      n: 2,
      tool_use_id: 'tu1',
      name: 'insert_cell',
      result: `Inserted code cell 8f81ab4e after ${LONG}.`,
      data: {
        cell_id: '8f81ab4e',
        change: 'insert',
        positions: { '8f81ab4e': 8, [LONG]: 7 }
      }
    });
    assert.equal(summary.textContent, 'Insert code cell after cell 7');
    const card = t.find('details.ja-tool')[0];
    assert.equal(
      card.getAttribute('aria-label'),
      'Tool: Insert code cell after cell 7'
    );
    const result = card.querySelector('div.ja-tool-result pre')!;
    assert.equal(result.textContent, 'Inserted code cell 8 after cell 7.');
    const links = result.querySelectorAll('a.ja-reveal-cell');
    assert.deepEqual(
      links.map(a => [a.textContent, a.dataset.cellId, a.title]),
      [
        ['cell 8', '8f81ab4e', 'Show cell 8f81ab4e in the notebook'],
        ['cell 7', LONG, `Show cell ${LONG} in the notebook`]
      ]
    );
    links[0].click();
    links[1].click();
    assert.deepEqual(seen, [{ cellId: '8f81ab4e' }, { cellId: LONG }]);
    assert.deepEqual(
      summary
        .querySelectorAll('span.ja-cell-name')
        .map(m => [m.textContent, m.title]),
      [['cell 7', `Cell id ${LONG}`]]
    );
  });

  it('links a run\'s cell in the result, keeping the "Cell" word', () => {
    const t = setup();
    t.apply(
      {
        kind: 'tool_start',
        n: 1,
        tool_use_id: 'tu1',
        name: 'run_cell',
        input: { cell_id: 'c3' },
        summary: 'Run cell c3'
      },
      {
        kind: 'tool_end',
        n: 2,
        tool_use_id: 'tu1',
        name: 'run_cell',
        result: "Cell c3 ran [4].\n⤷ 1 'c3c3' stays",
        data: { cell_id: 'c3', positions: { c3: 3 } }
      }
    );
    assert.equal(t.find('span.ja-tool-summary')[0].textContent, 'Run cell 3');
    const result = t.find('div.ja-tool-result pre')[0];
    // Only the whole id is a reference; a word that contains it is text.
    assert.equal(result.textContent, "Cell 3 ran [4].\n⤷ 1 'c3c3' stays");
    assert.equal(result.querySelectorAll('a.ja-reveal-cell').length, 1);
  });

  it('links the cell an approval names, at the place the preview gives', () => {
    const t = setup();
    t.apply({
      kind: 'permission_request',
      n: 1,
      request_id: 'r1',
      tool_use_id: 'tu1',
      tool_name: 'run_cell',
      summary: 'Run cell c3',
      input: { cell_id: 'c3' },
      preview: { kind: 'cell', cell_id: 'c3', source: 'x', index: 3, count: 12 }
    });
    const summary = t.find('p.ja-approval-summary')[0];
    assert.equal(summary.textContent, 'Run cell 3');
    assert.equal(
      summary.querySelector('a.ja-reveal-cell')?.dataset.cellId,
      'c3'
    );
  });

  it('names a cell one way everywhere: "cell 4", its id on hover and in the link', () => {
    const t = setup();
    // The notebook was read: every cell's place is known from then on.
    t.apply(
      {
        kind: 'tool_start',
        n: 1,
        tool_use_id: 'read',
        name: 'read_notebook',
        input: {},
        summary: 'Read the notebook'
      },
      {
        kind: 'tool_end',
        n: 2,
        tool_use_id: 'read',
        name: 'read_notebook',
        result: '…',
        data: { cells: 5, positions: { c1: 1, [LONG]: 4, c5: 5 } }
      },
      {
        kind: 'tool_start',
        n: 3,
        tool_use_id: 'edit',
        name: 'update_cell',
        input: { cell_id: LONG, source: 'rate = 0.2' },
        summary: `Edit cell ${LONG}`
      }
    );
    const [, card] = t.find('details.ja-tool');
    const summary = card.querySelector('span.ja-tool-summary')!;
    // From its start, before its result: the place, not "cell 4a6b7c8d".
    assert.equal(summary.textContent, 'Edit cell 4');
    const diff = `--- a/cell ${LONG}\n+++ b/cell ${LONG}\n@@ -1 +1 @@\n-rate = 0.02\n+rate = 0.2`;
    t.apply({
      kind: 'tool_end',
      n: 4,
      tool_use_id: 'edit',
      name: 'update_cell',
      result: `Updated the source of cell ${LONG}.\n${diff}`,
      diff,
      data: { cell_id: LONG, change: 'update', positions: { [LONG]: 4 } }
    });
    assert.equal(summary.textContent, 'Edit cell 4');
    const result = card.querySelector('div.ja-tool-result')!;
    // The diff is headed by the cell's name, without the lines that name it by its id.
    assert.deepEqual(
      result.querySelectorAll('div.ja-label').map(l => l.textContent),
      ['Result', 'Diff of cell 4']
    );
    assert.deepEqual(
      result.querySelectorAll('pre.ja-diff span').map(s => s.textContent),
      ['@@ -1 +1 @@\n', '-rate = 0.02\n', '+rate = 0.2\n']
    );
    // The id only where it is looked for: the links' targets and tooltips, and the raw
    // input behind "Details".
    const shown = [summary, ...result.children]
      .map(e => e.textContent)
      .join('\n');
    assert.ok(!shown.includes(LONG) && !shown.includes('4a6b7c8d'), shown);
    const links = card.querySelectorAll('a.ja-reveal-cell');
    assert.equal(links.length, 2); // in the result and the diff's heading
    for (const link of links) {
      assert.equal(link.textContent, 'cell 4');
      assert.equal(link.dataset.cellId, LONG);
      assert.equal(link.title, `Show cell ${LONG} in the notebook`);
    }
    const [mention] = summary.querySelectorAll('span.ja-cell-name');
    assert.equal(mention.textContent, 'cell 4');
    assert.equal(mention.title, `Cell id ${LONG}`);
    assert.equal(card.hasAttribute('open'), false);
  });

  it('forgets the places it knew when a new run starts (the user may have moved cells)', () => {
    const t = setup();
    t.apply(
      {
        kind: 'tool_end',
        n: 1,
        tool_use_id: 'read',
        name: 'read_notebook',
        result: '…',
        data: { cells: 2, positions: { a: 1, b: 2 } }
      },
      {
        kind: 'agent_start',
        n: 2,
        task: 'Edit b',
        role: 'actor',
        model: 'm',
        loop: 'react',
        max_steps: 30
      },
      {
        kind: 'tool_start',
        n: 3,
        tool_use_id: 'edit',
        name: 'update_cell',
        input: { cell_id: 'b', source: 'x' },
        summary: 'Edit cell b'
      }
    );
    assert.equal(
      t.find('span.ja-tool-summary').at(-1)!.textContent,
      'Edit cell b'
    );
  });

  it("forgets the places an insert shifted, and learns an approval's", () => {
    const t = setup();
    t.apply(
      {
        kind: 'tool_end',
        n: 1,
        tool_use_id: 'read',
        name: 'read_notebook',
        result: '…',
        data: { cells: 3, positions: { a: 1, b: 2, c: 3 } }
      },
      {
        kind: 'tool_end',
        n: 2,
        tool_use_id: 'ins',
        name: 'insert_cell',
        result: 'Inserted code cell n after a.',
        data: { cell_id: 'n', change: 'insert', positions: { n: 2, a: 1 } }
      },
      {
        kind: 'tool_start',
        n: 3,
        tool_use_id: 'run',
        name: 'run_cell',
        input: { cell_id: 'c' },
        summary: 'Run cell c'
      }
    );
    const summary = () => t.find('span.ja-tool-summary').at(-1)!.textContent;
    // c moved to 4: its old place is not said; its id until the place is known again.
    assert.equal(summary(), 'Run cell c');
    t.apply({
      kind: 'permission_request',
      n: 4,
      request_id: 'r1',
      tool_use_id: 'run',
      tool_name: 'run_cell',
      summary: 'Run cell c',
      input: { cell_id: 'c' },
      preview: { kind: 'cell', cell_id: 'c', source: 'x', index: 4, count: 4 }
    });
    assert.equal(summary(), 'Run cell 4');
    assert.equal(t.find('p.ja-approval-summary')[0].textContent, 'Run cell 4');
  });

  it('keeps ids with regex characters inert and literal', () => {
    const t = setup();
    t.apply({
      kind: 'tool_start',
      n: 1,
      tool_use_id: 'tu1',
      name: 'run_cell',
      input: { cell_id: 'a.b*(<i>)' },
      summary: 'Run cell a.b*(<i>) or aXb'
    });
    const summary = t.find('span.ja-tool-summary')[0];
    assert.equal(summary.textContent, 'Run cell a.b*(<i> or aXb');
    assert.ok(!html(summary).includes('<i>'), html(summary));
  });
});
