/**
 * The menu pattern (src/panel/menu.ts): the keys that move focus among a menu's items,
 * wrapping at its ends, and nothing else taken for a move.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { menuMove } from '../src/panel/menu';

describe('the keys of a menu', () => {
  it('move down and up, wrapping at the ends', () => {
    assert.equal(menuMove('ArrowDown', 0, 3), 1);
    assert.equal(menuMove('ArrowDown', 2, 3), 0);
    assert.equal(menuMove('ArrowUp', 1, 3), 0);
    assert.equal(menuMove('ArrowUp', 0, 3), 2);
  });

  it('go to the first and the last item with Home and End', () => {
    assert.equal(menuMove('Home', 2, 3), 0);
    assert.equal(menuMove('End', 0, 3), 2);
  });

  it('start at an end when no item has focus', () => {
    assert.equal(menuMove('ArrowDown', -1, 3), 0);
    assert.equal(menuMove('ArrowUp', -1, 3), 2);
  });

  it('leave other keys, and an empty menu, alone', () => {
    for (const key of ['Tab', 'Enter', ' ', 'a', 'ArrowLeft', 'Escape'])
      assert.equal(menuMove(key, 0, 3), null, key);
    assert.equal(menuMove('ArrowDown', -1, 0), null);
  });
});
