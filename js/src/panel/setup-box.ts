/**
 * The set-up box: shown while the model cannot be called (no key, or a key the API
 * rejected), it says why and takes a key. The key goes to the kernel in one command and
 * is never shown again: it leaves the page as soon as it is sent, whatever the answer.
 */
import { h } from './dom';

/** Tells apart the key fields of the panels on one page (inline and in the sidebar). */
let boxes = 0;

export class SetupBox {
  readonly el: HTMLFormElement;
  private readonly why: HTMLElement;
  private readonly waiting: HTMLElement;
  private readonly keyInput: HTMLInputElement;
  /** What is wrong with the key given, next to its field (and named by it). */
  private readonly keyProblem: HTMLElement;

  /** `sendKey`: the set_key command; `focusNext`: where focus goes once the key is sent
   * (the panel's rule: the message input). A key missing or refused is said next to the
   * key field, not in the panel's error line far below. */
  constructor(
    private readonly sendKey: (key: string, save: boolean) => Promise<unknown>,
    private readonly focusNext: () => void = () => undefined
  ) {
    const problemId = `ja-key-problem-${++boxes}`;
    const keyInput = h('input', {
      type: 'password',
      autocomplete: 'off',
      spellcheck: 'false',
      class: 'ja-key',
      'aria-label': 'API key',
      'aria-describedby': problemId,
      placeholder: 'sk-ant-…'
    });
    const keyProblem = h('div', {
      class: 'ja-key-problem',
      id: problemId,
      role: 'alert', // heard even when the field had focus already
      hidden: true
    });
    const useKeyButton = h('button', {
      type: 'submit',
      class: 'ja-primary',
      text: 'Use for this session',
      title:
        "Kept in the kernel's memory until it restarts; never in the notebook"
    });
    const saveKeyButton = h('button', {
      type: 'button',
      text: 'Save for my user',
      title: 'Saved in ~/.jupyter_agent/credentials.json, readable only by you'
    });
    const setupWhy = h('div', { class: 'ja-setup-why' });
    const waitingTask = h('div', { class: 'ja-setup-task', hidden: true });
    const setup = h(
      'form',
      { class: 'ja-setup', hidden: true, 'aria-label': 'Set up the model' },
      h('div', { class: 'ja-setup-title', text: 'Set up the model' }),
      waitingTask,
      setupWhy,
      h('label', { class: 'ja-key-label' }, 'API key ', keyInput),
      keyProblem,
      h('div', { class: 'ja-buttons' }, useKeyButton, saveKeyButton),
      h('div', {
        class: 'ja-note',
        text:
          'The key never goes into the notebook: it stays in the kernel for this session, ' +
          'or in a file only you can read when you save it. %agent login in a cell does the same.'
      }),
      h(
        'details',
        { class: 'ja-setup-more' },
        h('summary', { text: 'Other ways to get going' }),
        h(
          'ul',
          {},
          h('li', {
            text:
              'Try it offline with a scripted replay: model = ScriptedModel("replay.json"), ' +
              'then %agent --model $model (the tutorials in notebooks/ run this way).'
          }),
          h('li', {
            text:
              'Set ANTHROPIC_API_KEY where the kernel gets its environment: the shell ' +
              'Jupyter starts in (for a gateway’s kernels, the gateway’s).'
          }),
          h('li', {
            text:
              'OpenAI: set OPENAI_API_KEY there instead, then ' +
              '%agent model openai:gpt-5 in a cell.'
          }),
          h('li', {
            text:
              'A model on this machine: with Ollama running, %agent model ollama:qwen3; ' +
              'any OpenAI-compatible server (vLLM, LM Studio, LiteLLM): ' +
              '%agent model openai-compatible:NAME@URL.'
          }),
          h('li', {
            text:
              'Claude on Amazon Bedrock or Google Vertex AI: %agent model bedrock:MODEL_ID ' +
              'or vertex:MODEL_ID, with your cloud credentials.'
          })
        )
      )
    );
    this.el = setup;
    this.why = setupWhy;
    this.waiting = waitingTask;
    this.keyInput = keyInput;
    this.keyProblem = keyProblem;
    keyInput.addEventListener('input', () => this.problem(null));
    setup.addEventListener('submit', event => {
      event.preventDefault();
      this.use(false, keyInput, [useKeyButton, saveKeyButton]);
    });
    saveKeyButton.addEventListener('click', () =>
      this.use(true, keyInput, [useKeyButton, saveKeyButton])
    );
  }

  /**
   * Show the box with why the model cannot be called, or hide it (`null`);
   * `task`: a task given meanwhile, which starts once the model can be called.
   */
  show(why: string | null, task = ''): void {
    if (why === null) this.problem(null);
    this.el.hidden = why === null;
    this.why.textContent = why ?? '';
    this.waiting.hidden = !task;
    this.waiting.textContent = task
      ? `Your task waits here and starts once the model can be called: “${task}”`
      : '';
  }

  private use(
    save: boolean,
    input: HTMLInputElement,
    buttons: HTMLButtonElement[]
  ): void {
    const key = input.value.trim();
    input.value = ''; // out of the page at once, whatever the kernel answers
    if (!key) {
      this.problem('Enter an API key first.');
      input.focus();
      return;
    }
    this.problem(null);
    // The button used is disabled, and the box goes once the key is taken: focus goes on
    // rather than to the page (back to the key field if the kernel refused it).
    buttons.forEach(b => (b.disabled = true));
    this.focusNext();
    this.sendKey(key, save)
      .catch((error: Error) => {
        this.problem(error.message); // a refused key: said where it was typed
        input.focus();
      })
      .finally(() => buttons.forEach(b => (b.disabled = false)));
  }

  /** Say what is wrong with the key, next to its field (`null`: nothing). */
  private problem(text: string | null): void {
    this.keyProblem.hidden = text === null;
    this.keyProblem.textContent = text ?? '';
    if (text === null) this.keyInput.removeAttribute('aria-invalid');
    else this.keyInput.setAttribute('aria-invalid', 'true');
  }
}
