/**
 * The panel's wire protocol: transcript entries, the messages each side sends and the
 * synced traits. Generated from jupyter_agent/jupyter/panel/protocol.py's JSON Schema
 * (panel_protocol.json) by scripts/wire.js (`npm run build:wire`). Do not edit:
 * test/wire.test.ts fails when this file is not what the schema gives.
 */

/**
 * How a tool call ended, for code that branches on it (the result's text is for
 * the model and people).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ToolOutcome".
 */
export type ToolOutcome = 'ok' | 'error' | 'denied' | 'interrupted' | 'stopped';
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "AgentState".
 */
export type AgentState =
  | 'idle'
  | 'running'
  | 'thinking'
  | 'tool_executing'
  | 'waiting_user'
  | 'paused'
  | 'completed'
  | 'cancelled'
  | 'error';
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "TranscriptEntry".
 */
export type TranscriptEntry =
  | AgentStartEvent
  | TurnStartEvent
  | TextDeltaEvent
  | TextEvent
  | ThinkingDeltaEvent
  | ReasonEvent
  | ObserveEvent
  | ToolStartEvent
  | ToolProgressEvent
  | ToolEndEvent
  | PlanEvent
  | PlanStepEvent
  | QuestionEvent
  | AnswerEvent
  | RequestInputTimeoutEvent
  | PermissionRequestEvent
  | PermissionResponseEvent
  | UpdateEvent
  | CompactionEvent
  | RetryEvent
  | WarningEvent
  | StoppedEvent
  | CompletedEvent
  | ErrorEvent
  | SubagentSpawnedEvent
  | SubagentOutputEvent
  | SubagentCompleteEvent
  | UserEntry
  | NoteEntry
  | TextEndEntry
  | PlanStoppedEntry
  | TrustedEntry;
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "Command".
 */
export type Command =
  | SendCommand
  | StopCommand
  | PauseCommand
  | UnpauseCommand
  | AnswerCommand
  | ApproveCommand
  | ExecutePlanCommand
  | SetRoleCommand
  | SetModelCommand
  | SetMaxStepsCommand
  | ResumeCommand
  | SessionsCommand
  | SearchSessionsCommand
  | TrustCommand
  | SetKeyCommand
  | RetryCommand
  | CompactCommand;
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "KernelMessage".
 */
export type KernelMessage = Reply | Snapshot | Events | StreamedText;
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ViewMessage".
 */
export type ViewMessage = Hello | Command;

/**
 * The roots of the schema (this type itself is never sent).
 */
