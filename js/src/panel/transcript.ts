/**
 * The transcript: applies entries (see types.ts) to a scrolling element, in order, each
 * once (an entry with an `n` not above the last one's is dropped). Streamed text is
 * merged into one block and rendered at most once a frame; a tool card, a plan step, a
 * question or an approval is updated in place when its end or answer arrives.
 */
import {
  endSubagent,
  endTool,
  ISubagentBox,
  IToolCard,
  placeCells,
  resultPositions,
  showLastLine,
  stopTool,
  subagentBox,
  toolCard,
  waitForUser
} from './cards';
import { compactionMarker } from './context';
import { h, MAX_PRE, pretty } from './dom';
import { renderInline, renderMarkdown } from './markdown';
import { PendingCards } from './pending-cards';
import { actionLine, PlanTracker } from './plan';
import { trustedLine } from './trust';
import {
  finishText,
  ITextBlock,
  renderStreaming,
  textBlock
} from './text-block';
import type { EntryOf, ITranscriptActions, TranscriptEntry } from './types';

/**
 * The line a stopped run ends with: the kernel's sentence (written for people: "Stopped by
 * the user.", "Reached the limit of 30 steps."), never the reason's code. A Stop's
 * sentences say "Stopped" themselves; any other reason's is put after "Stopped: ".
 */
export function stoppedLine(e: EntryOf<'stopped'>): string {
  const words = e.reason.replace(/_/g, ' ');
  if (e.reason === 'manual_stop') return `■ ${e.message || 'Stopped.'}`;
  return `■ Stopped: ${e.message || words}`;
}

/**
 * A card that is a landmark (a section with a name: a plan, a question, an approval) gets a
 * name no other one in the transcript (`scope`) has: two approvals of the same call, one in
 * each of two subagents, are "Approval: create a.txt" and "Approval: create a.txt (2)", so
 * a screen reader's list of landmarks tells them apart.
 */
export function distinctLandmark(node: Node, scope: HTMLElement): void {
  const card = node as HTMLElement;
  if (card.localName !== 'section') return;
  const name = card.getAttribute('aria-label');
  if (!name) return;
  const taken = new Set(
    Array.from(scope.querySelectorAll('section'), s =>
      s === card ? null : s.getAttribute('aria-label')
    )
  );
  let unique = name;
  for (let n = 2; taken.has(unique); n++) unique = `${name} (${n})`;
  card.setAttribute('aria-label', unique);
}

/** Inputs a person writes text in (not a checkbox, nor a number). */
const TEXT_INPUTS = new Set(['', 'text', 'search', 'password', 'email', 'url']);

/** What the user is writing where focus is (a draft in the message box, code in a cell's
 * editor), or '' when focus is not in a text field. */
function beingWritten(): string {
  const active = document.activeElement as HTMLInputElement | null;
  if (!active) return '';
  if (active.isContentEditable) return active.textContent ?? '';
  const name = active.localName;
  if (name === 'textarea' || (name === 'input' && TEXT_INPUTS.has(active.type)))
    return active.value ?? '';
  return '';
}

/**
 * A card that waits for the user takes focus on its first control, unless the user is
 * writing (a draft in the message box, code in a cell): a key meant for what they write
 * must not answer the card, nor allow a call. An empty field gives the focus up. Decided
 * once the entries that came with the card are shown: a card they answered (a transcript
 * shown again from its start) does not take it.
 */
function takeFocus(card: HTMLElement, control: HTMLElement | null): void {
  queueMicrotask(() => {
    if (card.dataset.state || card.isConnected === false) return;
    if (!beingWritten().trim()) control?.focus?.({ preventScroll: true });
  });
}

/** Raised (strict) or logged: an entry kind this panel does not know. */
export class UnknownEntryError extends Error {
  constructor(readonly entry: unknown) {
    super(
      `jupyter_agent panel: unknown transcript entry kind ${JSON.stringify((entry as { kind?: unknown })?.kind)}`
    );
  }
}

