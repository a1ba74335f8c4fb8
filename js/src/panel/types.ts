/**
 * The panel's wire types, as jupyter_agent/jupyter/panel.py sends and reads them today:
 * transcript entries (events as EventAdapter dumps them, minus session_id, seq and time,
 * plus n), the custom messages that carry them, and the commands the view sends.
 */

/** Fields every entry may carry. */
interface IEntryBase {
  /** The entry's place in the panel's log: a view drops what it already has. */
  n?: number;
  run_id?: string;
}

export interface IPlanStep {
  step_number: number;
  action: string;
  reason?: string;
  tools_needed?: string[];
  estimated_time?: string;
}

export interface IPlan {
  goal: string;
  steps: IPlanStep[];
  estimated_total_time?: string;
  risks?: string[];
  prerequisites?: string[];
}

export interface IQuestionOption {
  label: string;
  value: string;
  description?: string;
}

export interface IQuestion {
  question: string;
  severity: string;
  context?: string;
  options?: IQuestionOption[];
  default?: string | null;
  allow_custom?: boolean;
}

type Entry<K extends string, F> = IEntryBase & { kind: K } & F;

/** What a transcript shows: every event kind but state and usage, plus the panel's own. */
export type TranscriptEntry =
  | Entry<'user', { text: string }>
  | Entry<'note', { text: string }>
  | Entry<
      'agent_start',
      { task: string; role: string; model: string; model_label?: string | null }
    >
  | Entry<'turn_start', { step?: number }>
  | Entry<'text_delta', { text: string; phase?: string | null }>
  | Entry<
      'text',
      {
        text?: string;
        phase?: string | null;
        interrupted?: boolean;
        streamed?: boolean;
      }
    >
  | Entry<'thinking_delta', { text: string }>
  | Entry<'reason', { control?: unknown }>
  | Entry<'observe', { control?: unknown }>
  | Entry<'retry', { reason: string }>
  | Entry<
      'tool_start',
      { tool_use_id: string; name: string; input: unknown; summary?: string }
    >
  | Entry<'tool_progress', { tool_use_id: string; output: string }>
  | Entry<
      'tool_end',
      {
        tool_use_id: string;
        name: string;
        result: string;
        is_error?: boolean;
        duration?: number;
        diff?: string | null;
      }
    >
  | Entry<'plan', { plan: IPlan }>
  | Entry<'plan_step', { step_number: number; status: string; note?: string }>
  | Entry<'plan_stopped', Record<never, never>>
  | Entry<'question', { question_id: string; question: IQuestion }>
  | Entry<
      'answer',
      { question_id: string; value: string; label?: string | null }
    >
  | Entry<'request_input_timeout', { question_id: string; timeout: number }>
  | Entry<
      'permission_request',
      {
        request_id: string;
        tool_name: string;
        summary: string;
        reason?: string;
        input?: unknown;
        warnings?: string[];
        remember?: string | null;
      }
    >
  | Entry<
      'permission_response',
      {
        request_id: string;
        allowed: boolean;
        remember?: boolean;
        rule?: string | null;
      }
    >
  | Entry<'update', { message: string }>
  | Entry<'warning', { message: string; action?: string | null }>
  | Entry<'stopped', { reason: string; message?: string }>
  | Entry<'completed', { summary?: string }>
  | Entry<'error', { message: string; error_type?: string }>
  | Entry<'subagent_spawned', { agent_type: string; task?: string }>
  | Entry<
      'subagent_output',
      { event?: { kind?: string; summary?: string; name?: string } }
    >
  | Entry<'subagent_complete', { state?: string; result?: string | null }>;

export type EntryKind = TranscriptEntry['kind'];

/** The entry of one kind. */
export type EntryOf<K extends EntryKind> = Extract<
  TranscriptEntry,
  { kind: K }
>;

/** Custom messages from the kernel. */
export type KernelMessage =
  | { type: 'reply'; id: string; ok: boolean; error?: string | null }
  | { type: 'snapshot'; view: string | null; entries?: TranscriptEntry[] }
  | { type: 'events'; entries?: TranscriptEntry[] }
  | { type: 'text'; n?: number; text: string };

/** Commands from the view, each answered by a reply with its id. */
export interface ICommandArgs {
  send: { text: string; role: string };
  stop: Record<string, never>;
  answer: { question_id: string; value: string };
  approve: { request_id: string; allow: boolean; remember: boolean };
  execute_plan: Record<string, never>;
  set_role: { role: string };
  set_max_steps: { value: number };
  resume: { session_id: string };
  trust: Record<string, never>;
}

export type CommandName = keyof ICommandArgs;

/** What the transcript asks of the view around it. */
export interface ITranscriptActions {
  command<K extends CommandName>(
    name: K,
    args?: ICommandArgs[K]
  ): Promise<unknown>;
  busy(): boolean;
  error(text: string): void;
}
