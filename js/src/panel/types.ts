/**
 * The panel's wire types, named for the view's code. Every type comes from wire.ts,
 * generated from jupyter_agent/jupyter/panel/protocol.py: a field or an entry kind the
 * kernel adds reaches the compiler here, and the transcript's `switch` fails to compile
 * until it handles a new kind.
 */
import type { Command, TranscriptEntry } from './wire';

export type {
  FoundSession,
  KernelMessage,
  PanelContext,
  PanelState,
  PanelUsage,
  Plan,
  PlanStep,
  Question,
  QuestionOption,
  Reply,
  TranscriptEntry,
  TrustDetail,
  TrustEffect,
  TrustPrompt
} from './wire';

export type EntryKind = TranscriptEntry['kind'];

/** The entry of one kind. */
export type EntryOf<K extends EntryKind> = Extract<
  TranscriptEntry,
  { kind: K }
>;

export type CommandName = Command['name'];

/** A command's arguments: what the view fills in besides its envelope. */
export type CommandArgs<K extends CommandName> = Omit<
  Extract<Command, { name: K }>,
  'type' | 'id' | 'name'
>;

/** What the transcript asks of the view around it. */
export interface ITranscriptActions {
  command<K extends CommandName>(
    name: K,
    args?: CommandArgs<K>
  ): Promise<unknown>;
  busy(): boolean;
  error(text: string): void;
  /**
   * Where focus goes after an action that ends a card's use (an answer, Allow or Deny,
   * Execute plan, Retry): the message input, which stays usable while the agent works.
   * Without it, the transcript itself.
   */
  focusInput?(): void;
}
