/**
 * The header's status line (src/panel/status-text.ts) says a stop as the user took it:
 * "stopped" after their Stop, the kernel's words after a limit, never a reason's code.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { statusText } from '../src/panel/status-text';
import type { PanelState } from '../src/panel/types';

function status(traits: Partial<PanelState>): string {
  return statusText({
    get: name => (traits as PanelState)[name]
  });
}

describe('the status line', () => {
  it('says "stopped" after the user\'s Stop, not "stopped: Stopped by the user."', () => {
    const traits = {
      status: 'cancelled',
      detail: 'Stopped by the user.',
      busy: false
    } as const;
    assert.equal(status({ ...traits, stop_reason: 'manual_stop' }), 'stopped');
    // The state comes a moment before the reason: no flash of the sentence meanwhile.
    assert.equal(status({ ...traits, stop_reason: '' }), 'stopped');
  });

  it("says which limit stopped a run, in the kernel's words", () => {
    assert.equal(
      status({
        status: 'cancelled',
        detail: 'Reached the limit of 30 steps.',
        stop_reason: 'iteration_limit'
      }),
      'stopped: Reached the limit of 30 steps.'
    );
    assert.equal(
      status({ status: 'cancelled', detail: '', stop_reason: 'time_limit' }),
      'stopped: time limit'
    );
  });
});
