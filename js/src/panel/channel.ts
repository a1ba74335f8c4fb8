/**
 * A view's messages to the kernel. The widget's comm (anywidget's `model.send`) reaches
 * the kernel's main shell, which reads nothing while a cell runs synchronous code; so each
 * message is first offered to the lab extension, which sends it over a kernel subshell of
 * its own (read while a cell runs) and takes the event with preventDefault(). Without the
 * extension (VS Code, Colab, a page without it) or without subshells, the view says once
 * that its buttons wait for a running cell.
 */
import { h } from './dom';

/** The event the lab extension takes (PanelEvents.control in js/src/tokens.ts). */
export const CONTROL_EVENT = 'jupyter-agent:control';

/** `detail` of CONTROL_EVENT (IControlDetail in js/src/tokens.ts). */
export interface IControlDetail {
  kernelId: string;
  /** The widget's comm id (ipywidgets' model id). */
  commId: string;
  message: Record<string, unknown>;
  /** Set by the extension: whether the message goes over a subshell ('pending': not known yet). */
  subshell?: boolean | 'pending';
  /** Set by the extension with 'pending': resolves to whether it does. */
  known?: Promise<boolean>;
}

export class KernelChannel {
  /** Shown once no message of this view can go over a subshell (the caller places it). */
  readonly note: HTMLElement = h('div', {
    class: 'ja-line ja-note ja-no-subshell',
    hidden: true,
    text: "This kernel or frontend has no subshells: Stop and the panel's buttons take effect when a running cell ends."
  });

  private latest: boolean | 'pending' = false;

  /**
   * `ids`: the kernel's id and the widget's comm id, as the model's traits say now;
   * `fallback`: anywidget's `model.send`.
   */
  constructor(
    private readonly ids: () => { kernelId: string; commId: string },
    private readonly fallback: (message: Record<string, unknown>) => void
  ) {}

  /** How the latest message went: over a subshell, not, or not known yet. */
  get subshell(): boolean | 'pending' {
    return this.latest;
  }

  send(message: Record<string, unknown>): void {
    const { kernelId, commId } = this.ids();
    const detail: IControlDetail = { kernelId, commId, message };
    const taken =
      !!kernelId &&
      !!commId &&
      !document.dispatchEvent(
        new CustomEvent(CONTROL_EVENT, { detail, cancelable: true })
      );
    if (!taken) this.fallback(message);
    const subshell = taken ? (detail.subshell ?? false) : false;
    this.latest = subshell;
    if (subshell === 'pending')
      void detail.known?.then(known => this.settle(known));
    else this.settle(subshell);
  }

  /** One line for the view, whatever the number of messages; the latest word counts. */
  private settle(subshell: boolean): void {
    this.latest = subshell;
    this.note.hidden = subshell;
  }
}
