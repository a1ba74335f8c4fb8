/**
 * An approval's card: what the call would do (the cell, the command and its programs, the
 * file's diff), its warnings, and Allow, Always allow (its scope said below it, the other
 * scopes in its menu) and Deny. A command is shown once, in its code block.
 */
import { cellLink, inputCells, withCellLinks } from './cell-links';
import { clip, h, pretty } from './dom';
import { highlightCode } from './highlight';
import { nameOf, toolLabel, withCode, withoutBackticks } from './labels';
import { menuButton } from './menu';
import type { IPendingCard } from './question-card';
import { renderDiff } from './tool-card';
import type { EntryOf } from './types';

type Preview = NonNullable<EntryOf<'permission_request'>['preview']>;

/** What the call would do, as the user judges it: the code, the command, the diff. */
export function previewSection(preview: Preview): HTMLElement | null {
  // `kind` is optional in the generated types (it has a default); the kernel always sends it.
  if (preview.kind === 'cell') return cellPreview(preview);
  if (preview.kind === 'command') return commandPreview(preview);
  if (preview.kind === 'file') return filePreview(preview);
  return null;
}

function cellWhere(p: Extract<Preview, { kind?: 'cell' }>): string {
  return p.index !== null && p.index !== undefined
    ? `cell ${p.index}${p.count ? ` of ${p.count}` : ''}`
    : 'a cell';
}

/** An approval card's accessible name: what the call does ("Approval: run cell 3 of 12"). */
function approvalName(e: EntryOf<'permission_request'>): string {
  const preview = e.preview;
  if (preview?.kind === 'cell' && preview.index)
    return `Approval: run ${cellWhere(preview)}`;
  const summary = nameOf(e.summary || e.tool_name);
  return `Approval: ${summary.charAt(0).toLowerCase()}${summary.slice(1)}`;
}

function cellPreview(p: Extract<Preview, { kind?: 'cell' }>): HTMLElement {
  const where = cellWhere(p);
  const link = cellLink(p.cell_id, where);
  return h(
    'div',
    { class: 'ja-preview ja-preview-cell' },
    h('p', { class: 'ja-preview-where' }, 'Runs ', link, ':'),
    h(
      'pre',
      { class: 'ja-pre ja-code-block' },
      highlightCode(clip(p.source), p.language || 'python')
    )
  );
}

const EFFECT_LABELS: Record<string, string> = {
  inert: 'changes nothing',
  reads: 'only reads',
  writes: 'writes',
  runs_code: 'runs code',
  unknown: 'unknown'
};

function commandPreview(
  p: Extract<Preview, { kind?: 'command' }>
): HTMLElement {
  // A line of one program is already in the code block above: its item says only what it
  // does, not the command a third time.
  const alone =
    (p.programs || []).length === 1 &&
    !(p.redirects || []).length &&
    p.programs![0].text.trim() === p.command.trim();
  const programs = (p.programs || []).map(program => {
    const label = EFFECT_LABELS[program.effect] ?? program.effect;
    // What the analysis says of a read-only program when "only reads" would be wrong
    // ("no file effects" for `sleep 30`) is what it does.
    const does =
      program.effect === 'reads' && program.note ? program.note : label;
    return h(
      'li',
      { 'data-effect': program.effect },
      alone ? null : h('code', { text: program.text }),
      alone ? null : ' ',
      h('span', { class: 'ja-effect', text: does }),
      program.note && program.note !== does && program.note !== label
        ? ` — ${program.note}`
        : '',
      (program.writes || []).length
        ? ` (${(program.writes || []).join(', ')})`
        : ''
    );
  });
  const redirects = (p.redirects || []).map(text =>
    h(
      'li',
      { 'data-effect': 'writes' },
      h('code', { text }),
      ' ',
      h('span', { class: 'ja-effect', text: 'writes' }),
      ' — a redirection'
    )
  );
  return h(
    'div',
    { class: 'ja-preview ja-preview-command' },
    h(
      'pre',
      { class: 'ja-pre ja-code-block' },
      highlightCode(clip(p.command), 'bash')
    ),
    p.working_dir && p.working_dir !== '.'
      ? h('p', { class: 'ja-meta', text: `in ${p.working_dir}` })
      : null,
    programs.length || redirects.length
      ? h(
          'ul',
          { class: 'ja-programs', 'aria-label': 'What it runs' },
          programs,
          redirects
        )
      : null,
    p.sandbox
      ? h('p', { class: 'ja-preview-sandbox', text: `Sandbox: ${p.sandbox}` })
      : null
  );
}

const FILE_ACTIONS: Record<string, string> = {
  create: 'Creates',
  overwrite: 'Replaces',
  edit: 'Edits',
  delete: 'Deletes'
};