export class Transcript {
  follow = true;
  lastN = 0;
  private text: ITextBlock | null = null;
  private thinking: { pre: HTMLElement } | null = null;
  private tools = new Map<string, IToolCard>();
  /**
   * Where the notebook's cells are, as the newest results say (a read of the notebook, an
   * edit's or a run's result, an approval's preview): a new row names its cells by these
   * places from its start. An insert, a delete or a move shifts other cells: what was
   * known before it is forgotten; so is all of it when a run starts (the user may have
   * moved cells meanwhile: a row says an id rather than a wrong place).
   */
  private places = new Map<string, number>();
  /** The questions and approvals, until they are answered. */
  private pending: PendingCards;
  /** Subagents by session id: each a transcript of its own inside its tool card. */
  private subagents = new Map<
    string,
    ISubagentBox & { transcript: Transcript }
  >();
  /** The newest plan: its card here, and what the strip above the transcript shows. */
  readonly plan: PlanTracker;
  private dirty = new Set<ITextBlock>();
  private frame: ReturnType<typeof setTimeout> | number = 0;
  /**
   * A "Compact now" run: it shows as its compaction marker alone (its summary folded in
   * it), not as a message, a run line, the marker and a "Completed" line. `marked`: the
   * marker is shown; the run's end then adds nothing (it adds its line when nothing was
   * compacted, or the run failed).
   */
  private compacting: 'started' | 'marked' | null = null;

  /**
   * `strict`: an unknown entry kind throws (the tests) rather than being logged to the
   * console (a page talking to a newer kernel). `nested`: a subagent's transcript, inside
   * its parent's: the view's own controls (Execute plan, Retry) act on the agent the user
   * started, so a nested transcript does not offer them, and its parent's log announces it.
   */
  constructor(
    readonly root: HTMLElement,
    readonly actions: ITranscriptActions,
    readonly strict = false,
    readonly nested = false
  ) {
    this.plan = new PlanTracker(actions);
    this.pending = new PendingCards(actions, () => this.focusNext());
    if (nested) {
      this.reset();
      return;
    }
    // A log: screen readers announce each entry added (a card, a line, a text block once it
    // ends; see text-block.ts), not changes inside one (a tool's status, streamed text).
    root.setAttribute('role', 'log');
    root.setAttribute('aria-live', 'polite');
    root.setAttribute('aria-relevant', 'additions');
    // The transcript follows the newest output while the reader is at the bottom, whatever
    // grows it: a new entry, streamed text, or an entry that grows in place (a tool's result
    // and diff, an answered card). Scrolling up stops following; back at the bottom resumes.
    // (reset() starts a transcript following.)
    root.addEventListener('scroll', () => (this.follow = this.atBottom()), {
      passive: true
    });
    if (typeof MutationObserver === 'function') {
      new MutationObserver(() => this.follow && this.scrollDown()).observe(
        root,
        {
          childList: true,
          subtree: true,
          characterData: true,
          attributes: true,
          attributeFilter: ['open', 'hidden']
        }
      );
    }
    this.reset();
  }

  reset(): void {
    this.root.replaceChildren();
    this.follow = true;
    this.lastN = 0;
    this.text = null; // the text block being streamed
    this.thinking = null;
    this.tools = new Map();
    this.places = new Map();
    this.pending = new PendingCards(this.actions, () => this.focusNext());
    this.subagents = new Map();
    this.plan.reset();
    this.dirty = new Set();
    this.frame = 0;
  }

  apply(entry: TranscriptEntry): void {
    if (entry.n !== undefined) {
      if (entry.n <= this.lastN) return;
      this.lastN = entry.n;
    }
    switch (entry.kind) {
      case 'user':
        return this.onUser(entry);
      case 'note':
        return void this.line('note', entry.text);
      case 'agent_start':
        return this.onAgentStart(entry);
      case 'turn_start':
        return this.closeStreams();
      case 'text_delta':
        return this.onTextDelta(entry);
      case 'text':
      case 'text_end':
        return this.onText(entry);
      case 'thinking_delta':
        return this.onThinkingDelta(entry);
      case 'reason':
      case 'observe':
        if (entry.control)
          this.line('meta', `${entry.kind}: ${pretty(entry.control)}`);
        return;
      case 'retry':
        return this.onRetry(entry);
      case 'tool_start':
        return void this.onToolStart(entry);
      case 'tool_progress':
        return this.onToolProgress(entry);
      case 'tool_end':
        return this.onToolEnd(entry);
      case 'plan':
        return this.onPlan(entry);
      case 'plan_step':
        return this.plan.step(entry);
      case 'plan_stopped':
        return this.plan.stopped();
      case 'question':
        return this.onQuestion(entry);
      case 'answer':
        return this.pending.answer(entry);
      case 'request_input_timeout':
        return this.pending.timeout(entry);
      case 'permission_request':
        return this.onPermissionRequest(entry);
      case 'permission_response':
        return this.onPermissionResponse(entry);
      case 'update':
        this.closeStreams();
        return void this.line('update', `ℹ ${entry.message}`);
      case 'warning':
        return this.onWarning(entry);
      case 'trusted':
        this.closeStreams();
        return void this.add(trustedLine(entry.applied));
      case 'compaction':
        this.closeStreams();
        if (this.compacting) this.compacting = 'marked';
        return void this.add(compactionMarker(entry));
      case 'stopped':
        return this.onStopped(entry);
      case 'completed':
        return this.onCompleted(entry);
      case 'error':
        return this.onError(entry);
      case 'subagent_spawned':
        return void this.onSubagentSpawned(entry);
      case 'subagent_output':
        return this.onSubagentOutput(entry);
      case 'subagent_complete':
        return this.onSubagentComplete(entry);
      default:
        return this.unknown(entry);
    }
  }

