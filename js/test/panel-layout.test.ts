/**
 * The panel at narrow widths (src/panel/layout.ts): its secondary controls and the
 * notebook line fold into a menu right after the header, opened by the header's button,
 * and go back below the input when the panel is wide again, keeping focus where it was.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { FoldingControls } from '../src/panel/layout';
import { fake, fakeDocument, FakeElement, install } from './fakedom';

install();

function panel() {
  const el = (cls: string) => {
    const e = new FakeElement('div');
    e.setAttribute('class', cls);
    return e;
  };
  const [header, notebookLine, notes, transcript, input] = [
    'ja-header',
    'ja-notebook',
    'ja-model-notes',
    'ja-transcript',
    'ja-input'
  ].map(el);
  const controls = el('ja-controls');
  const search = el('ja-session-search-box');
  const focusable = new FakeElement('select');
  controls.append(focusable);
  const root = el('ja-panel');
  root.append(header, notebookLine, notes, transcript, input);
  const folding = new FoldingControls(
    {
      root: root as unknown as HTMLElement,
      header: header as unknown as HTMLElement,
      wideAfter: input as unknown as HTMLElement,
      notebookLine: notebookLine as unknown as HTMLElement,
      parts: [controls, search] as unknown as HTMLElement[]
    },
    'ja-more-v'
  );
  const order = () => root.children.map(c => c.getAttribute('class'));
  return { root, folding, order, focusable, notebookLine };
}

describe('the panel at narrow widths', () => {
  it('starts wide: the controls below the input, no menu button', () => {
    const { folding, order } = panel();
    assert.deepEqual(order(), [
      'ja-header',
      'ja-notebook',
      'ja-model-notes',
      'ja-transcript',
      'ja-input',
      'ja-more'
    ]);
    assert.equal(fake(folding.button).hasAttribute('hidden'), true);
    assert.equal(fake(folding.menu).hasAttribute('hidden'), false);
  });

  it('folds the controls and the notebook line into a closed menu after the header', () => {
    const { root, folding, order } = panel();
    folding.fit(true);
    assert.equal(root.hasAttribute('data-narrow'), true);
    assert.deepEqual(order(), [
      'ja-header',
      'ja-more',
      'ja-model-notes',
      'ja-transcript',
      'ja-input'
    ]);
    const menu = fake(folding.menu);
    assert.deepEqual(
      menu.children.map(c => c.getAttribute('class')),
      ['ja-notebook', 'ja-controls', 'ja-session-search-box']
    );
    assert.equal(menu.hasAttribute('hidden'), true);
    const button = fake(folding.button);
    assert.equal(button.hasAttribute('hidden'), false);
    assert.equal(button.getAttribute('aria-expanded'), 'false');
    assert.equal(button.getAttribute('aria-controls'), 'ja-more-v');
    assert.equal(menu.getAttribute('id'), 'ja-more-v');
  });

  it('opens and closes the menu from its button', () => {
    const { folding } = panel();
    folding.fit(true);
    const button = fake(folding.button);
    button.click();
    assert.equal(button.getAttribute('aria-expanded'), 'true');
    assert.equal(fake(folding.menu).hasAttribute('hidden'), false);
    button.click();
    assert.equal(button.getAttribute('aria-expanded'), 'false');
    assert.equal(fake(folding.menu).hasAttribute('hidden'), true);
  });

  it('puts everything back when wide again, and keeps the focus', () => {
    const { root, folding, order, focusable } = panel();
    folding.fit(true);
    folding.toggle(true);
    focusable.focus();
    folding.fit(false);
    assert.equal(fakeDocument.activeElement, focusable);
    assert.equal(root.hasAttribute('data-narrow'), false);
    assert.deepEqual(order(), [
      'ja-header',
      'ja-notebook',
      'ja-model-notes',
      'ja-transcript',
      'ja-input',
      'ja-more'
    ]);
    assert.equal(fake(folding.menu).hasAttribute('hidden'), false);
    assert.equal(fake(folding.button).hasAttribute('hidden'), true);
  });
});
