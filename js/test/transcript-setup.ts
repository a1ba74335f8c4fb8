/**
 * A transcript on the fake DOM with its callbacks recorded (the commands its cards send,
 * the errors it reports): what the transcript's own tests drive (panel-transcript,
 * panel-transcript-screen-reader, panel-cell-references). A command can be made to fail.
 */
import { Transcript } from '../src/panel/transcript';
import type { TranscriptEntry } from '../src/panel/types';
import { FakeElement } from './fakedom';

export interface ISetup {
  root: FakeElement;
  transcript: Transcript;
  commands: [string, unknown][];
  errors: string[];
  apply(...entries: TranscriptEntry[]): void;
  find(selector: string): FakeElement[];
}

export function setup(options: { busy?: boolean; fail?: string } = {}): ISetup {
  const root = new FakeElement('div');
  const commands: [string, unknown][] = [];
  const errors: string[] = [];
  const transcript = new Transcript(
    root as unknown as HTMLElement,
    {
      command: (name, args) => {
        commands.push([name, args]);
        return options.fail
          ? Promise.reject(new Error(options.fail))
          : Promise.resolve({ ok: true });
      },
      busy: () => options.busy ?? false,
      error: text => errors.push(text)
    },
    true
  );
  return {
    root,
    transcript,
    commands,
    errors,
    apply: (...entries) => entries.forEach(e => transcript.apply(e)),
    find: selector => root.querySelectorAll(selector)
  };
}
