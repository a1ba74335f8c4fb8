/**
 * The jupyter_agent panel: the anywidget entry (`export default { render }`), bundled by
 * scripts/panel.js into jupyter_agent/jupyter/panel/static/panel.js, which panel.py loads.
 *
 * State comes from the model's traits (written by the kernel only); the transcript comes
 * as custom messages (see jupyter_agent/jupyter/panel/widget.py for the protocol); user actions
 * go to the kernel as commands. Every piece of text is put in the page with textContent or
 * text nodes: nothing the agent or the user wrote ever reaches innerHTML.
 */
import { REVEAL_CELL_EVENT } from './cards';
import { dropCellLinks } from './cell-links';
import { KernelChannel } from './channel';
import { ContextGauge } from './context';
import { h } from './dom';
import { interruptKernel, STOP_ANSWER_GRACE } from './interrupt';
import { FoldingControls } from './layout';
import { ModelPicker } from './model-picker';
import { PlanStrip } from './plan-strip';
import { Replies } from './replies';
import { notebookLabel, ResumeChoice } from './session-choice';
import type { SessionOfNotebook } from './session-choice';
import { SessionSearch } from './session-search';
import { SetupBox } from './setup-box';
import { statusText, usageText } from './status-text';
import { Transcript } from './transcript';
import { trustCard } from './trust';
import type {
  CommandArgs,
  CommandName,
  FoundSession,
  KernelMessage,
  PanelState,
  Reply,
  TranscriptEntry
} from './types';
import type { SavedSession } from './wire';

export { renderInline, renderMarkdown } from './markdown';
export { interruptKernel };

/** A listener on anywidget's model: each event passes its own arguments. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as anywidget types it
type Listener = (...args: any[]) => void;

/** The part of anywidget's model the panel uses. */
export interface IModel {
  get<K extends keyof PanelState>(name: K): PanelState[K];
  on(name: string, callback: Listener): void;
  off(name: string, callback: Listener): void;
  send(message: Record<string, unknown>): void;
}

