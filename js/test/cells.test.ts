/**
 * The notebook operations' rules on plain JSON (src/cells.ts), and the
 * addressing of requests to one frontend (src/model.ts).
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import {
  Args,
  insertionIndex,
  joinSource,
  moveIndices,
  runResult,
  sourceEdit,
  wireCell
} from '../src/cells';
import { defersPing, isAddressedTo, pingResult } from '../src/model';
import { PROTOCOL_VERSION } from '../src/protocol';
import { frontendOf } from '../src/tokens';

/** Apply a sourceEdit the way YCell.updateSource does. */
function apply(old: string, next: string): string {
  const change = sourceEdit(old, next);
  if (change === null) {
    return old;
  }
  return old.slice(0, change.start) + change.value + old.slice(change.end);
}

describe('wireCell', () => {
  it('gives every field, the source as one string', () => {
    assert.deepEqual(
      wireCell(
        {
          id: 'a',
          cell_type: 'code',
          source: ['x = 1\n', 'x'],
          execution_count: 3,
          outputs: [{ output_type: 'stream', name: 'stdout', text: 'hi\n' }],
          metadata: { tags: ['t'] }
        },
        false
      ),
      {
        id: 'a',
        cell_type: 'code',
        source: 'x = 1\nx',
        execution_count: 3,
        outputs: [{ output_type: 'stream', name: 'stdout', text: 'hi\n' }],
        metadata: { tags: ['t'] },
        edited_since_run: false
      }
    );
  });

  it('gives markdown and raw cells no outputs or count, and fills what is missing', () => {
    assert.deepEqual(
      wireCell(
        {
          id: 'm',
          cell_type: 'markdown',
          source: '# T',
          attachments: {}
        },
        false
      ),
      {
        id: 'm',
        cell_type: 'markdown',
        source: '# T',
        execution_count: null,
        outputs: [],
        metadata: {},
        edited_since_run: false
      }
    );
    assert.deepEqual(wireCell({ id: 'c', cell_type: 'code' }, false), {
      id: 'c',
      cell_type: 'code',
      source: '',
      execution_count: null,
      outputs: [],
      metadata: {},
      edited_since_run: false
    });
  });

  it('says a code cell edited since it ran, keeping its earlier outputs and count', () => {
    const ran = {
      id: 'a',
      cell_type: 'code',
      source: 'x = 2',
      execution_count: 4,
      outputs: [{ output_type: 'execute_result', data: { 'text/plain': '1' } }],
      metadata: {}
    };
    const dirty = wireCell(ran, true);
    assert.equal(dirty.edited_since_run, true);
    assert.equal(dirty.execution_count, 4);
    assert.deepEqual(dirty.outputs, ran.outputs);
    assert.deepEqual(wireCell(ran, false), {
      ...dirty,
      edited_since_run: false
    });
  });

  it('never says a markdown or raw cell was edited since it ran', () => {
    for (const cell_type of ['markdown', 'raw']) {
      const cell = wireCell({ id: 'm', cell_type, source: '# T' }, true);
      assert.equal(cell.edited_since_run, false, cell_type);
    }
  });

  it('joins list sources', () => {
    assert.equal(joinSource(['a\n', 'b']), 'a\nb');
    assert.equal(joinSource(undefined), '');
  });
});

describe('insertionIndex', () => {
  const ids = ['a', 'b', 'c'];

  it('puts a cell before, after, or at the end', () => {
    assert.equal(insertionIndex(ids, 'a'), 0);
    assert.equal(insertionIndex(ids, undefined, 'a'), 1);
    assert.equal(insertionIndex(ids, undefined, 'c'), 3);
    assert.equal(insertionIndex(ids), 3);
    assert.equal(insertionIndex([], null, null), 0);
  });

  it('names an unknown cell and refuses both anchors', () => {
    assert.throws(() => insertionIndex(ids, 'zz'), {
      code: 'no_cell',
      fields: { cell_id: 'zz' },
      message: 'no cell with id zz'
    });
    assert.throws(() => insertionIndex(ids, 'a', 'b'), {
      code: 'before_and_after'
    });
  });
});

