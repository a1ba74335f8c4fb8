/**
 * The panel's wire types are defined once, in jupyter_agent/jupyter/panel/protocol.py:
 * src/panel/wire.ts is what scripts/wire.js makes of its JSON Schema, and the transcript
 * handles every entry kind the schema names (panel-transcript.test.ts: an unknown kind is an
 * error in strict mode).
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { CONTROL_TOOLS } from '../src/panel/wire';
import { Transcript, UnknownEntryError } from '../src/panel/transcript';
import type { TranscriptEntry } from '../src/panel/types';
import { FakeElement, install } from './fakedom';

install();

const generator = require('../../scripts/wire.js') as {
  TARGET: string;
  readSchema(): {
    $defs: Record<
      string,
      { oneOf?: { $ref: string }[]; properties?: Record<string, any> }
    >;
    'x-constants': Record<string, unknown>;
  };
  render(schema: unknown): Promise<string>;
};

const schema = generator.readSchema();

/** Every entry kind the schema defines, with a minimal entry of that kind. */
function entriesOfEveryKind(): TranscriptEntry[] {
  const union = schema.$defs.TranscriptEntry.oneOf ?? [];
  return union.map(({ $ref }) => {
    const definition = schema.$defs[$ref.split('/').pop() as string];
    const kind = definition.properties?.kind.const as string;
    return { kind } as TranscriptEntry;
  });
}

describe('the panel wire protocol', () => {
  it('src/panel/wire.ts is what the schema gives (run `npm run build:wire`)', async () => {
    const expected = await generator.render(schema);
    assert.equal(readFileSync(generator.TARGET, 'utf8'), expected);
  });

  it('shares the control tools with the kernel', () => {
    assert.deepEqual(
      [...CONTROL_TOOLS],
      schema['x-constants'].CONTROL_TOOLS as string[]
    );
    assert.ok(CONTROL_TOOLS.includes('submit_plan'));
  });

  it('the transcript has a case for every kind of entry the schema names', () => {
    const actions = {
      command: async () => ({}),
      busy: () => false,
      error: () => undefined
    };
    const kinds = entriesOfEveryKind();
    assert.ok(kinds.length > 25, `only ${kinds.length} kinds`);
    for (const entry of kinds) {
      const transcript = new Transcript(
        new FakeElement('div') as unknown as HTMLElement,
        actions,
        true
      );
      // A minimal entry may lack fields a renderer reads; what must never happen is an
      // UnknownEntryError: every kind the kernel may send has its case.
      try {
        transcript.apply(entry);
      } catch (error) {
        assert.ok(
          !(error instanceof UnknownEntryError),
          `kind ${entry.kind} is not handled`
        );
      }
    }
  });
});