function render({ model, el }: { model: IModel; el: HTMLElement }): () => void {
  const viewId = Math.random().toString(36).slice(2, 10);
  const listeners: [string, Listener][] = [];
  let disposed = false;
  const on = (name: string, fn: Listener) => {
    model.on(name, fn);
    listeners.push([name, fn]);
  };

  // Layout
  const status = h('span', {
    class: 'ja-status',
    role: 'status',
    'aria-live': 'polite'
  });
  const roleBadge = h('span', { class: 'ja-badge ja-role-badge' });
  const modelName = h('span', { class: 'ja-model' });
  const replay = h('span', { class: 'ja-replay', hidden: true });
  // What the model's provider lacks (no images, no prompt caching, no price), said plainly.
  const modelNotes = h('div', {
    class: 'ja-note ja-model-notes',
    hidden: true
  });
  const sandbox = h('span', { class: 'ja-sandbox', hidden: true });
  const notebook = h('div', { class: 'ja-notebook', hidden: true });
  const dockNote = h('div', { class: 'ja-note', hidden: true });
  const errors = h('div', { class: 'ja-errors', 'aria-live': 'assertive' });
  const transcriptEl = h('div', {
    class: 'ja-transcript',
    tabindex: '0',
    'aria-label': 'Transcript'
  });
  const waiting = h('div', {
    class: 'ja-line ja-meta',
    text: 'Connecting to the kernel…'
  });
  transcriptEl.append(waiting);

  const message = h('textarea', {
    class: 'ja-message',
    rows: 2,
    'aria-label': 'Message',
    placeholder: 'Ask the agent… (Enter sends, Shift+Enter starts a new line)'
  });
  const sendButton = h('button', {
    type: 'submit',
    class: 'ja-primary',
    text: 'Send'
  });
  const stopButton = h('button', {
    type: 'button',
    class: 'ja-danger ja-stop',
    text: 'Stop'
  });
  const pauseButton = h('button', {
    type: 'button',
    class: 'ja-pause',
    text: 'Pause',
    'aria-label': 'Pause the run',
    title: 'Pause before the next step or tool call; Resume goes on'
  });
  const inputForm = h(
    'form',
    { class: 'ja-input' },
    message,
    h('div', { class: 'ja-buttons' }, sendButton, pauseButton, stopButton)
  );

  const roleSelect = h('select', { 'aria-label': 'Role' });
  const modelPicker = new ModelPicker(wanted =>
    command('set_model', { model: wanted }).catch((error: Error) => {
      showError(error.message);
      throw error;
    })
  );
  const maxSteps = h('input', {
    type: 'number',
    min: 1,
    step: 1,
    class: 'ja-max-steps',
    'aria-label': 'Max iterations'
  });
  const sessionSelect = h('select', { 'aria-label': 'Session' });
  const resumeButton = h('button', { type: 'button', text: 'Resume' });
  const controls = h(
    'div',
    { class: 'ja-controls' },
    h('label', {}, 'Role ', roleSelect),
    modelPicker.el,
    h('label', {}, 'Max iterations ', maxSteps),
    h('label', { class: 'ja-session-picker' }, 'Session ', sessionSelect),
    resumeButton
  );
  // The search box finds past sessions by their words; a result resumes its session.
  const sessionSearch = new SessionSearch({
    search: query =>
      command('search_sessions', { query }).then(
        reply => (reply as Reply).found ?? ([] as FoundSession[])
      ),
    // Once resumed, the box and its results are cleared.
    resume: (found, from) =>
      askOrResume(found, from, () => {
        sessionSearch.input.value = '';
        sessionSearch.run();
      }),
    busy: () => model.get('busy')
  });
  // Before a session of another notebook is resumed: continue it here, or open it.
  let afterChoice: (() => void) | undefined;
  const resumeChoice = new ResumeChoice({
    continueHere: sessionId => resume(sessionId, true, afterChoice),
    closed: returnTo => (returnTo ?? sessionSelect).focus()
  });
  const usage = h('div', { class: 'ja-usage' });
  // Compact now: the command's reply or the run it starts (busy) sets the button again.
  const gauge = new ContextGauge(() => {
    focusInput();
    command('compact').catch((error: Error) => {
      showError(error.message);
      refreshContext();
    });
  });

  // No model to call yet (no key, or a key the API rejected): the set-up box says why
  // and takes a key.
  const setup = new SetupBox(
    (key, save) => command('set_key', { key, save }),
    () => focusInput()
  );

  // The trust prompt: what trusting this folder's settings would enable, as the kernel
  // rendered it, from the moment the panel opens until the folder is trusted.
  const trustBox = h('div', { class: 'ja-trust-box', hidden: true });

  const header = h(
    'div',
    { class: 'ja-header' },
    h('span', { class: 'ja-title', text: 'jupyter_agent' }),
    roleBadge,
    modelName,
    replay,
    sandbox,
    status
  );
  const root = h(
    'div',
    { class: 'ja-panel' },
    header,
    notebook,
    modelNotes,
    dockNote,
    setup.el,
    trustBox,
    transcriptEl,
    errors,
    inputForm
  );
  // The secondary controls: below the input, or in the header's menu when narrow.
  const folding = new FoldingControls(
    {
      root,
      header,
      wideAfter: inputForm,
      notebookLine: notebook,
      parts: [controls, resumeChoice.el, gauge.el, sessionSearch.el, usage]
    },
    `ja-more-${viewId}`
  );
  el.append(root);
  // A cell link on an approval card: say whose kernel the cell is in, for the lab
  // extension to find the notebook (the event goes on up to the document).
  root.addEventListener(REVEAL_CELL_EVENT, event => {
    const detail = (event as CustomEvent<{ kernelId?: string }>).detail;
    if (detail && !detail.kernelId) detail.kernelId = model.get('kernel_id');
  });

  // Commands and replies, over the lab extension's subshell when it has one.
  const channel = new KernelChannel(
    () => ({
      kernelId: model.get('kernel_id'),
      commId: model.get('widget_id')
    }),
    message => model.send(message)
  );
  const replies = new Replies(viewId, message => channel.send(message));
  errors.before(replies.waitNote);
  errors.before(channel.note);
  const command = <K extends CommandName>(name: K, args?: CommandArgs<K>) =>
    replies.command(name, args);
  const showError = (text: string) => {
    const line = h('div', { class: 'ja-line ja-error', text });
    errors.replaceChildren(line);
    setTimeout(() => line.remove(), 8000);
  };

  // One rule for focus: after an action that disables or removes the control used
  // (an answer, Allow or Deny, Stop, Execute plan, Send), focus goes to the message
  // input, which stays usable while the agent works (Send waits; Esc stops).
  const focusInput = () => message.focus();
  const transcript = new Transcript(transcriptEl, {
    command,
    busy: () => model.get('busy'),
    error: showError,
    focusInput
  });
  // The plan strip stays in view above the transcript's scroll; the transcript's plan
  // state drives it, and its button does what the plan card's does.
  const strip = new PlanStrip(() => transcript.plan.execute());
  transcriptEl.before(strip.el);
  transcript.plan.onChange = progress => strip.update(progress);
  let ready = false;

  on('msg:custom', (msg: KernelMessage | null) => {
    if (!msg || typeof msg !== 'object') return;
    switch (msg.type) {
      case 'reply':
        // A message this view sent that the kernel could not read: say so.
        if (!replies.settle(msg) && msg.id === null && !msg.ok)
          showError(msg.error || 'The kernel refused a message.');
        return;
      case 'snapshot':
        if (msg.view !== null && msg.view !== viewId) return;
        // The whole history is not news: the log is quiet while it is rebuilt.
        transcriptEl.setAttribute('aria-live', 'off');
        setTimeout(() => transcriptEl.setAttribute('aria-live', 'polite'), 500);
        transcript.reset();
        for (const entry of msg.entries) show(entry);
        transcript.renderDirty();
        transcript.scrollDown();
        ready = true;
        refresh();
        return;
      case 'events':
        // Before its snapshot, a view drops batches: the snapshot will hold them.
        if (ready) for (const entry of msg.entries) show(entry);
        return;
      case 'text':
        if (ready)
          transcript.apply({ kind: 'text_delta', n: msg.n, text: msg.text });
        return;
      default: {
        // Every message type is named above (the compiler checks); a newer kernel's is
        // reported, not silently dropped.
        const unknown: never = msg;
        console.error('jupyter_agent panel: unknown kernel message', unknown);
      }
    }
  });

  function show(entry: TranscriptEntry) {
    transcript.apply(entry);
    // What came before was held in another notebook (a session that went on here): its
    // cell links would show cells of this notebook that happen to have the same ids.
    if (entry.kind === 'note' && entry.cells_of)
      dropCellLinks(transcriptEl, entry.cells_of);
  }

  // State → view
  function refresh() {
    const busy = model.get('busy');
    status.textContent = statusText(model);
    status.dataset.state = model.get('status');
    roleBadge.textContent = model.get('role');
    modelName.textContent = model.get('model_name');
    const label = model.get('model_label');
    replay.hidden = !label;
    replay.textContent = label || '';
    const confinement = model.get('sandbox') || '';
    sandbox.hidden = !confinement;
    sandbox.textContent = confinement;
    sandbox.title = model.get('sandbox_detail') || '';
    sandbox.dataset.active = model.get('sandboxed') ? 'true' : 'false';
    stopButton.disabled = !busy;
    const pausing = busy && model.get('pausing') === true;
    pauseButton.disabled = !busy;
    pauseButton.textContent = pausing ? 'Resume' : 'Pause';
    // Named apart from the session picker's Resume.
    pauseButton.setAttribute(
      'aria-label',
      pausing ? 'Resume the run' : 'Pause the run'
    );
    pauseButton.title = pausing
      ? 'Go on from where the agent paused'
      : 'Pause before the next step or tool call; Resume goes on';
    sendButton.disabled = busy;
    sendButton.title = busy
      ? 'The agent is working: wait, or Stop it first'
      : '';
    roleSelect.disabled = busy;
    modelPicker.setBusy(busy);
    const notes = model.get('model_notes') || '';
    modelNotes.hidden = !notes;
    modelNotes.textContent = notes;
    resumeButton.disabled =
      busy ||
      !sessionSelect.value ||
      sessionSelect.value === model.get('session_id');
    root.dataset.busy = busy ? 'true' : 'false';
    refreshContext();
    // An older kernel has no model_ready: the box stays hidden.
    const needsSetup = model.get('model_ready') === false;
    setup.show(
      needsSetup ? model.get('model_setup') || '' : null,
      model.get('waiting_task') || ''
    );
    if (needsSetup && !busy) {
      status.textContent = 'set-up needed';
      status.dataset.state = 'setup';
    }
    transcript.refreshControls();
    sessionSearch.refresh();
  }

  function refreshTrust() {
    // An older kernel has no trust trait: no prompt.
    const prompt = model.get('trust') ?? null;
    trustBox.hidden = prompt === null;
    trustBox.replaceChildren(
      ...(prompt === null ? [] : [trustCard(prompt, trustFolder)])
    );
  }

  // Trust: the kernel's answer clears the prompt (the trait), or says the settings changed
  // since this prompt was made and sends the new one.
  function trustFolder(button: HTMLButtonElement) {
    button.disabled = true;
    focusInput();
    command('trust').catch((error: Error) => {
      button.disabled = false;
      showError(error.message);
    });
  }

  function refreshContext() {
    gauge.update(model.get('context'), model.get('busy'));
  }

  function refreshRoles() {
    const current = model.get('role');
    roleSelect.replaceChildren(
      ...(model.get('roles') || []).map(role => {
        const label = role.name.charAt(0).toUpperCase() + role.name.slice(1);
        const option = h('option', {
          value: role.name,
          title: role.description || undefined,
          text: label
        });
        option.selected = role.name === current;
        return option;
      })
    );
    roleSelect.value = current;
  }

  // The picker: this notebook's sessions first, then other notebooks' (each named), then
  // those whose notebook is not known, in groups when there is more than one kind.
  function refreshSessions() {
    const current = model.get('session_id');
    const sessions = model.get('sessions') || [];
    const option = (s: SavedSession) => {
      const when = new Date(s.updated * 1000).toLocaleString();
      const notebook = s.where === 'other' ? ` — ${notebookLabel(s)}` : '';
      const option = h('option', {
        value: s.id,
        text: `${s.title}${notebook} — ${when}${s.id === current ? ' (current)' : ''}`
      });
      option.selected = s.id === current;
      return option;
    };
    const groups: [string, SavedSession[]][] = [
      ['This notebook', sessions.filter(s => s.where === 'here')],
      ['Other notebooks', sessions.filter(s => s.where === 'other')],
      [
        'Notebook unknown',
        sessions.filter(s => s.where !== 'here' && s.where !== 'other')
      ]
    ];
    const kinds = groups.filter(([, list]) => list.length);
    const options: HTMLElement[] =
      kinds.length > 1 || kinds[0]?.[0] === 'Other notebooks'
        ? kinds.map(([label, list]) =>
            h('optgroup', { label }, ...list.map(option))
          )
        : sessions.map(option);
    if (!sessions.some(s => s.id === current))
      options.unshift(
        h('option', {
          value: current,
          text: '(current session)',
          selected: true
        })
      );
    sessionSelect.replaceChildren(...options);
    refresh();
  }

  function refreshNotebook() {
    const mode = model.get('bridge_mode');
    const text = model.get('notebook');
    notebook.hidden = !text;
    notebook.dataset.mode = mode;
    notebook.textContent =
      mode === 'file'
        ? `Notebook edits go to the file: ${text}`
        : mode === 'live'
          ? `Notebook: ${text}`
          : text;
  }

  function refreshDock() {
    const side = model.get('dock') === 'side';
    dockNote.hidden = true;
    if (!side) return;
    // Views are rendered before they are attached: only once in the page can a view
    // tell whether it is the docked one (inside the sidebar) or an inline one.
    if (!el.isConnected) {
      requestAnimationFrame(() => {
        if (!disposed) refreshDock();
      });
      return;
    }
    if (el.closest('[data-jupyter-agent-side]')) return;
    const event = new CustomEvent('jupyter-agent:dock', {
      detail: {
        where: 'side',
        kernelId: model.get('kernel_id'),
        widgetId: model.get('widget_id')
      },
      cancelable: true
    });
    const taken = !document.dispatchEvent(event);
    dockNote.hidden = false;
    dockNote.textContent = taken
      ? 'The agent panel is in the right sidebar.'
      : 'Docking in the sidebar needs the jupyter_agent JupyterLab extension; the panel stays here.';
    root.classList.toggle('ja-docked-away', taken);
  }

  for (const name of [
    'status',
    'detail',
    'stop_reason',
    'busy',
    'role',
    'model_name',
    'model_label',
    'sandbox',
    'sandboxed',
    'plan_ready',
    'model_ready',
    'model_setup',
    'waiting_task',
    'pausing',
    'model_notes'
  ])
    on(`change:${name}`, refresh);
  on('change:models', () => modelPicker.show(model.get('models')));
  on('change:roles', refreshRoles);
  on('change:role', refreshRoles);
  on('change:sessions', refreshSessions);
  on('change:session_id', refreshSessions);
  on('change:notebook', refreshNotebook);
  on('change:bridge_mode', refreshNotebook);
  on('change:usage', () => (usage.textContent = usageText(model.get('usage'))));
  on('change:context', refreshContext);
  on(
    'change:max_steps',
    () => (maxSteps.value = String(model.get('max_steps')))
  );
  on('change:dock', refreshDock);
  on('change:trust', refreshTrust);

  // View → kernel
  inputForm.addEventListener('submit', event => {
    event.preventDefault();
    const text = message.value.trim();
    if (!text) {
      showError('Type a message first.');
      message.focus();
      return;
    }
    if (model.get('busy')) return;
    sendButton.disabled = true;
    focusInput();
    command('send', { text, role: roleSelect.value }).then(
      () => {
        message.value = '';
      },
      (error: Error) => {
        showError(error.message);
        refresh();
      }
    );
  });
  message.addEventListener('keydown', event => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      inputForm.requestSubmit();
    }
  });
  const stop = () => {
    stopButton.disabled = true;
    focusInput();
    const answered = command('stop');
    answered.catch((error: Error) => showError(error.message));
    // A kernel that reads the Stop (over our subshell, or JupyterLab's comms over
    // subshells) interrupts the cell its agent runs itself. Only one that does not
    // answer soon is held by that cell: then the frontend interrupts it, once.
    if (model.get('running_code') && channel.subshell !== true) {
      const late = setTimeout(
        () => void interruptKernel(model.get('kernel_id')),
        STOP_ANSWER_GRACE
      );
      const answeredSoon = () => clearTimeout(late);
      answered.then(answeredSoon, answeredSoon);
    }
  };
  stopButton.addEventListener('click', stop);
  pauseButton.addEventListener('click', () => {
    const resuming = model.get('pausing') === true;
    command(resuming ? 'unpause' : 'pause').catch((error: Error) =>
      showError(error.message)
    );
  });
  // Esc anywhere in the panel stops a running agent, unless something inside used the
  // key first (an open menu closes and prevents the default) or an IME is composing.
  root.addEventListener('keydown', event => {
    if (
      event.key !== 'Escape' ||
      event.defaultPrevented ||
      event.isComposing ||
      !model.get('busy') ||
      stopButton.disabled
    )
      return;
    event.preventDefault();
    event.stopPropagation();
    stop();
  });
  roleSelect.addEventListener('change', () => {
    command('set_role', { role: roleSelect.value }).catch((error: Error) => {
      showError(error.message);
      refreshRoles();
    });
  });
  maxSteps.addEventListener('change', () => {
    const value = parseInt(maxSteps.value, 10);
    command('set_max_steps', { value }).catch((error: Error) => {
      showError(error.message);
      maxSteps.value = String(model.get('max_steps'));
    });
  });
  sessionSelect.addEventListener('change', refresh);
  // A session of another notebook asks first (continue here, or open that notebook).
  function askOrResume(
    session: SessionOfNotebook,
    from: HTMLElement,
    done?: () => void
  ) {
    if (session.where === 'other') {
      afterChoice = done;
      resumeChoice.ask(session, from);
      return;
    }
    resume(session.id, false, done);
  }
  function resume(sessionId: string, here: boolean, done?: () => void) {
    resumeButton.disabled = true;
    focusInput();
    const args = here
      ? { session_id: sessionId, here }
      : { session_id: sessionId };
    command('resume', args).then(done, (error: Error) => {
      showError(error.message);
      refresh();
    });
  }
  resumeButton.addEventListener('click', () => {
    const id = sessionSelect.value;
    const saved = (model.get('sessions') || []).find(s => s.id === id);
    if (saved) askOrResume(saved, resumeButton);
    else resume(id, false);
  });

  refreshRoles();
  modelPicker.show(model.get('models'));
  refreshSessions();
  refreshNotebook();
  refreshDock();
  refreshTrust();
  usage.textContent = usageText(model.get('usage'));
  maxSteps.value = String(model.get('max_steps'));
  refresh();
  channel.send({ type: 'hello', view: viewId });

  return () => {
    disposed = true;
    folding.dispose();
    sessionSearch.dispose();
    for (const [name, fn] of listeners) model.off(name, fn);
    replies.dispose();
  };
}

export default { render };
