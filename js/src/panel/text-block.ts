/**
 * A block of the model's text as it streams: the part already final is rendered once,
 * the paragraph being written again each frame, and the whole text once more when the
 * block ends (so markdown that spans paragraphs comes out right).
 */
import { h } from './dom';
import { FENCE, isBlank, renderMarkdown } from './markdown';

export interface ITextBlock {
  el: HTMLElement;
  /** The part rendered once and for all. */
  done: HTMLElement;
  /** The paragraph being written, rendered again each frame. */
  tail: HTMLElement;
  phase: string | null;
  text: string;
  doneLength: number;
  scanned: number;
  cut: number;
  fence: string | null;
}

/** A new, empty block (the caller puts `el` in the transcript). */
export function textBlock(phase: string | null): ITextBlock {
  // Hidden from screen readers while it streams: the transcript is a live log, and a
  // block re-rendered each frame would be read out piece by piece (aria-busy, meant for
  // this, is ignored by several screen readers for live regions). finishText() shows it
  // and renders it once more, so the log announces the whole block when it ends.
  const el = h('div', { class: 'ja-text', 'aria-hidden': 'true' });
  if (phase) el.append(h('div', { class: 'ja-phase', text: phase }));
  const done = h('div');
  const tail = h('div');
  el.append(done, tail);
  return {
    el,
    done,
    tail,
    phase,
    text: '',
    doneLength: 0,
    scanned: 0,
    cut: 0,
    fence: null
  };
}

/** The block ended: its whole text, rendered once. */
export function finishText(block: ITextBlock): void {
  block.el.removeAttribute('aria-hidden');
  block.done.replaceChildren(renderMarkdown(block.text));
  block.tail.replaceChildren();
  block.doneLength = block.text.length;
}

/**
 * Renders what streamed since the last call: everything before the last blank line
 * outside a code fence is final and rendered once; only the paragraph being written is
 * rendered again each frame.
 */
export function renderStreaming(block: ITextBlock): void {
  const text = block.text;
  let pos = block.scanned;
  for (;;) {
    const end = text.indexOf('\n', pos);
    if (end < 0) break;
    const line = text.slice(pos, end);
    const fence = FENCE.exec(line);
    if (fence) {
      if (block.fence === null) block.fence = fence[1][0];
      else if (
        line.trim()[0] === block.fence &&
        line.trim().replace(/[`~]/g, '') === ''
      )
        block.fence = null;
    } else if (block.fence === null && isBlank(line)) {
      block.cut = end + 1;
    }
    pos = end + 1;
  }
  block.scanned = pos;
  if (block.cut > block.doneLength) {
    block.done.append(renderMarkdown(text.slice(block.doneLength, block.cut)));
    block.doneLength = block.cut;
  }
  block.tail.replaceChildren(renderMarkdown(text.slice(block.doneLength)));
}
