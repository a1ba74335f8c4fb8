/**
 * The DOM-free model (src/model.ts): path matching and the dispatch table.
 * Compiled to CommonJS by tsconfig.test.json and run with node's test runner.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import {
  OperationTable,
  normalisePath,
  notebookFor,
  panelModelId,
  pathsMatch
} from '../src/model';
import { BridgeErrors } from '../src/errors';
import type { IBridgeTarget } from '../src/tokens';

const target: IBridgeTarget = { path: 'work/a.ipynb' };

describe('normalisePath', () => {
  it('uses forward slashes and drops empty and dot segments', () => {
    assert.equal(normalisePath('work\\sub\\.\\a.ipynb'), 'work/sub/a.ipynb');
    assert.equal(normalisePath('/srv//work/./a.ipynb'), '/srv/work/a.ipynb');
    assert.equal(normalisePath('./a.ipynb'), 'a.ipynb');
  });

  it('drops a JupyterLab drive prefix but keeps a Windows drive letter', () => {
    assert.equal(normalisePath('RTC:work/a.ipynb'), 'work/a.ipynb');
    assert.equal(
      normalisePath('C:\\Users\\me\\a.ipynb'),
      'C:/Users/me/a.ipynb'
    );
  });
});

describe('notebookFor', () => {
  it('binds a comm to the notebook whose path matches the kernel path', () => {
    assert.equal(notebookFor('/srv/root/b.ipynb', ['a.ipynb', 'b.ipynb']), 1);
    assert.equal(notebookFor('c.ipynb', ['a.ipynb', 'b.ipynb']), -1);
  });

  it('binds a kernel that names no notebook (a remote one) to the only one open on it', () => {
    assert.equal(notebookFor('', ['work/g.ipynb']), 0);
    assert.equal(notebookFor('', []), -1);
    // Two notebooks on one kernel: no telling which is the agent's.
    assert.equal(notebookFor('', ['a.ipynb', 'b.ipynb']), -1);
  });
});

describe('pathsMatch', () => {
  it('matches equal paths and an absolute kernel path ending in the frontend path', () => {
    assert.ok(pathsMatch('work/a.ipynb', 'work/a.ipynb'));
    assert.ok(pathsMatch('/srv/root/work/a.ipynb', 'work/a.ipynb'));
    assert.ok(pathsMatch('C:\\srv\\root\\work\\a.ipynb', 'work/a.ipynb'));
    assert.ok(pathsMatch('a.ipynb', 'RTC:a.ipynb'));
    assert.ok(pathsMatch('/srv/root/sub dir/ä.ipynb', 'sub dir/ä.ipynb'));
  });

  it('matches either way round', () => {
    assert.ok(pathsMatch('work/a.ipynb', '/srv/root/work/a.ipynb'));
  });

  it('needs a whole segment', () => {
    assert.ok(!pathsMatch('/srv/root/xwork/a.ipynb', 'work/a.ipynb'));
    assert.ok(!pathsMatch('/srv/root/work/xa.ipynb', 'a.ipynb'));
  });

  it('refuses other files and empty paths', () => {
    assert.ok(!pathsMatch('/srv/root/work/b.ipynb', 'work/a.ipynb'));
    assert.ok(!pathsMatch('', 'a.ipynb'));
    assert.ok(!pathsMatch('a.ipynb', ''));
    assert.ok(!pathsMatch('/', '/'));
  });
});

describe('OperationTable', () => {
  const table = new OperationTable<IBridgeTarget>();
  table.register('echo', async (request, t) => ({
    path: t.path,
    got: request.op
  }));
  table.register('fail', async () => {
    throw new Error('the disk is full');
  });
  table.register('missing', async () => {
    throw BridgeErrors.no_cell('zz');
  });

  it('answers a known operation', async () => {
    assert.deepEqual(await table.dispatch({ id: '1', op: 'echo' }, target), {
      id: '1',
      ok: true,
      result: { path: 'work/a.ipynb', got: 'echo' }
    });
  });

  it('names an unknown operation', async () => {
    assert.deepEqual(
      await table.dispatch({ id: '2', op: 'frobnicate' }, target),
      {
        id: '2',
        ok: false,
        code: 'unknown_operation',
        op: 'frobnicate',
        message: 'unknown operation frobnicate'
      }
    );
  });

  it("sends a handler's BridgeError as its code and fields", async () => {
    assert.deepEqual(await table.dispatch({ id: '3', op: 'missing' }, target), {
      id: '3',
      ok: false,
      code: 'no_cell',
      cell_id: 'zz',
      message: 'no cell with id zz'
    });
  });

  it('sends any other handler error as failed, with its message', async () => {
    assert.deepEqual(await table.dispatch({ id: '3', op: 'fail' }, target), {
      id: '3',
      ok: false,
      code: 'failed',
      message: 'the disk is full'
    });
  });

  it('refuses malformed requests without calling a handler', async () => {
    assert.deepEqual(await table.dispatch({ op: 'echo' }, target), {
      id: null,
      ok: false,
      code: 'malformed_request',
      problem: 'no string "id"',
      message: 'malformed request: no string "id"'
    });
    assert.deepEqual(await table.dispatch({ id: '4' }, target), {
      id: '4',
      ok: false,
      code: 'malformed_request',
      problem: 'no string "op"',
      message: 'malformed request: no string "op"'
    });
    assert.deepEqual(await table.dispatch([1, 2], target), {
      id: null,
      ok: false,
      code: 'malformed_request',
      problem: 'not a JSON object',
      message: 'malformed request: not a JSON object'
    });
    assert.deepEqual(await table.dispatch(null, target), {
      id: null,
      ok: false,
      code: 'malformed_request',
      problem: 'not a JSON object',
      message: 'malformed request: not a JSON object'
    });
  });

  it('registers an operation once, and disposing removes it', async () => {
    assert.throws(
      () => table.register('echo', async () => null),
      /already registered/
    );
    const extra = table.register('extra', async () => null);
    assert.deepEqual(table.operations, ['echo', 'extra', 'fail', 'missing']);
    extra.dispose();
    assert.deepEqual(table.operations, ['echo', 'fail', 'missing']);
  });
});

describe('panelModelId', () => {
  it("reads the widget id from the kernel's repr of a string", () => {
    assert.equal(
      panelModelId({
        status: 'ok',
        data: { 'text/plain': "'3f2a9c'" },
        metadata: {}
      }),
      '3f2a9c'
    );
  });

  it('says the package is missing when the import fails', () => {
    assert.throws(
      () =>
        panelModelId({
          status: 'error',
          ename: 'ModuleNotFoundError',
          evalue: "No module named 'jupyter_agent'"
        }),
      /not installed in this notebook's kernel/
    );
  });

  it('passes any other kernel error on, named', () => {
    assert.throws(
      () =>
        panelModelId({
          status: 'error',
          ename: 'RuntimeError',
          evalue: 'boom'
        }),
      /RuntimeError: boom/
    );
  });

  it('refuses an answer that is not a quoted id', () => {
    assert.throws(
      () => panelModelId({ status: 'ok', data: { 'text/plain': 'None' } }),
      /answered "None"/
    );
    assert.throws(() => panelModelId(undefined), /did not evaluate/);
  });
});
