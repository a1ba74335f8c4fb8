/**
 * The approval moment (src/panel/approval-card.ts, pending-cards.ts) on a fake DOM: the
 * card shows the call itself — a cell's code highlighted, a command's programs, a file's
 * diff — once each, and stays inert whatever the code holds; "Always allow" is a button
 * of two words whose scope is said under the card's body, the other scopes in its menu;
 * quoted programs and rules show as code, never as backticks; the tool row says it waits
 * for the user, and a failure is red with its line on the row.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import type { EntryOf } from '../src/panel/types';
import { html, install } from './fakedom';
import { transcriptHarness } from './transcript-harness';

install();

const setup = transcriptHarness;

const HOSTILE =
  'x = "<img src=x onerror=alert(1)>"\n# </span><script>alert(2)</script>';

function request(
  extra: Partial<EntryOf<'permission_request'>> = {}
): EntryOf<'permission_request'> {
  return {
    kind: 'permission_request',
    request_id: 'r1',
    tool_use_id: 'tu1',
    tool_name: 'run_cell',
    summary: 'Run cell c3',
    input: { cell_id: 'c3' },
    remember: 'allow tool run_cell',
    remember_options: [
      {
        id: 'tool',
        label: 'run_cell this session',
        rules: ['allow tool run_cell']
      }
    ],
    preview: {
      kind: 'cell',
      cell_id: 'c3',
      source: 'import pandas as pd\ndf = pd.read_csv("sales.csv")  # load',
      language: 'python',
      index: 3,
      count: 12
    },
    ...extra
  };
}

describe('an approval card', () => {
  it("shows a cell's code highlighted, where the cell is, and the raw input collapsed", () => {
    const t = setup();
    t.apply(request());
    const [card] = t.find('section.ja-approval');
    const code = card.querySelector('code.ja-code')!;
    assert.match(code.className, /language-python/);
    assert.equal(
      code.textContent,
      'import pandas as pd\ndf = pd.read_csv("sales.csv")  # load'
    );
    assert.ok(code.querySelector('span.hljs-keyword'), html(code));
    assert.ok(code.querySelector('span.hljs-string'), html(code));
    assert.ok(code.querySelector('span.hljs-comment'), html(code));
    const link = card.querySelector('.ja-preview-where a.ja-reveal-cell')!;
    assert.equal(link.textContent, 'cell 3 of 12');
    assert.match(link.title, /c3/); // the id on hover, with or without the extension
    const raw = card.querySelector('details.ja-raw-input')!;
    assert.equal(raw.hasAttribute('open'), false);
    assert.match(raw.textContent, /"cell_id": "c3"/);
  });

  it('stays inert for hostile code: every character is text', () => {
    const t = setup();
    t.apply(
      request({
        preview: {
          kind: 'cell',
          cell_id: 'c<b>',
          source: HOSTILE,
          language: 'python',
          index: 1,
          count: 1
        }
      })
    );
    const [card] = t.find('section.ja-approval');
    const code = card.querySelector('code.ja-code')!;
    assert.equal(code.textContent, HOSTILE);
    const out = html(card);
    assert.ok(!out.includes('<img'), out);
    assert.ok(!out.includes('<script'), out);
    assert.ok(!out.includes('<b>'), out);
    for (const el of card.descendants()) {
      assert.ok(
        ['span', 'code', 'pre'].includes(el.localName) ||
          !card.querySelector('code')!.descendants().includes(el)
      );
      for (const name of el.attributes.keys())
        assert.ok(!name.startsWith('on'), name);
    }
    for (const el of code.descendants()) assert.equal(el.localName, 'span');
  });

  it('asks JupyterLab to show the cell when its link is clicked', () => {
    const t = setup();
    const seen: unknown[] = [];
    t.root.addEventListener('jupyter-agent:reveal-cell', event =>
      seen.push((event as unknown as CustomEvent).detail)
    );
    t.apply(request());
    t.find('a.ja-reveal-cell')[0].click();
    assert.deepEqual(seen, [{ cellId: 'c3' }]);
  });

  it("shows a command's programs with what each does, and the sandbox", () => {
    const t = setup();
    t.apply(
      request({
        tool_name: 'execute_command',
        preview: {
          kind: 'command',
          command: 'git log -3 && rm a.tmp > out.txt',
          programs: [
            {
              text: 'git log -3',
              program: 'git',
              effect: 'reads',
              note: 'only reads'
            },
            {
              text: 'rm a.tmp',
              program: 'rm',
              effect: 'writes',
              note: 'deletes files',
              writes: ['a.tmp']
            }
          ],
          redirects: ['> out.txt'],
          sandbox:
            'commands sandboxed (bubblewrap): writes only in the workspace'
        }
      })
    );
    const [card] = t.find('section.ja-approval');
    assert.equal(
      card.querySelector('code.ja-code')!.textContent,
      'git log -3 && rm a.tmp > out.txt'
    );
    const items = card.querySelectorAll('ul.ja-programs li');
    assert.deepEqual(
      items.map(li => [li.dataset.effect, li.textContent]),
      [
        ['reads', 'git log -3 only reads'],
        ['writes', 'rm a.tmp writes — deletes files (a.tmp)'],
        ['writes', '> out.txt writes — a redirection']
      ]
    );
    assert.equal(
      card.querySelector('p.ja-preview-sandbox')!.textContent,
      'Sandbox: commands sandboxed (bubblewrap): writes only in the workspace'
    );
  });

  it('shows a command once, says what `sleep` does, and quotes as code', () => {
    const t = setup();
    t.apply(
      request({
        tool_name: 'execute_command',
        summary: 'Run: sleep 30',
        input: { command: 'sleep 30' },
        reason: '`sleep 30`: shell commands need your approval',
        warnings: ['`sleep 30` waits'],
        remember: 'allow `sleep` (no file effects)',
        remember_options: [
          {
            id: 'read_only',
            label: '`sleep …` (no file effects)',
            rules: ['allow `sleep` (no file effects)']
          }
        ],
        preview: {
          kind: 'command',
          command: 'sleep 30',
          programs: [
            {
              text: 'sleep 30',
              program: 'sleep',
              effect: 'reads',
              note: 'no file effects'
            }
          ]
        }
      })
    );
    const [card] = t.find('section.ja-approval');
    // The command is in its code block; no "Run: sleep 30" above it, and its one program
    // is not listed again: the list says what it does.
    assert.equal(card.querySelectorAll('p.ja-approval-summary').length, 0);
    assert.equal(card.querySelector('code.ja-code')!.textContent, 'sleep 30');
    const [item] = card.querySelectorAll('ul.ja-programs li');
    assert.equal(item.textContent, 'no file effects');
    assert.equal(item.querySelectorAll('code').length, 0);
    const visible = [...card.children]
      .filter(c => c.localName !== 'details') // the raw input, folded
      .map(c => c.textContent)
      .join('\n');
    assert.equal(visible.split('sleep 30').length - 1, 3); // block, reason, warning
    assert.ok(!visible.includes('only reads'), visible);
    // Quoted words are code, not backticks.
    assert.ok(!visible.includes('`'), visible);
    const remember = card.querySelector('p.ja-remember')!;
    assert.equal(
      html(remember),
      '<p class="ja-remember">“Always allow” remembers: allow ' +
        '<code class="ja-quoted">sleep</code> (no file effects).</p>'
    );
    assert.deepEqual(
      card
        .querySelectorAll('p.ja-context code, .ja-warnings li code')
        .map(c => c.textContent),
      ['sleep 30', 'sleep 30']
    );
    // The warnings are an alert holding a list: the list keeps its role, so its items
    // are in one (axe-core's listitem).
    const [alert] = card.querySelectorAll('div[role="alert"]');
    assert.equal(alert.getAttribute('aria-label'), 'Warnings');
    const [list] = alert.children;
    assert.equal(list.localName, 'ul');
    assert.equal(list.getAttribute('role'), null);
    assert.equal(list.children.length, 1);
    assert.equal(list.children[0].localName, 'li');
    const always = card.querySelector('button.ja-always')!;
    assert.equal(always.textContent, 'Always allow');
    assert.equal(
      always.title,
      'Remembers for this session: allow sleep (no file effects)'
    );
  });

  it('keeps a backtick that opens nothing as text', () => {
    const t = setup();
    t.apply(request({ reason: 'a `b` c `d' }));
    const reason = t.find('p.ja-context')[0];
    assert.equal(reason.textContent, 'a b c `d');
    assert.deepEqual(
      reason.querySelectorAll('code').map(c => c.textContent),
      ['b']
    );
  });

  it("shows a file write's diff as tool cards do", () => {
    const t = setup();
    t.apply(
      request({
        tool_name: 'delete_file',
        preview: {
          kind: 'file',
          path: 'old.csv',
          action: 'delete',
          diff: '--- a/old.csv\n+++ /dev/null\n@@ -1 +0,0 @@\n-<img src=x onerror=alert(1)>'
        }
      })
    );
    const [card] = t.find('section.ja-approval');
    assert.match(
      card.querySelector('p.ja-preview-where')!.textContent,
      /^Deletes old.csv$/
    );
    const del = card.querySelector('pre.ja-diff span.ja-diff-del')!;
    assert.equal(del.textContent, '-<img src=x onerror=alert(1)>\n');
    assert.ok(!html(card).includes('<img'));
  });

  it('"Always allow" is two words, its scope said below, its menu sends the one chosen', () => {
    const t = setup();
    t.apply(
      request({
        tool_name: 'execute_command',
        preview: null,
        remember: 'allow `git log` when it only reads',
        remember_options: [
          {
            id: 'read_only',
            label: '`git log …` when it only reads',
            rules: ['allow `git log` when it only reads']
          },
          {
            id: 'exact',
            label: 'this exact command',
            rules: ['allow exactly `git log -3`']
          }
        ]
      })
    );
    const [card] = t.find('section.ja-approval');
    const always = card.querySelector('button.ja-always')!;
    assert.equal(always.textContent, 'Always allow');
    assert.equal(
      card.querySelector('p.ja-remember')!.textContent,
      '“Always allow” remembers: allow git log when it only reads.'
    );
    const more = card.querySelector('button.ja-always-more')!;
    const menu = card.querySelector('div.ja-always-menu')!;
    assert.equal(menu.hasAttribute('hidden'), true);
    more.click();
    assert.equal(menu.hasAttribute('hidden'), false);
    assert.equal(more.getAttribute('aria-expanded'), 'true');
    const scopes = menu.querySelectorAll('button.ja-scope');
    assert.deepEqual(
      scopes.map(b => [b.getAttribute('role'), b.textContent]),
      [
        ['menuitem', 'git log … when it only reads'],
        ['menuitem', 'this exact command']
      ]
    );
    scopes[1].click();
    assert.deepEqual(t.commands, [
      [
        'approve',
        { request_id: 'r1', allow: true, remember: true, scope: 'exact' }
      ]
    ]);
    assert.ok(always.hasAttribute('disabled'));
  });

  it('offers no menu when there is one scope, and the button sends it', () => {
    const t = setup();
    t.apply(request());
    const [card] = t.find('section.ja-approval');
    assert.equal(
      card.querySelector('button.ja-always-more')!.hasAttribute('hidden'),
      true
    );
    card.querySelector('button.ja-always')!.click();
    assert.deepEqual(t.commands, [
      [
        'approve',
        { request_id: 'r1', allow: true, remember: true, scope: 'tool' }
      ]
    ]);
  });
});

describe('a tool row', () => {
  it('says "waiting for you" while its approval waits, then runs again', () => {
    const t = setup();
    t.apply({
      kind: 'tool_start',
      tool_use_id: 'tu1',
      name: 'run_cell',
      input: { cell_id: 'c3' },
      summary: 'Run cell c3'
    });
    const [row] = t.find('details.ja-tool');
    assert.equal(
      row.querySelector('span.ja-tool-status')!.textContent,
      'running…'
    );
    t.apply(request());
    assert.equal(row.dataset.state, 'waiting');
    assert.equal(
      row.querySelector('span.ja-tool-status')!.textContent,
      'waiting for you'
    );
    t.apply({
      kind: 'permission_response',
      request_id: 'r1',
      tool_name: 'run_cell',
      allowed: true
    });
    assert.equal(row.dataset.state, 'running');
    assert.equal(
      row.querySelector('span.ja-tool-status')!.textContent,
      'running…'
    );
  });

  it('is red with its error line when the cell raised, though not an error to the model', () => {
    const t = setup();
    t.apply(
      {
        kind: 'tool_start',
        tool_use_id: 'tu1',
        name: 'run_cell',
        input: {},
        summary: 'Run cell c3'
      },
      {
        kind: 'tool_end',
        tool_use_id: 'tu1',
        name: 'run_cell',
        result: 'Cell c3 [4] raised ZeroDivisionError: division by zero\n…',
        is_error: false,
        duration: 0.25,
        error_line: 'ZeroDivisionError: division by zero'
      }
    );
    const [row] = t.find('details.ja-tool');
    assert.equal(row.dataset.state, 'error');
    assert.equal(
      row.querySelector('span.ja-tool-status')!.textContent,
      'failed · 250 ms'
    );
    const line = row.querySelector('summary span.ja-tool-error-line')!;
    assert.equal(line.hasAttribute('hidden'), false);
    assert.equal(line.textContent, 'ZeroDivisionError: division by zero');
  });

  it('is green with no error line when the call succeeded', () => {
    const t = setup();
    t.apply({
      kind: 'tool_end',
      tool_use_id: 'tu2',
      name: 'run_cell',
      result: 'Cell c3 ran [5].',
      duration: 1.5
    });
    const [row] = t.find('details.ja-tool');
    assert.equal(row.dataset.state, 'done');
    assert.equal(
      row.querySelector('span.ja-tool-error-line')!.hasAttribute('hidden'),
      true
    );
  });
});

describe("an MCP server's tool", () => {
  it('is named by its server and its own name on the approval card', () => {
    const t = setup();
    t.apply(
      request({
        tool_name: 'mcp__github__search_issues',
        summary: 'github · search_issues("query": "bug")',
        input: { query: 'bug' },
        preview: null
      })
    );
    const [card] = t.find('section.ja-approval');
    assert.equal(
      card.querySelector('span.ja-badge')!.textContent,
      'github · search_issues'
    );
    assert.match(
      card.querySelector('p.ja-approval-summary')!.textContent!,
      /^github · search_issues/
    );
  });

  it('is named by its server on its row when it has no summary', () => {
    const t = setup();
    t.apply({
      kind: 'tool_start',
      tool_use_id: 'tu9',
      name: 'mcp__docs__fetch_page',
      input: {},
      summary: ''
    });
    const [row] = t.find('details.ja-tool');
    assert.equal(
      row.querySelector('span.ja-tool-summary')!.textContent,
      'docs · fetch_page'
    );
  });
});