export interface PanelProtocol {
  entry:
    | AgentStartEvent
    | TurnStartEvent
    | TextDeltaEvent
    | TextEvent
    | ThinkingDeltaEvent
    | ReasonEvent
    | ObserveEvent
    | ToolStartEvent
    | ToolProgressEvent
    | ToolEndEvent
    | PlanEvent
    | PlanStepEvent
    | QuestionEvent
    | AnswerEvent
    | RequestInputTimeoutEvent
    | PermissionRequestEvent
    | PermissionResponseEvent
    | UpdateEvent
    | CompactionEvent
    | RetryEvent
    | WarningEvent
    | StoppedEvent
    | CompletedEvent
    | ErrorEvent
    | SubagentSpawnedEvent
    | SubagentOutputEvent
    | SubagentCompleteEvent
    | UserEntry
    | NoteEntry
    | TextEndEntry
    | PlanStoppedEntry
    | TrustedEntry;
  kernel_message: Reply | Snapshot | Events | StreamedText;
  state: PanelState;
  view_message: Hello | Command;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "AgentStartEvent".
 */
export interface AgentStartEvent {
  action?: ('execute_plan' | 'compact') | null;
  kind: 'agent_start';
  loop: string;
  max_steps: number;
  model: string;
  model_label?: string | null;
  /**
   * The entry's place in the log.
   */
  n?: number;
  replay?: boolean;
  role: string;
  run_id?: string;
  task: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "TurnStartEvent".
 */
export interface TurnStartEvent {
  kind: 'turn_start';
  /**
   * The entry's place in the log.
   */
  n?: number;
  run_id?: string;
  step: number;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "TextDeltaEvent".
 */
export interface TextDeltaEvent {
  kind: 'text_delta';
  /**
   * The entry's place in the log.
   */
  n?: number;
  phase?: string | null;
  run_id?: string;
  text: string;
}
/**
 * A text block finished streaming (or was cut off, ``interrupted``).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "TextEvent".
 */
export interface TextEvent {
  interrupted?: boolean;
  kind: 'text';
  /**
   * The entry's place in the log.
   */
  n?: number;
  phase?: string | null;
  run_id?: string;
  text: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ThinkingDeltaEvent".
 */
export interface ThinkingDeltaEvent {
  kind: 'thinking_delta';
  /**
   * The entry's place in the log.
   */
  n?: number;
  run_id?: string;
  text: string;
}
/**
 * The reason phase of the reason → act → observe loop.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ReasonEvent".
 */
export interface ReasonEvent {
  control?: {
    [k: string]: unknown;
  } | null;
  kind: 'reason';
  /**
   * The entry's place in the log.
   */
  n?: number;
  run_id?: string;
  step: number;
  text: string;
}
/**
 * The observe phase of the reason → act → observe loop.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ObserveEvent".
 */
export interface ObserveEvent {
  control?: {
    [k: string]: unknown;
  } | null;
  kind: 'observe';
  /**
   * The entry's place in the log.
   */
  n?: number;
  run_id?: string;
  step: number;
  text: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ToolStartEvent".
 */
export interface ToolStartEvent {
  input: {
    [k: string]: unknown;
  };
  kind: 'tool_start';
  /**
   * The entry's place in the log.
   */
  n?: number;
  name: string;
  run_id?: string;
  summary: string;
  tool_use_id: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ToolProgressEvent".
 */
export interface ToolProgressEvent {
  kind: 'tool_progress';
  /**
   * The entry's place in the log.
   */
  n?: number;
  output: string;
  run_id?: string;
  tool_use_id: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ToolEndEvent".
 */
export interface ToolEndEvent {
  data?: {
    [k: string]: unknown;
  } | null;
  diff?: string | null;
  duration?: number;
  error_line?: string | null;
  is_error?: boolean;
  kind: 'tool_end';
  /**
   * The entry's place in the log.
   */
  n?: number;
  name: string;
  outcome?: ToolOutcome;
  result: string;
  run_id?: string;
  tool_use_id: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "PlanEvent".
 */
export interface PlanEvent {
  kind: 'plan';
  /**
   * The entry's place in the log.
   */
  n?: number;
  plan: Plan;
  run_id?: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "Plan".
 */
export interface Plan {
  /**
   * Total time estimate.
   */
  estimated_total_time?: string;
  format_version?: string;
  /**
   * The user's objective in one or two sentences.
   */
  goal: string;
  /**
   * What the user must prepare first.
   */
  prerequisites?: string[];
  /**
   * What could go wrong.
   */
  risks?: string[];
  /**
   * Ordered steps.
   *
   * @minItems 1
   */
  steps: [PlanStep, ...PlanStep[]];
  type?: 'plan';
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "PlanStep".
 */
export interface PlanStep {
  /**
   * What will be done, in one sentence.
   */
  action: string;
  /**
   * Rough estimate, e.g. '~1 minute'.
   */
  estimated_time?: string;
  /**
   * Why this step is needed.
   */
  reason?: string;
  /**
   * 1-based position of the step in the plan.
   */
  step_number: number;
  /**
   * Tools the step will use.
   */
  tools_needed?: string[];
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "PlanStepEvent".
 */
export interface PlanStepEvent {
  kind: 'plan_step';
  /**
   * The entry's place in the log.
   */
  n?: number;
  note?: string;
  run_id?: string;
  status: 'pending' | 'in_progress' | 'done' | 'skipped';
  step_number: number;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "QuestionEvent".
 */
export interface QuestionEvent {
  kind: 'question';
  /**
   * The entry's place in the log.
   */
  n?: number;
  question: Question;
  question_id: string;
  run_id?: string;
  timeout?: number | null;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "Question".
 */
export interface Question {
  /**
   * Also accept a free-text answer.
   */
  allow_custom?: boolean;
  /**
   * Why you ask / what you found.
   */
  context?: string;
  /**
   * Value of the recommended option.
   */
  default?: string | null;
  format_version?: string;
  /**
   * Choices shown as buttons. Leave empty to ask for free text.
   */
  options?: QuestionOption[];
  /**
   * The question, clear and self-contained.
   */
  question: string;
  severity?: 'critical' | 'major' | 'minor';
  type?: 'question';
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "QuestionOption".
 */
export interface QuestionOption {
  /**
   * Longer explanation, shown as a tooltip.
   */
  description?: string;
  /**
   * Short button label.
   */
  label: string;
  /**
   * Machine value returned when chosen.
   */
  value: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "AnswerEvent".
 */
export interface AnswerEvent {
  kind: 'answer';
  label?: string | null;
  /**
   * The entry's place in the log.
   */
  n?: number;
  question_id: string;
  run_id?: string;
  value: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "RequestInputTimeoutEvent".
 */
export interface RequestInputTimeoutEvent {
  kind: 'request_input_timeout';
  /**
   * The entry's place in the log.
   */
  n?: number;
  question_id: string;
  run_id?: string;
  timeout: number;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "PermissionRequestEvent".
 */
export interface PermissionRequestEvent {
  input?: {
    [k: string]: unknown;
  };
  kind: 'permission_request';
  /**
   * The entry's place in the log.
   */
  n?: number;
  preview?: (CellPreview | CommandPreview | FilePreview) | null;
  reason?: string;
  remember?: string | null;
  remember_options?: RememberOption[];
  request_id: string;
  run_id?: string;
  summary: string;
  tool_name: string;
  tool_use_id: string;
  warnings?: string[];
}
/**
 * A cell about to run.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "CellPreview".
 */
export interface CellPreview {
  cell_id: string;
  count?: number | null;
  index?: number | null;
  kind?: 'cell';
  language?: string;
  source: string;
}
/**
 * A shell command about to run.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "CommandPreview".
 */
export interface CommandPreview {
  command: string;
  kind?: 'command';
  programs?: ProgramPreview[];
  redirects?: string[];
  sandbox?: string;
  working_dir?: string;
}
/**
 * One program of a command line and what our analysis says it does.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ProgramPreview".
 */
export interface ProgramPreview {
  effect: 'inert' | 'reads' | 'writes' | 'runs_code' | 'unknown';
  note?: string;
  program: string | null;
  text: string;
  writes?: string[];
}
/**
 * A file about to be written or deleted.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "FilePreview".
 */
export interface FilePreview {
  action: 'create' | 'overwrite' | 'edit' | 'delete';
  diff?: string | null;
  kind?: 'file';
  path: string;
}
/**
 * One scope "Always allow" can take for a call.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "RememberOption".
 */
export interface RememberOption {
  id: string;
  label: string;
  rules?: string[];
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "PermissionResponseEvent".
 */
export interface PermissionResponseEvent {
  allowed: boolean;
  kind: 'permission_response';
  /**
   * The entry's place in the log.
   */
  n?: number;
  remember?: boolean;
  request_id: string;
  rule?: string | null;
  run_id?: string;
  scope?: string | null;
  tool_name: string;
}
/**
 * A progress message from the agent (the send_update tool).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "UpdateEvent".
 */
export interface UpdateEvent {
  kind: 'update';
  message: string;
  /**
   * The entry's place in the log.
   */
  n?: number;
  run_id?: string;
}
/**
 * The model's view of the conversation was made smaller (the history is whole).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "CompactionEvent".
 */
export interface CompactionEvent {
  cleared?: number;
  kind: 'compaction';
  /**
   * The entry's place in the log.
   */
  n?: number;
  reason: 'auto' | 'manual' | 'too_long';
  run_id?: string;
  summarised?: number;
  summary?: string;
  tokens_after?: number;
  tokens_before?: number;
}
/**
 * The model call failed mid-way and is being retried; discard the partial turn.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "RetryEvent".
 */
export interface RetryEvent {
  attempt: number;
  delay: number;
  kind: 'retry';
  /**
   * The entry's place in the log.
   */
  n?: number;
  reason: string;
  run_id?: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "WarningEvent".
 */
export interface WarningEvent {
  action?: 'trust_workspace' | null;
  kind: 'warning';
  message: string;
  /**
   * The entry's place in the log.
   */
  n?: number;
  run_id?: string;
}
/**
 * The run ended without completing its task.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "StoppedEvent".
 */
export interface StoppedEvent {
  kind: 'stopped';
  message?: string;
  /**
   * The entry's place in the log.
   */
  n?: number;
  reason:
    | 'completed'
    | 'manual_stop'
    | 'error'
    | 'iteration_limit'
    | 'time_limit'
    | 'budget'
    | 'input_timeout'
    | 'unattended';
  run_id?: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "CompletedEvent".
 */
export interface CompletedEvent {
  kind: 'completed';
  /**
   * The entry's place in the log.
   */
  n?: number;
  plan_ready?: boolean;
  run_id?: string;
  summary?: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ErrorEvent".
 */
export interface ErrorEvent {
  error_type?: string;
  kind: 'error';
  message: string;
  /**
   * The entry's place in the log.
   */
  n?: number;
  run_id?: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "SubagentSpawnedEvent".
 */
export interface SubagentSpawnedEvent {
  agent_type: string;
  child_session_id: string;
  kind: 'subagent_spawned';
  /**
   * The entry's place in the log.
   */
  n?: number;
  parent_tool_use_id?: string | null;
  run_id?: string;
  task?: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "SubagentOutputEvent".
 */
export interface SubagentOutputEvent {
  child_session_id: string;
  event:
    | AgentStartEvent
    | TurnStartEvent
    | TextDeltaEvent
    | TextEvent
    | ThinkingDeltaEvent
    | ReasonEvent
    | ObserveEvent
    | ToolStartEvent
    | ToolProgressEvent
    | ToolEndEvent
    | PlanEvent
    | PlanStepEvent
    | QuestionEvent
    | AnswerEvent
    | RequestInputTimeoutEvent
    | PermissionRequestEvent
    | PermissionResponseEvent
    | UpdateEvent
    | StateEvent
    | UsageEvent
    | ContextEvent
    | CompactionEvent
    | RetryEvent
    | WarningEvent
    | StoppedEvent
    | CompletedEvent
    | ErrorEvent
    | SubagentSpawnedEvent
    | SubagentOutputEvent
    | SubagentCompleteEvent;
  kind: 'subagent_output';
  /**
   * The entry's place in the log.
   */
  n?: number;
  run_id?: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "StateEvent".
 */
export interface StateEvent {
  detail?: string;
  kind: 'state';
  /**
   * The entry's place in the log.
   */
  n?: number;
  previous: AgentState;
  run_id?: string;
  state: AgentState;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "UsageEvent".
 */
export interface UsageEvent {
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  cost_usd?: number;
  input_tokens?: number;
  kind: 'usage';
  /**
   * The entry's place in the log.
   */
  n?: number;
  output_tokens?: number;
  run_cache_read_input_tokens?: number;
  run_cost_usd?: number;
  run_id?: string;
  run_input_tokens?: number;
  run_output_tokens?: number;
  run_unpriced_calls?: number;
  session_cost_usd?: number;
  session_unpriced_calls?: number;
}
/**
 * How full the model's context window is: after each reply (as the API counted the
 * request, plus the reply) and after a compaction (estimated).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ContextEvent".
 */
export interface ContextEvent {
  cached_tokens?: number;
  estimated?: boolean;
  kind: 'context';
  /**
   * The entry's place in the log.
   */
  n?: number;
  run_id?: string;
  used_tokens: number;
  window: number;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "SubagentCompleteEvent".
 */
export interface SubagentCompleteEvent {
  child_session_id: string;
  kind: 'subagent_complete';
  /**
   * The entry's place in the log.
   */
  n?: number;
  result?: string | null;
  run_id?: string;
  state?: AgentState;
}
/**
 * What the user sent (shown again for a resumed session).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "UserEntry".
 */
export interface UserEntry {
  action?: 'execute_plan' | 'compact';
  kind: 'user';
  n?: number;
  text: string;
}
/**
 * A line from the panel itself: a resumed session, entries trimmed from the log.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "NoteEntry".
 */
export interface NoteEntry {
  cells_of?: string;
  kind: 'note';
  n?: number;
  text: string;
  trimmed?: boolean;
}
/**
 * A text block ended whose text the view has streamed already: it keeps that text
 * (a ``text`` entry carries the whole text instead when the pieces did not add up).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "TextEndEntry".
 */
export interface TextEndEntry {
  interrupted: boolean;
  kind: 'text_end';
  n?: number;
  phase: string | null;
  run_id?: string;
}
/**
 * A resumed session's plan whose execution was cut short: the view offers to go on.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "PlanStoppedEntry".
 */
export interface PlanStoppedEntry {
  kind: 'plan_stopped';
  n?: number;
}
/**
 * The user trusted the folder's settings: what now applies (the prompt they saw).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "TrustedEntry".
 */
export interface TrustedEntry {
  applied: TrustPrompt;
  kind: 'trusted';
  n?: number;
}
/**
 * What trusting a folder's settings would enable, complete.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "TrustPrompt".
 */
export interface TrustPrompt {
  effects?: TrustEffect[];
  folder: string;
  policy?: string[];
  policy_source?: string;
  source: string;
}
/**
 * One thing trusting the folder would enable that is not enabled now.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "TrustEffect".
 */
export interface TrustEffect {
  details?: TrustDetail[];
  kind:
    | 'rule'
    | 'role'
    | 'mcp_server'
    | 'default_rules'
    | 'cells'
    | 'context'
    | 'models'
    | 'provider';
  summary: string;
}
/**
 * One fact of an effect: our label, and the settings' own text as data.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "TrustDetail".
 */
export interface TrustDetail {
  label: string;
  name?: string;
  value?: string;
}
/**
 * The answer to a command: ``error`` says what went wrong, in words for the user.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "Reply".
 */
export interface Reply {
  error: string | null;
  found?: FoundSession[];
  id: string | null;
  ok: boolean;
  type: 'reply';
}
/**
 * A past session matching a ``search_sessions`` command, with its best passage.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "FoundSession".
 */
export interface FoundSession {
  id: string;
  label: string;
  matches: number;
  notebook: string;
  open_path: string;
  outcome: string;
  outcome_kind: string;
  parts: string[];
  role: string;
  said: number;
  stop_reason: string;
  title: string;
  updated: number;
  where: 'here' | 'other' | 'unknown';
}
/**
 * The transcript so far, for one view (``view``) or, after a resume, every view.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "Snapshot".
 */
export interface Snapshot {
  entries: TranscriptEntry[];
  type: 'snapshot';
  view: string | null;
}
/**
 * New entries, about 30 batches a second at most; pieces of a stream merged.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "Events".
 */
export interface Events {
  entries: TranscriptEntry[];
  type: 'events';
}
/**
 * A batch that is only streamed text of the current block: entry ``n`` appends ``text``.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "StreamedText".
 */
export interface StreamedText {
  n: number;
  text: string;
  type: 'text';
}
/**
 * The widget's synced traits, as :class:`~jupyter_agent.jupyter.panel.widget.AgentPanel`
 * declares them; the kernel writes them, a view only reads.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "PanelState".
 */
export interface PanelState {
  bridge_mode: ('live' | 'file' | 'connecting') | '';
  busy: boolean;
  context: PanelContext;
  detail: string;
  dock: 'inline' | 'side';
  kernel_id: string;
  max_steps: number;
  model_label: string;
  model_name: string;
  model_notes: string;
  model_ready: boolean;
  model_setup: string;
  models: ModelChoice[];
  notebook: string;
  pausing: boolean;
  pending_approval: string;
  pending_question: string;
  plan_ready: boolean;
  role: string;
  roles: RoleChoice[];
  running_code: boolean;
  sandbox: string;
  sandbox_detail: string;
  sandboxed: boolean;
  session_id: string;
  sessions: SavedSession[];
  status: AgentState;
  stop_reason: string;
  trust: TrustPrompt | null;
  usage: PanelUsage;
  waiting_task: string;
  widget_id: string;
}
/**
 * How full the model's context window is, for the gauge (empty while the conversation
 * is: nothing to show, nothing to compact).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "PanelContext".
 */
export interface PanelContext {
  cached_tokens?: number;
  estimated?: boolean;
  used_tokens?: number;
  window?: number;
}
/**
 * A model the picker offers: the one in use, those of the settings' ``[models]
 * choices``, and the providers whose key is at hand.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ModelChoice".
 */
export interface ModelChoice {
  current: boolean;
  id: string;
  label: string;
  provider: string;
  ready: boolean;
  setup: string;
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "RoleChoice".
 */
export interface RoleChoice {
  description: string;
  name: string;
}
/**
 * A session the picker lists: this notebook's first, then other notebooks', then those
 * whose notebook is not known; the newest first in each.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "SavedSession".
 */
export interface SavedSession {
  id: string;
  notebook: string;
  open_path: string;
  runs: number;
  state: string;
  title: string;
  updated: number;
  where: 'here' | 'other' | 'unknown';
}
/**
 * Tokens and cost of the current run and of the session (empty before the first call).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "PanelUsage".
 */
export interface PanelUsage {
  run_cache_read_input_tokens?: number;
  run_cost_usd?: number;
  run_input_tokens?: number;
  run_output_tokens?: number;
  run_unpriced_calls?: number;
  session_cache_read_input_tokens?: number;
  session_cost_usd?: number;
  session_input_tokens?: number;
  session_output_tokens?: number;
  session_unpriced_calls?: number;
}
/**
 * A view rendered (again, after a page reload): it wants a snapshot.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "Hello".
 */
export interface Hello {
  type: 'hello';
  view?: string | null;
}
/**
 * Start a run with ``text`` as the task, in ``role`` (the current role if empty).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "SendCommand".
 */
export interface SendCommand {
  id: string;
  name: 'send';
  role?: string | null;
  text: string;
  type: 'command';
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "StopCommand".
 */
export interface StopCommand {
  id: string;
  name: 'stop';
  type: 'command';
}
/**
 * Pause the run before its next step or tool call (its approvals stay pending).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "PauseCommand".
 */
export interface PauseCommand {
  id: string;
  name: 'pause';
  type: 'command';
}
/**
 * Continue the paused run (Resume).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "UnpauseCommand".
 */
export interface UnpauseCommand {
  id: string;
  name: 'unpause';
  type: 'command';
}
/**
 * Answer the pending question ``question_id``.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "AnswerCommand".
 */
export interface AnswerCommand {
  id: string;
  name: 'answer';
  question_id: string;
  type: 'command';
  value: string;
}
/**
 * Allow or deny the pending approval ``request_id``; ``remember``: always allow calls
 * like it for the session, in the scope ``scope`` (an offered option's id; ``None``: the
 * first).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ApproveCommand".
 */
export interface ApproveCommand {
  allow: boolean;
  id: string;
  name: 'approve';
  remember?: boolean;
  request_id: string;
  scope?: string | null;
  type: 'command';
}
/**
 * Hand the submitted plan to the Actor (or carry on with one cut short).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ExecutePlanCommand".
 */
export interface ExecutePlanCommand {
  id: string;
  name: 'execute_plan';
  type: 'command';
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "SetRoleCommand".
 */
export interface SetRoleCommand {
  id: string;
  name: 'set_role';
  role: string;
  type: 'command';
}
/**
 * Use the model ``model`` (a model string) from the next run on.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "SetModelCommand".
 */
export interface SetModelCommand {
  id: string;
  model: string;
  name: 'set_model';
  type: 'command';
}
/**
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "SetMaxStepsCommand".
 */
export interface SetMaxStepsCommand {
  id: string;
  name: 'set_max_steps';
  type: 'command';
  value: number;
}
/**
 * Show and continue the saved session ``session_id``. A session of another notebook
 * is refused unless ``here``: the user chose to go on with it in this notebook (the view
 * asked), without its cell references.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "ResumeCommand".
 */
export interface ResumeCommand {
  here?: boolean;
  id: string;
  name: 'resume';
  session_id: string;
  type: 'command';
}
/**
 * List the saved sessions again (the ``sessions`` trait).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "SessionsCommand".
 */
export interface SessionsCommand {
  id: string;
  name: 'sessions';
  type: 'command';
}
/**
 * Search the workspace's past sessions for ``query``'s words (the current session is
 * left out); the reply carries the matches in ``found``.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "SearchSessionsCommand".
 */
export interface SearchSessionsCommand {
  id: string;
  limit?: number;
  name: 'search_sessions';
  query: string;
  type: 'command';
}
/**
 * Trust the workspace's own settings (the trust prompt's button, and the one on the
 * notice that they apply only in part). Refused when they changed since the prompt the
 * view shows was made: the ``trust`` trait then holds the new prompt.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "TrustCommand".
 */
export interface TrustCommand {
  id: string;
  name: 'trust';
  type: 'command';
}
/**
 * Use ``key`` as the model's API key: in memory for this session, and in the user's
 * owner-only credentials file too when ``save``. The key is never sent back, logged or
 * put in a trait.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "SetKeyCommand".
 */
export interface SetKeyCommand {
  id: string;
  key: string;
  name: 'set_key';
  save?: boolean;
  type: 'command';
}
/**
 * Send the last message again (the button on an error).
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "RetryCommand".
 */
export interface RetryCommand {
  id: string;
  name: 'retry';
  type: 'command';
}
/**
 * Make the conversation smaller now (Compact now): old tool results cleared, earlier
 * turns summarised by the model. Refused while a run goes on or when there is nothing
 * to compact.
 *
 * This interface was referenced by `PanelProtocol`'s JSON-Schema
 * via the `definition` "CompactCommand".
 */
export interface CompactCommand {
  id: string;
  name: 'compact';
  type: 'command';
}

export const CONTROL_TOOLS = [
  'ask_user',
  'send_update',
  'submit_plan',
  'task_complete',
  'update_plan_step'
] as const;
