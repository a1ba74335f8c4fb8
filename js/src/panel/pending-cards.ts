/**
 * The cards that wait for the user: questions and approvals. Each is kept by its id until
 * its answer (or the run's end) closes it: its buttons disabled, a line saying how it
 * ended. A click sends the command; if the kernel refuses it, the card is usable again
 * (unless the run ended meanwhile). Once the kernel took the answer, the card says so at
 * once: a run stopped before the answer's own entry came does not make it "not answered".
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
    const question = questionCard(e, (q, value, button) => {
      q.buttons.forEach(b => (b.disabled = true));
      if (button) button.classList.add('ja-chosen');
      this.focusNext();
      const label =
        button?.querySelector('.ja-option-label')?.textContent ?? value;
      this.actions
        .command('answer', { question_id: e.question_id, value })
        .then(
          () => answered(q, value, label),
          (error: Error) => {
            if (!q.card.dataset.state) {
              q.buttons.forEach(b => (b.disabled = false));
              if (button) button.classList.remove('ja-chosen');
            }
            this.actions.error(error.message);
          }
        );
    });
    this.questions.set(e.question_id, question);
    return question.card;
  }

  /** A question answered (here or in another view): the chosen option marked. */
  answer(e: EntryOf<'answer'>): void {
    const q = this.questions.get(e.question_id);
    if (q) answered(q, e.value, e.label ?? e.value);
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
        .then(
          () => {
            // Taken: the verdict shows now (its entry adds what was remembered).
            if (approval.card.dataset.state === 'allowed') return;
            if (approval.card.dataset.state === 'denied') return;
            close(
              approval,
              allow ? (remember ? 'Always allowed' : 'Allowed') : 'Denied',
              allow ? 'allowed' : 'denied'
            );
          },
          (error: Error) => {
            if (!approval.card.dataset.state)
              buttons.forEach(b => (b.disabled = false));
            this.actions.error(error.message);
          }
        );
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
    close(a, verdict, e.allowed ? 'allowed' : 'denied');
    return waiting;
  }

  /** The run ended (`how`): every card still open, never answered, says so. */
  closeOpen(how: 'stopped' | 'ended' | 'failed'): void {
    for (const cards of [this.questions, this.approvals]) {
      for (const card of cards.values()) {
        if (!card.card.dataset.state)
          close(card, `Not answered: the run ${how}.`);
      }
    }
  }
}

/** A question's answer, on its card: the chosen option marked. */
function answered(q: IQuestionCard, value: string, label: string): void {
  for (const b of q.options.querySelectorAll<HTMLElement>('button'))
    b.classList.toggle('ja-chosen', b.dataset.value === value);
  close(q, `Answered: ${label}`, 'answered');
}

/** A card closed: its buttons disabled, the line that says how, and its state (`closed`
 * unless said, or one it had already). */
function close(
  pending: IPendingCard,
  text: string | Node[],
  state?: string
): void {
  pending.buttons.forEach(b => (b.disabled = true));
  pending.card.classList.remove('ja-flash');
  if (state) pending.card.dataset.state = state;
  else if (!pending.card.dataset.state) pending.card.dataset.state = 'closed';
  pending.answered.hidden = false;
  pending.answered.replaceChildren(
    ...(typeof text === 'string' ? [text] : text)
  );
}