function filePreview(p: Extract<Preview, { kind?: 'file' }>): HTMLElement {
  return h(
    'div',
    { class: 'ja-preview ja-preview-file' },
    h(
      'p',
      { class: 'ja-preview-where' },
      `${FILE_ACTIONS[p.action] ?? p.action} `,
      h('code', { text: p.path })
    ),
    p.diff
      ? renderDiff(clip(p.diff))
      : h('p', { class: 'ja-meta', text: 'Not a text file: no diff to show.' })
  );
}

/** `decide(allow, remember, scope)`: Allow, Always allow (in a scope), Deny. `known`:
 * where cells are (the transcript's), so the call's cells are named by their place. */
export function approvalCard(
  e: EntryOf<'permission_request'>,
  decide: (
    card: IPendingCard,
    allow: boolean,
    remember: boolean,
    scope: string | null
  ) => void,
  known?: ReadonlyMap<string, number>
): IPendingCard {
  const remember = e.remember ?? null;
  const options = e.remember_options || [];
  const first = options[0] ?? null;
  const allow = h('button', {
    type: 'button',
    class: 'ja-primary',
    text: 'Allow'
  });
  // "Always allow", as for every tool: the scope it takes is said in the line below the
  // card's body, and the other scopes are in the menu beside it.
  const always = h('button', {
    type: 'button',
    class: 'ja-always',
    text: 'Always allow',
    hidden: remember === null && first === null
  });
  const more = h('button', {
    type: 'button',
    class: 'ja-always-more',
    'aria-label': 'Other scopes',
    text: '▾',
    hidden: options.length < 2
  });
  const menu = h('div', {
    class: 'ja-always-menu',
    role: 'menu',
    'aria-label': '“Always allow” scopes',
    hidden: true
  });
  const deny = h('button', {
    type: 'button',
    class: 'ja-danger',
    text: 'Deny'
  });
  const items = options.map(option =>
    h(
      'button',
      {
        type: 'button',
        role: 'menuitem',
        class: 'ja-scope',
        'data-scope': option.id,
        title: `Remembers for this session: ${withoutBackticks((option.rules || []).join('; '))}`
      },
      withCode(option.label)
    )
  );
  menu.append(...items);
  const buttons = [allow, always, more, ...items, deny];
  const answered = h('p', { class: 'ja-answered', hidden: true });
  const warnings = (e.warnings || []).map(text => h('li', {}, withCode(text)));
  // The cells the call names, at the place the preview gives (a run's cell).
  const cells = inputCells(e.input);
  for (const id of cells.keys()) cells.set(id, known?.get(id));
  if (e.preview?.kind === 'cell' && e.preview.index)
    cells.set(e.preview.cell_id, e.preview.index);
  const card = h(
    'section',
    { class: 'ja-card ja-approval ja-flash', 'aria-label': approvalName(e) },
    h(
      'div',
      { class: 'ja-card-head' },
      h('h3', { text: 'Approval needed' }),
      h('span', { class: 'ja-badge', text: toolLabel(e.tool_name) })
    ),
    // A command's summary ("Run: …") would repeat the code block: the block says it.
    e.preview?.kind === 'command'
      ? null
      : h(
          'p',
          { class: 'ja-approval-summary' },
          withCellLinks(e.summary, cells)
        ),
    e.preview ? previewSection(e.preview) : null,
    // The alert holds the list (a list with the alert's role would no longer be a list,
    // and its items would belong to none).
    warnings.length
      ? h(
          'div',
          { class: 'ja-warnings', role: 'alert', 'aria-label': 'Warnings' },
          h('ul', {}, warnings)
        )
      : null,
    e.reason ? h('p', { class: 'ja-context' }, withCode(e.reason)) : null,
    h(
      'p',
      { class: 'ja-remember' },
      remember === null
        ? '“Always allow” is not offered: a call like this asks every time.'
        : ['“Always allow” remembers: ', ...withCode(remember), '.']
    ),
    h(
      'details',
      { class: 'ja-raw-input' },
      h('summary', { text: 'Input' }),
      h('pre', { class: 'ja-pre', text: clip(pretty(e.input)) })
    ),
    h(
      'div',
      { class: 'ja-actions' },
      allow,
      h('span', { class: 'ja-always-group' }, always, more, menu),
      deny
    ),
    answered
  );
  if (remember !== null)
    always.title = `Remembers for this session: ${withoutBackticks(remember)}`;
  const parts: IPendingCard = { card, buttons, answered };
  // Its keys and focus: the menu pattern (menu.ts).
  const scopes = menuButton(more, menu, items);
  allow.addEventListener('click', () => decide(parts, true, false, null));
  always.addEventListener('click', () =>
    decide(parts, true, true, first ? first.id : null)
  );
  items.forEach((item, i) =>
    item.addEventListener('click', () => {
      scopes.close();
      decide(parts, true, true, options[i].id);
    })
  );
  deny.addEventListener('click', () => decide(parts, false, false, null));
  return parts;
}