  private unknown(entry: never): void {
    const error = new UnknownEntryError(entry);
    if (this.strict) throw error;
    console.error(error.message, entry);
  }

  add<T extends Node>(node: T): T {
    distinctLandmark(node, this.top());
    this.root.append(node);
    if (this.follow) this.scrollDown();
    return node;
  }

  atBottom(): boolean {
    const r = this.root;
    return r.scrollHeight - r.scrollTop - r.clientHeight < 40;
  }

  scrollDown(): void {
    this.root.scrollTop = this.root.scrollHeight;
  }

  private line(kind: string, text: string): HTMLElement {
    return this.add(h('div', { class: `ja-line ja-${kind}` }, text));
  }

  private closeStreams(): void {
    if (this.text) this.finishText(this.text);
    this.text = null;
    this.thinking = null;
  }

  // Runs and messages

  private onUser(e: Pick<EntryOf<'user'>, 'text' | 'action'>): void {
    this.closeStreams();
    // A button the user pressed (Execute plan): the action, its prompt folded.
    if (e.action) return void this.add(actionLine(e.action, e.text));
    const bubble = h('div', { class: 'ja-user' });
    const text = String(e.text ?? '');
    const split = text.search(/\n\s*\n/);
    if (split > 0 && text.length > 240) {
      // A long message (e.g. "Execute the approved plan" with the plan): its first
      // paragraph, the rest folded.
      bubble.append(renderMarkdown(text.slice(0, split)));
      bubble.append(
        h(
          'details',
          {},
          h('summary', { text: 'More' }),
          renderMarkdown(text.slice(split))
        )
      );
    } else {
      bubble.append(renderMarkdown(text));
    }
    this.add(bubble);
  }

  private onAgentStart(e: EntryOf<'agent_start'>): void {
    this.closeStreams();
    this.places.clear();
    this.plan.runStarted(e.run_id, e.action);
    this.compacting = e.action === 'compact' ? 'started' : null;
    if (this.compacting) return; // its marker says it all
    // A subagent's task is on the row of the call that started it: said once, there.
    if (!this.nested)
      this.onUser({ text: e.task, action: e.action ?? undefined });
    const label = e.model_label ? ` — ${e.model_label}` : '';
    this.line('run', `${e.role} · ${e.model}${label}`);
  }

  private onTextDelta(e: EntryOf<'text_delta'>): void {
    const phase = e.phase ?? null;
    if (this.text === null || this.text.phase !== phase) {
      this.closeStreams();
      this.text = this.textBlock(phase);
    }
    this.text.text += e.text;
    this.dirty.add(this.text);
    this.schedule();
  }

  /** A text block ended: `text` carries its whole text, `text_end` keeps what streamed. */
  private onText(e: EntryOf<'text'> | EntryOf<'text_end'>): void {
    const phase = e.phase ?? null;
    let block = this.text;
    if (block === null || block.phase !== phase) {
      this.closeStreams();
      block = this.textBlock(phase);
    }
    if (e.kind === 'text') block.text = e.text;
    this.finishText(block);
    if (e.interrupted)
      block.el.append(
        h('span', { class: 'ja-interrupted', text: ' [interrupted]' })
      );
    this.text = null;
  }

  private textBlock(phase: string | null): ITextBlock {
    const block = textBlock(phase);
    this.add(block.el);
    return block;
  }

  private finishText(block: ITextBlock): void {
    this.dirty.delete(block);
    finishText(block);
  }

  private schedule(): void {
    if (this.frame) return;
    const run = () => {
      this.frame = 0;
      this.renderDirty();
    };
    this.frame =
      typeof requestAnimationFrame === 'function' &&
      document.visibilityState !== 'hidden'
        ? requestAnimationFrame(run)
        : setTimeout(run, 16);
  }

