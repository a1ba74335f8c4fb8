/**
 * The cards that wait for the user: questions and approvals. Each is kept by its id until
 * its answer (or the run's end) closes it: its buttons disabled, a line saying how it
 * ended. A click sends the command; if the kernel refuses it, the card is usable again.
 */
import { approvalCard, questionCard, withCode } from './cards';
import type { IPendingCard, IQuestionCard } from './cards';
import type { EntryOf, ITranscriptActions } from './types';

export class PendingCards {
  private questions = new Map<string, IQuestionCard>();
  private approvals = new Map<string, IPendingCard>();
  /** An approval's request id → the tool call that waits for it. */
  private waiting = new Map<string, string>();

  /** `focusNext`: where focus goes once a click disabled the control that had it. */
  constructor(
    private readonly actions: ITranscriptActions,
    private readonly focusNext: () => void
  ) {}

  /** A question's card, its buttons sending the answer. */
  question(e: EntryOf<'question'>): HTMLElement {
    const question = questionCard(e, ({ buttons }, value, button) => {
      buttons.forEach(b => (b.disabled = true));
      if (button) button.classList.add('ja-chosen');
      this.focusNext();
      this.actions
        .command('answer', { question_id: e.question_id, value })
        .catch((error: Error) => {
          buttons.forEach(b => (b.disabled = false));
          if (button) button.classList.remove('ja-chosen');
          this.actions.error(error.message);
        });
    });
    this.questions.set(e.question_id, question);
    return question.card;
  }

  /** A question answered (here or in another view): the chosen option marked. */
  answer(e: EntryOf<'answer'>): void {
    const q = this.questions.get(e.question_id);
    if (!q) return;
    q.buttons.forEach(b => (b.disabled = true));
    for (const b of q.options.querySelectorAll<HTMLElement>('button'))
      b.classList.toggle('ja-chosen', b.dataset.value === e.value);
    q.card.classList.remove('ja-flash');
    q.card.dataset.state = 'answered';
    q.answered.hidden = false;
    q.answered.textContent = `Answered: ${e.label ?? e.value}`;
  }

  /** No answer came in time. */
  timeout(e: EntryOf<'request_input_timeout'>): void {
    const pending =
      this.questions.get(e.question_id) || this.approvals.get(e.question_id);
    if (pending) close(pending, `No answer within ${e.timeout} s.`);
  }

  /** An approval's card, its buttons sending the decision; the call it holds is kept.
   * `known`: where cells are, so the card names the cells of the call by their place. */
  approval(
    e: EntryOf<'permission_request'>,
    known?: ReadonlyMap<string, number>
  ): HTMLElement {
    const decide: Parameters<typeof approvalCard>[1] = (
      { buttons },
      allow,
      remember,
      scope
    ) => {
      buttons.forEach(b => (b.disabled = true));
      this.focusNext();
      this.actions
        .command('approve', {
          request_id: e.request_id,
          allow,
          remember,
          ...(scope !== null ? { scope } : {})
        })
        .catch((error: Error) => {
          buttons.forEach(b => (b.disabled = false));
          this.actions.error(error.message);
        });
    };
    const approval = approvalCard(e, decide, known);
    this.approvals.set(e.request_id, approval);
    this.waiting.set(e.request_id, e.tool_use_id);
    return approval.card;
  }

  /** A decision on an approval: its card closed with the verdict. Returns the tool call
   * that waited for it, if any. */
  decided(e: EntryOf<'permission_response'>): string | undefined {
    const waiting = this.waiting.get(e.request_id);
    this.waiting.delete(e.request_id);
    const a = this.approvals.get(e.request_id);
    if (!a) return waiting;
    const verdict = e.allowed
      ? e.remember
        ? withCode(`Always allowed${e.rule ? ` (${e.rule})` : ''}`)
        : 'Allowed'
      : 'Denied';
    close(a, verdict);
    a.card.dataset.state = e.allowed ? 'allowed' : 'denied';
    return waiting;
  }

  /** The run ended: every card still open is closed, saying why. */
  closeOpen(text: string): void {
    for (const cards of [this.questions, this.approvals]) {
      for (const card of cards.values()) {
        if (!card.card.dataset.state) close(card, text);
      }
    }
  }
}

function close(pending: IPendingCard, text: string | Node[]): void {
  pending.buttons.forEach(b => (b.disabled = true));
  pending.card.classList.remove('ja-flash');
  if (!pending.card.dataset.state) pending.card.dataset.state = 'closed';
  pending.answered.hidden = false;
  pending.answered.replaceChildren(
    ...(typeof text === 'string' ? [text] : text)
  );
}
