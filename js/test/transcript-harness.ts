/**
 * A transcript on the fake DOM that records the commands its cards send: what the
 * approval and subagent tests drive.
 */
import { Transcript } from '../src/panel/transcript';
import type { TranscriptEntry } from '../src/panel/types';
import { FakeElement } from './fakedom';

export function transcriptHarness() {
  const root = new FakeElement('div');
  const commands: [string, unknown][] = [];
  const transcript = new Transcript(
    root as unknown as HTMLElement,
    {
      command: (name, args) => {
        commands.push([name, args]);
        return Promise.resolve({ ok: true });
      },
      busy: () => false,
      error: () => undefined
    },
    true
  );
  return {
    root,
    commands,
    apply: (...entries: TranscriptEntry[]) =>
      entries.forEach(e => transcript.apply(e)),
    find: (selector: string) => root.querySelectorAll(selector)
  };
}
