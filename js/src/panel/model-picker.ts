/**
 * The model picker: the model in use and the others configured (the settings' `[models]
 * choices`, and each provider whose key is at hand), each saying whether it is ready.
 * Choosing one asks the kernel to switch (`set_model`) from the next run on; the kernel's
 * `models` trait then says what is current, so a refused switch shows the old choice again.
 */
import { h } from './dom';
import type { ModelChoice } from './wire';

export class ModelPicker {
  readonly el: HTMLElement;
  readonly select: HTMLSelectElement;
  private choices: ModelChoice[] = [];

  constructor(private readonly choose: (model: string) => Promise<unknown>) {
    this.select = h('select', { 'aria-label': 'Model' });
    this.el = h('label', { class: 'ja-model-picker' }, 'Model ', this.select);
    this.select.addEventListener('change', () => {
      const wanted = this.select.value;
      this.choose(wanted).catch(() => this.show(this.choices));
    });
  }

  /** List `choices` (the kernel's `models` trait), the current one selected. */
  show(choices: ModelChoice[] | undefined): void {
    this.choices = choices ?? [];
    this.select.replaceChildren(
      ...this.choices.map(choice => {
        const option = h('option', {
          value: choice.id,
          text: choice.ready ? choice.label : `${choice.label} (set-up needed)`,
          title: choice.setup || choice.provider || undefined
        });
        option.selected = choice.current;
        return option;
      })
    );
    const current = this.choices.find(choice => choice.current);
    if (current) this.select.value = current.id;
    // One model and nothing else configured: a picker of one says nothing.
    this.el.hidden = this.choices.length < 2;
  }

  /** The picker waits while a run goes on: a switch applies to the next run. */
  setBusy(busy: boolean): void {
    this.select.disabled = busy;
  }
}
