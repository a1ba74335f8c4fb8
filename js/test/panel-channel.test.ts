/**
 * A view's messages to the kernel (src/panel/channel.ts): offered to the lab extension as
 * a DOM event; sent through the widget's comm when nobody takes it; one line says so when
 * no message can go over a subshell, shown only once that is known.
 */
import { strict as assert } from 'node:assert';
import { afterEach, describe, it } from 'node:test';

import { CONTROL_EVENT, KernelChannel } from '../src/panel/channel';
import type { IControlDetail } from '../src/panel/channel';
import { fakeDocument, install } from './fakedom';

install();

let taker: ((event: Event) => void) | null = null;

/** The lab extension, as far as the view sees it: takes the event and says how it sends. */
function extension(answer: (detail: IControlDetail) => void): IControlDetail[] {
  const taken: IControlDetail[] = [];
  taker = event => {
    const detail = (event as CustomEvent<IControlDetail>).detail;
    event.preventDefault();
    answer(detail);
    taken.push(detail);
  };
  fakeDocument.addEventListener(CONTROL_EVENT, taker);
  return taken;
}

afterEach(() => {
  if (taker) fakeDocument.removeEventListener(CONTROL_EVENT, taker);
  taker = null;
});

function channel(kernelId = 'kernel-1', commId = 'comm-1') {
  const sent: Record<string, unknown>[] = [];
  const made = new KernelChannel(
    () => ({ kernelId, commId }),
    message => void sent.push(message)
  );
  return { channel: made, sent };
}

describe('KernelChannel', () => {
  it('sends through the widget comm when nobody takes the event, and says so once', () => {
    const { channel: c, sent } = channel();
    c.send({ type: 'hello' });
    c.send({ type: 'command', id: '1' });
    assert.deepEqual(sent, [{ type: 'hello' }, { type: 'command', id: '1' }]);
    assert.equal(c.note.hidden, false);
    assert.match(c.note.textContent ?? '', /no subshells/);
  });

  it('does not ask the extension before the kernel and comm ids are known', () => {
    const taken = extension(detail => (detail.subshell = true));
    const { channel: c, sent } = channel('', 'comm-1');
    c.send({ type: 'hello' });
    assert.deepEqual(taken, []);
    assert.deepEqual(sent, [{ type: 'hello' }]);
  });

  it('hands the message to the extension, which sends it over a subshell', () => {
    const taken = extension(detail => (detail.subshell = true));
    const { channel: c, sent } = channel();
    c.send({ type: 'hello', view: 'v' });
    assert.deepEqual(sent, []);
    assert.deepEqual(
      taken.map(d => [d.kernelId, d.commId, d.message]),
      [['kernel-1', 'comm-1', { type: 'hello', view: 'v' }]]
    );
    assert.equal(c.note.hidden, true);
  });

  it('says nothing while the subshell is pending, and speaks if there is none', async () => {
    let answer: (subshell: boolean) => void = () => undefined;
    const known = new Promise<boolean>(resolve => (answer = resolve));
    extension(detail => {
      detail.subshell = 'pending';
      detail.known = known;
    });
    const { channel: c, sent } = channel();
    c.send({ type: 'hello' });
    assert.equal(c.note.hidden, true);
    answer(false);
    await known;
    assert.equal(c.note.hidden, false);
    assert.deepEqual(sent, [], 'the extension sent it, on the main shell');
  });
});