describe('moveIndices', () => {
  const ids = ['a', 'b', 'c', 'd'];

  /** The order after YNotebook.moveCell(from, to). */
  function moved(id: string, before?: string, after?: string): string[] {
    const { from, to } = moveIndices(ids, id, before, after);
    const rest = ids.filter((_, i) => i !== from);
    rest.splice(to, 0, ids[from]);
    return rest;
  }

  it('moves down and up, before and after', () => {
    assert.deepEqual(moved('a', undefined, 'c'), ['b', 'c', 'a', 'd']);
    assert.deepEqual(moved('a', 'c'), ['b', 'a', 'c', 'd']);
    assert.deepEqual(moved('d', 'a'), ['d', 'a', 'b', 'c']);
    assert.deepEqual(moved('d', undefined, 'a'), ['a', 'd', 'b', 'c']);
    assert.deepEqual(moved('b', undefined, 'd'), ['a', 'c', 'd', 'b']);
  });

  it('gives the new index, which is the index among the other cells', () => {
    assert.deepEqual(moveIndices(ids, 'a', undefined, 'c'), { from: 0, to: 2 });
    assert.deepEqual(moveIndices(ids, 'd', 'a'), { from: 3, to: 0 });
    // Already there: from === to, nothing to do.
    assert.deepEqual(moveIndices(ids, 'b', 'c'), { from: 1, to: 1 });
  });

  it('refuses unknown cells, itself, and a missing or double anchor', () => {
    const noCell = { code: 'no_cell', fields: { cell_id: 'x' } };
    assert.throws(() => moveIndices(ids, 'x', 'a'), noCell);
    assert.throws(() => moveIndices(ids, 'a', 'x'), noCell);
    assert.throws(() => moveIndices(ids, 'a', 'a'), {
      code: 'next_to_itself',
      fields: { cell_id: 'a' },
      message: 'cannot move cell a next to itself'
    });
    assert.throws(() => moveIndices(ids, 'a'), { code: 'no_anchor' });
    assert.throws(() => moveIndices(ids, 'a', 'b', 'c'), {
      code: 'before_and_after'
    });
  });
});

describe('sourceEdit', () => {
  it('replaces only what changed', () => {
    assert.deepEqual(sourceEdit('x = 1\ny = 2', 'x = 1\ny = 3'), {
      start: 10,
      end: 11,
      value: '3'
    });
    assert.deepEqual(sourceEdit('abc', 'abXc'), {
      start: 2,
      end: 2,
      value: 'X'
    });
    assert.deepEqual(sourceEdit('abc', 'ac'), { start: 1, end: 2, value: '' });
    assert.equal(sourceEdit('same', 'same'), null);
  });

  it('turns any source into any other', () => {
    const cases: [string, string][] = [
      ['', 'new'],
      ['old', ''],
      ['aaaa', 'aa'],
      ['aa', 'aaaa'],
      ['print(1)\nprint(1)', 'print(1)'],
      ['abcabc', 'abc'],
      ['x 😀 y', 'x 😃 y'],
      ['😀😀', '😀'],
      ['a😀', 'a😀b']
    ];
    for (const [old, next] of cases) {
      assert.equal(apply(old, next), next, `${old} → ${next}`);
    }
  });

  it('never splits a surrogate pair', () => {
    // 😀 and 😃 share their high surrogate: the edit must still take both halves.
    const change = sourceEdit('x 😀 y', 'x 😃 y');
    assert.ok(change);
    assert.equal(change.value, '😃');
    assert.equal(change.end - change.start, 2);
  });
});

describe('Args', () => {
  it('reads strings, optional strings, text, cell types and seconds', () => {
    const args = new Args({
      cell_id: 'a',
      before: null,
      source: '',
      cell_type: 'markdown',
      timeout: 2.5
    });
    assert.equal(args.string('cell_id'), 'a');
    assert.equal(args.optionalString('before'), undefined);
    assert.equal(args.optionalString('after'), undefined);
    assert.equal(args.text('source'), '');
    assert.equal(args.text('missing', 'fallback'), 'fallback');
    assert.equal(args.cellType('cell_type'), 'markdown');
    assert.equal(args.cellType('nope', 'code'), 'code');
    assert.equal(args.seconds('timeout'), 2.5);
    assert.equal(args.seconds('absent'), null);
    assert.equal(new Args({ timeout: 0 }).seconds('timeout'), null);
  });

  it('says which argument is wrong', () => {
    const bad = (argument: string, expected: string) => ({
      code: 'bad_argument',
      fields: { argument, expected }
    });
    assert.throws(
      () => new Args(undefined).string('cell_id'),
      bad('cell_id', 'a non-empty string')
    );
    assert.throws(
      () => new Args({ cell_id: '' }).string('cell_id'),
      bad('cell_id', 'a non-empty string')
    );
    assert.throws(
      () => new Args({ source: 3 }).text('source'),
      bad('source', 'a string')
    );
    assert.throws(
      () => new Args({ cell_type: 'heading' }).cellType('cell_type'),
      {
        code: 'bad_cell_type',
        fields: { cell_type: '"heading"' },
        message: 'unknown cell type "heading": use code, markdown or raw'
      }
    );
    assert.throws(
      () => new Args({ timeout: 'x' }).seconds('timeout'),
      bad('timeout', 'a number of seconds')
    );
    assert.throws(
      () => new Args({ before: 1 }).optionalString('before'),
      bad('before', 'a string')
    );
  });
});