  /** Renders the streamed text that arrived since the last frame. */
  renderDirty(): void {
    for (const block of this.dirty) renderStreaming(block);
    this.dirty.clear();
    if (this.follow) this.scrollDown();
  }

  private onThinkingDelta(e: EntryOf<'thinking_delta'>): void {
    if (this.thinking === null) {
      const pre = h('div', { class: 'ja-thinking-text' });
      const box = h(
        'details',
        { class: 'ja-thinking' },
        h('summary', { text: 'Thinking' }),
        pre
      );
      this.add(box);
      this.thinking = { pre };
    }
    this.thinking.pre.append(document.createTextNode(e.text));
  }

  private onRetry(e: EntryOf<'retry'>): void {
    if (this.text) this.text.el.remove();
    this.text = null;
    this.thinking = null;
    this.line('warning', `↻ The reply broke off (${e.reason}); retrying.`);
  }

  // Tools

  private onToolStart(e: {
    tool_use_id: string;
    name: string;
    input: unknown;
    summary?: string;
  }): IToolCard {
    this.closeStreams();
    const tool = toolCard(e, this.places);
    this.tools.set(e.tool_use_id, tool);
    this.add(tool.card);
    return tool;
  }

  private onToolProgress(e: EntryOf<'tool_progress'>): void {
    const tool = this.tools.get(e.tool_use_id);
    if (!tool || showLastLine(tool, e.output)) return;
    tool.output.hidden = false;
    tool.output.append(document.createTextNode(e.output));
    const text = tool.output.textContent ?? '';
    if (text.length > 2 * MAX_PRE)
      tool.output.textContent = `…${text.slice(-MAX_PRE)}`;
  }

  private onToolEnd(e: EntryOf<'tool_end'>): void {
    const tool =
      this.tools.get(e.tool_use_id) ??
      this.onToolStart({
        tool_use_id: e.tool_use_id,
        name: e.name,
        input: {},
        summary: e.name
      });
    endTool(tool, e);
    this.learnPlaces(e);
  }

  /** What a result says of where cells are now (see `places`). */
  private learnPlaces(e: EntryOf<'tool_end'>): void {
    const positions = resultPositions(e.data);
    const change = e.data?.change;
    // A read of the notebook gives every cell's place; an insert, a delete or a move
    // shifts the cells after it.
    if (
      e.name === 'read_notebook' ||
      change === 'insert' ||
      change === 'delete' ||
      change === 'move'
    )
      this.places.clear();
    for (const [id, n] of positions) this.places.set(id, n);
  }

  private onPlan(e: EntryOf<'plan'>): void {
    this.closeStreams();
    const card = this.add(this.plan.show(e.plan));
    // A subagent's plan is its report to its parent, not one for the user to execute.
    if (this.nested)
      for (const b of card.querySelectorAll('button')) b.remove();
  }

  // Subagents

  /** A subagent's box, in the card of the call that started it (else in the log). */
  private onSubagentSpawned(
    e: EntryOf<'subagent_spawned'>
  ): ISubagentBox & { transcript: Transcript } {
    this.closeStreams();
    const tool = e.parent_tool_use_id
      ? this.tools.get(e.parent_tool_use_id)
      : undefined;
    const sub = subagentBox(e, tool !== undefined);
    if (tool) {
      tool.result.before(sub.box);
      tool.card.open = true; // its approvals and questions must be seen
    } else {
      this.add(sub.box);
    }
    const transcript = new Transcript(
      sub.body,
      this.actions,
      this.strict,
      true
    );
    const entry = { ...sub, transcript };
    this.subagents.set(e.child_session_id, entry);
    return entry;
  }

  private onSubagentOutput(e: EntryOf<'subagent_output'>): void {
    const inner = e.event;
    // The child's status, usage and context gauge are the parent's lines, not entries.
    if (
      inner.kind === 'state' ||
      inner.kind === 'usage' ||
      inner.kind === 'context'
    )
      return;
    const sub =
      this.subagents.get(e.child_session_id) ??
      this.onSubagentSpawned({
        kind: 'subagent_spawned',
        child_session_id: e.child_session_id,
        agent_type: 'subagent'
      });
    sub.transcript.apply(inner);
    if (inner.kind === 'permission_request' || inner.kind === 'question')
      sub.box.open = true;
  }

  private onSubagentComplete(e: EntryOf<'subagent_complete'>): void {
    const sub = this.subagents.get(e.child_session_id);
    if (sub) endSubagent(sub, e);
  }

