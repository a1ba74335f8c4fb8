/**
 * The protocol is defined once, in jupyter_agent/jupyter/bridge/bridge_protocol.json:
 * src/protocol.ts is what scripts/protocol.js makes of it, and every error
 * code has one constructor (src/errors.ts) that sends the code's fields.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { BridgeError, BridgeErrors, asBridgeError } from '../src/errors';
import { ERROR_CODES, OPERATIONS } from '../src/protocol';

const generator = require('../../scripts/protocol.js') as {
  SOURCE: string;
  TARGET: string;
  readSpec(): {
    operations: Record<string, string>;
    errors: Record<string, { fields: Record<string, string> }>;
  };
  render(spec: unknown): Promise<string>;
};

const spec = generator.readSpec();

/** A constructor's arguments: a string for each parameter. */
function make(code: string): BridgeError {
  const construct = (
    BridgeErrors as unknown as Record<
      string,
      (...args: string[]) => BridgeError
    >
  )[code];
  return construct(
    ...Array.from({ length: construct.length }, (_, i) => `v${i}`)
  );
}

describe('the protocol', () => {
  it('src/protocol.ts is what the JSON gives (run `npm run build:protocol`)', async () => {
    const expected = await generator.render(spec);
    assert.equal(readFileSync(generator.TARGET, 'utf8'), expected);
  });

  it('lists the JSON operations and error codes', () => {
    assert.deepEqual([...OPERATIONS], Object.keys(spec.operations));
    assert.deepEqual([...ERROR_CODES], Object.keys(spec.errors));
  });

  it('has one constructor per error code, sending exactly its fields', () => {
    assert.deepEqual(Object.keys(BridgeErrors).sort(), [...ERROR_CODES].sort());
    for (const code of ERROR_CODES) {
      const error = make(code);
      assert.ok(error instanceof Error);
      assert.equal(error.code, code);
      const body = error.body();
      assert.deepEqual(
        Object.keys(body).sort(),
        ['code', 'message', ...Object.keys(spec.errors[code].fields)].sort(),
        code
      );
      assert.ok(body.message.length > 0, code);
      for (const name of Object.keys(spec.errors[code].fields)) {
        assert.equal(typeof body[name], 'string', `${code}.${name}`);
      }
    }
  });

  it('carries the fields the kernel words its errors with', () => {
    assert.deepEqual(BridgeErrors.not_code('m', 'markdown').body(), {
      code: 'not_code',
      cell_id: 'm',
      cell_type: 'markdown',
      message: 'cell m is a markdown cell; only code cells run'
    });
    assert.deepEqual(BridgeErrors.bad_cell_type('text').body(), {
      code: 'bad_cell_type',
      cell_type: '"text"',
      message: 'unknown cell type "text": use code, markdown or raw'
    });
    assert.deepEqual(BridgeErrors.path_mismatch().body().code, 'path_mismatch');
  });

  it('sends any other error as failed, keeping its message', () => {
    const error = BridgeErrors.duplicate_id('a');
    assert.equal(asBridgeError(error), error);
    assert.deepEqual(asBridgeError(new TypeError('boom')).body(), {
      code: 'failed',
      message: 'boom'
    });
    assert.deepEqual(asBridgeError('plain').body(), {
      code: 'failed',
      message: 'plain'
    });
    assert.equal(asBridgeError(new Error('')).message, 'operation failed');
  });
});
