/**
 * A question's card: its options as buttons (a description under each label), or a free
 * text answer; what a click does is the caller's.
 */
import { h } from './dom';
import { nameOf } from './labels';
import type { EntryOf } from './types';

/** A question or an approval: its buttons are disabled and a line says how it ended. */
export interface IPendingCard {
  card: HTMLElement;
  buttons: (HTMLButtonElement | HTMLInputElement)[];
  answered: HTMLElement;
}

export interface IQuestionCard extends IPendingCard {
  options: HTMLElement;
}

/** Ids of option descriptions, unique in the page. */
let optionDescriptions = 0;

/** `send(value, button)`: an option's button, or null for the free-text answer. */
export function questionCard(
  e: EntryOf<'question'>,
  send: (
    card: IQuestionCard,
    value: string,
    button: HTMLButtonElement | null
  ) => void
): IQuestionCard {
  const q = e.question;
  const card = h('section', {
    class: 'ja-card ja-question ja-flash',
    'data-severity': q.severity,
    'aria-label': `Question: ${nameOf(q.question)}`
  });
  const buttons: (HTMLButtonElement | HTMLInputElement)[] = [];
  const answered = h('p', { class: 'ja-answered', hidden: true });
  const options = h('div', {
    class: 'ja-options',
    role: 'group',
    'aria-label': 'Answer options'
  });
  const parts: IQuestionCard = { card, buttons, answered, options };
  for (const option of q.options || []) {
    const isDefault =
      q.default !== null &&
      q.default !== undefined &&
      option.value === q.default;
    // The description shows under the label. It is the button's description, not part
    // of its name (aria-hidden here, read through aria-describedby), so the option is
    // still called by its label.
    const descriptionId = option.description
      ? `ja-option-description-${++optionDescriptions}`
      : undefined;
    const button = h(
      'button',
      {
        type: 'button',
        class: `ja-option${isDefault ? ' ja-default' : ''}`,
        'data-value': option.value,
        'aria-describedby': descriptionId
      },
      h('span', { class: 'ja-option-label', text: option.label }),
      option.description
        ? h('span', {
            class: 'ja-option-description',
            id: descriptionId,
            'aria-hidden': 'true',
            text: option.description
          })
        : null
    );
    button.addEventListener('click', () => send(parts, option.value, button));
    buttons.push(button);
    options.append(button);
  }
  let free: HTMLElement | null = null;
  if (q.allow_custom || !(q.options || []).length) {
    const input = h('input', {
      type: 'text',
      class: 'ja-free-input',
      'aria-label': 'Your answer',
      placeholder: 'Type your answer…'
    });
    const submit = h('button', { type: 'submit', text: 'Answer' });
    free = h('form', { class: 'ja-free' }, input, submit);
    free.addEventListener('submit', event => {
      event.preventDefault();
      if (!input.value.trim()) return;
      send(parts, input.value, null);
    });
    buttons.push(input, submit);
  }
  const children = [
    h(
      'div',
      { class: 'ja-card-head' },
      h('h3', { text: 'Question' }),
      h('span', { class: 'ja-badge', text: q.severity })
    ),
    h('p', { class: 'ja-question-text', text: q.question }),
    q.context ? h('p', { class: 'ja-context', text: q.context }) : null,
    (q.options || []).length ? options : null,
    free,
    answered
  ];
  card.append(...children.filter((c): c is HTMLElement => Boolean(c)));
  return parts;
}