  /** The plan's buttons: enabled while the plan is not running and the agent idle. */
  refreshControls(): void {
    this.plan.refresh();
  }

  // Questions and approvals

  private onQuestion(e: EntryOf<'question'>): void {
    this.closeStreams();
    const card = this.add(this.pending.question(e));
    card.scrollIntoView?.({ block: 'nearest' });
    takeFocus(card, card.querySelector<HTMLElement>('button, input'));
  }

  private onPermissionRequest(e: EntryOf<'permission_request'>): void {
    this.closeStreams();
    // A cell about to run: its place now, on its row and its card.
    const preview = e.preview;
    if (preview?.kind === 'cell' && preview.index)
      this.places.set(preview.cell_id, preview.index);
    const card = this.add(this.pending.approval(e, this.places));
    card.scrollIntoView?.({ block: 'nearest' });
    takeFocus(card, card.querySelector<HTMLElement>('.ja-actions button'));
    const tool = this.tools.get(e.tool_use_id);
    if (tool) {
      placeCells(tool, this.places);
      waitForUser(tool, true);
    }
  }

  private onPermissionResponse(e: EntryOf<'permission_response'>): void {
    const waiting = this.pending.decided(e);
    const tool = waiting !== undefined ? this.tools.get(waiting) : undefined;
    if (tool && tool.card.dataset.state === 'waiting') waitForUser(tool, false);
  }

  /** The transcript a nested one (a subagent's) is inside, or this one. */
  private top(): HTMLElement {
    let top = this.root;
    for (let n = this.root.parentNode; n; n = n.parentNode) {
      const el = n as HTMLElement;
      if (el.getAttribute?.('role') === 'log') top = el;
    }
    return top;
  }

  /** After an action disabled the control that had focus: focus goes on (types.ts). */
  private focusNext(): void {
    if (this.actions.focusInput) this.actions.focusInput();
    else this.root.focus?.({ preventScroll: true });
  }

  // Progress and endings

  private onWarning(e: EntryOf<'warning'>): void {
    // The kernel keeps its trust notice out of the transcript: the trust prompt above it
    // says that from the panel's opening, and goes once the folder is trusted.
    this.line('warning', `⚠ ${e.message}`);
  }

  private onStopped(e: EntryOf<'stopped'>): void {
    this.closeStreams();
    this.compacting = null;
    this.pending.closeOpen('stopped');
    // A call still running when the run stopped did not fail: it was stopped.
    for (const tool of this.tools.values()) stopTool(tool);
    const line = this.line('stopped', stoppedLine(e));
    if (e.reason === 'error' && !this.nested)
      line.append(' ', this.retryButton());
    this.plan.runEnded(e, true);
  }

  private onCompleted(e: EntryOf<'completed'>): void {
    this.closeStreams();
    this.pending.closeOpen('ended');
    const compacted = this.compacting === 'marked';
    this.compacting = null;
    if (compacted) return void this.plan.runEnded(e, false);
    // A planning run did nothing yet: its plan awaits review (the strip has its button).
    const goal = e.plan_ready ? this.plan.progress()?.goal : undefined;
    const line = e.plan_ready
      ? h(
          'div',
          { class: 'ja-line ja-completed ja-plan-ready' },
          '✔ Plan ready for review'
        )
      : h('div', { class: 'ja-line ja-completed' }, '✔ Completed');
    const summary = e.plan_ready ? goal : e.summary;
    if (summary) {
      line.append(': ');
      renderInline(summary, line);
    }
    this.add(line);
    this.plan.runEnded(e, false);
  }

  private onError(e: EntryOf<'error'>): void {
    this.closeStreams();
    this.compacting = null;
    this.pending.closeOpen('failed');
    // The sentence says what happened and what to do; the error's type stays data.
    const line = this.line('error', `✗ ${e.message}`);
    line.dataset.errorType = e.error_type || '';
    if (!this.nested) line.append(' ', this.retryButton());
    this.plan.runEnded(e, true);
  }

  /** Retry: the last message sent again (the kernel says when there is none). */
  private retryButton(): HTMLButtonElement {
    const button = h('button', {
      type: 'button',
      class: 'ja-retry',
      text: 'Retry',
      title: 'Send the last message again'
    });
    button.addEventListener('click', () => {
      button.disabled = true;
      this.focusNext();
      this.actions.command('retry').catch((error: Error) => {
        button.disabled = false;
        this.actions.error(error.message);
      });
    });
    return button;
  }
}
