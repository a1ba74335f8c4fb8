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

  it('links the cells a tool names: short ids first, "cell 7" once the result says where', () => {
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
    let [link] = summary.querySelectorAll('a.ja-reveal-cell');
    assert.equal(link.title, `Show cell ${LONG} in the notebook`);
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
    [link] = summary.querySelectorAll('a.ja-reveal-cell');
    link.click();
    assert.deepEqual(seen, [{ cellId: '8f81ab4e' }, { cellId: LONG }]);
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