describe('runResult', () => {
  const stdout = { output_type: 'stream', name: 'stdout', text: 'hi\n' };
  const error = {
    output_type: 'error',
    ename: 'ZeroDivisionError',
    evalue: 'division by zero',
    traceback: ['tb']
  };

  it('reports a cell that ran', () => {
    assert.deepEqual(
      runResult({
        reply: { status: 'ok', execution_count: 4 },
        cancelled: false,
        timedOut: false,
        executionCount: 4,
        outputs: [stdout]
      }),
      { status: 'ok', execution_count: 4, outputs: [stdout] }
    );
  });

  it('reports an error with its name, value and traceback', () => {
    assert.deepEqual(
      runResult({
        reply: {
          status: 'error',
          execution_count: 5,
          ename: 'ZeroDivisionError',
          evalue: 'division by zero',
          traceback: ['tb']
        },
        cancelled: false,
        timedOut: false,
        executionCount: 5,
        outputs: [error]
      }),
      {
        status: 'error',
        execution_count: 5,
        outputs: [error],
        error: {
          ename: 'ZeroDivisionError',
          evalue: 'division by zero',
          traceback: ['tb']
        }
      }
    );
  });

  it('says timeout when the timeout fired, with what the interrupt left', () => {
    const interrupted = { ...error, ename: 'KeyboardInterrupt', evalue: '' };
    const result = runResult({
      reply: {
        status: 'error',
        execution_count: 6,
        ename: 'KeyboardInterrupt',
        evalue: ''
      },
      cancelled: false,
      timedOut: true,
      executionCount: 6,
      outputs: [interrupted]
    });
    assert.equal(result.status, 'timeout');
    assert.equal(result.error?.ename, 'KeyboardInterrupt');
    // A cell that ignored the interrupt: no reply yet, still a timeout.
    assert.equal(
      runResult({
        reply: null,
        cancelled: false,
        timedOut: true,
        executionCount: null,
        outputs: []
      }).status,
      'timeout'
    );
  });

  it('says aborted for a cancelled execution or an aborted reply', () => {
    const base = { timedOut: false, executionCount: null, outputs: [] };
    assert.equal(
      runResult({ ...base, reply: null, cancelled: true }).status,
      'aborted'
    );
    assert.equal(
      runResult({ ...base, reply: { status: 'aborted' }, cancelled: false })
        .status,
      'aborted'
    );
  });

  it('reports an empty cell as run, without a count', () => {
    assert.deepEqual(
      runResult({
        reply: null,
        cancelled: false,
        timedOut: false,
        executionCount: null,
        outputs: []
      }),
      { status: 'ok', execution_count: null, outputs: [] }
    );
  });
});

describe('addressing', () => {
  it('answers requests without a recipient and those for this frontend', () => {
    assert.ok(isAddressedTo({ id: '1', op: 'ping' }, 'me'));
    assert.ok(isAddressedTo({ id: '1', op: 'ping', to: 'me' }, 'me'));
    assert.ok(!isAddressedTo({ id: '1', op: 'ping', to: 'other' }, 'me'));
    assert.ok(isAddressedTo(null, 'me')); // malformed: answered with the reason
  });

  it('defers a ping another client sent, nothing else', () => {
    assert.ok(!defersPing({ id: '1', op: 'ping' }, 'me', 'me'));
    assert.ok(defersPing({ id: '1', op: 'ping' }, 'other', 'me'));
    assert.ok(defersPing({ id: '1', op: 'ping' }, undefined, 'me'));
    assert.ok(!defersPing({ id: '1', op: 'insert' }, 'other', 'me'));
  });

  it('ping names the instance only for protocol 1 comms', () => {
    assert.deepEqual(pingResult({ path: 'a.ipynb', instance: 'i1' }, '9.9.9'), {
      path: 'a.ipynb',
      frontend: 'jupyterlab',
      version: '9.9.9',
      protocol: PROTOCOL_VERSION
    });
    assert.deepEqual(
      pingResult({ path: 'a.ipynb', instance: 'i1', protocol: 1 }, '9.9.9'),
      {
        path: 'a.ipynb',
        frontend: 'jupyterlab',
        version: '9.9.9',
        protocol: PROTOCOL_VERSION,
        instance: 'i1'
      }
    );
  });

  it('ping says which app answers: JupyterLab, or Notebook 7', () => {
    // The kernel names the app to the user ("live in Jupyter Notebook"): one build of
    // the extension runs in both, and tells them apart by the app's name.
    assert.equal(frontendOf('JupyterLab'), 'jupyterlab');
    assert.equal(frontendOf('Jupyter Notebook'), 'notebook');
    const target = { path: 'a.ipynb' };
    assert.equal(pingResult(target, '1', 'notebook').frontend, 'notebook');
    assert.equal(pingResult(target, '1').frontend, 'jupyterlab');
  });

  it("ping names the server's root folder when the page says it", () => {
    // A remote kernel compares it with its own folder: it runs where the notebook is, or not.
    const target = { path: 'work/g.ipynb' };
    assert.equal(
      pingResult(target, '1', 'jupyterlab', '/srv/lab').server_root,
      '/srv/lab'
    );
    assert.ok(!('server_root' in pingResult(target, '1', 'jupyterlab')));
  });

  it("ping says the extension checks a run's expected source", () => {
    // The kernel runs an approved cell only on a frontend that says so.
    assert.ok(PROTOCOL_VERSION >= 2);
    assert.equal(
      pingResult({ path: 'a.ipynb' }, '1').protocol,
      PROTOCOL_VERSION
    );
  });
});
