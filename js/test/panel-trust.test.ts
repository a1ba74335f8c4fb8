/**
 * The trust prompt (src/panel/trust.ts) on a fake DOM: every effect the kernel rendered
 * is listed under its group, the settings' own text is shown as text (never markup), the
 * button asks the kernel, and the transcript says what applies once trusted.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { trustCard, trustedLine } from '../src/panel/trust';
import type { TrustPrompt } from '../src/panel/types';
import { FakeElement, html, install } from './fakedom';
import { transcriptHarness } from './transcript-harness';

install();

const HOSTILE = '<img src=x onerror=alert(1)>';

function prompt(rules = 12): TrustPrompt {
  return {
    folder: '/work/repo',
    source: '/work/repo/.jupyter_agent/settings.toml',
    effects: [
      {
        kind: 'mcp_server',
        summary:
          'Connect to `https://h.example/${ANTHROPIC_API_KEY}` as the MCP server docs',
        details: [
          { label: 'url', value: 'https://h.example/${ANTHROPIC_API_KEY}' },
          { label: 'header', name: HOSTILE, value: `Bearer ${HOSTILE}` }
        ]
      },
      ...Array.from({ length: rules }, (_, i) => ({
        kind: 'rule' as const,
        summary: `Allow commands starting with \`tool${i}\`, for every role`,
        details: [{ label: 'matcher prefix', value: `tool${i}` }]
      }))
    ]
  };
}

describe('the trust prompt', () => {
  it('lists every effect under its group, never "and N more"', () => {
    const card = trustCard(
      prompt(12),
      () => undefined
    ) as unknown as FakeElement;
    const items = card.querySelectorAll('li.ja-trust-effect');
    assert.equal(items.length, 13);
    const headings = card.querySelectorAll('h4').map(h => h.textContent);
    assert.deepEqual(headings, [
      'Programs and servers it would start or reach',
      'Rules'
    ]);
    for (let i = 0; i < 12; i++)
      assert.match(card.textContent, new RegExp(`tool${i}\``));
    assert.doesNotMatch(card.textContent, /more/);
  });

  it("shows the settings' own text as text, in code", () => {
    const card = trustCard(
      prompt(1),
      () => undefined
    ) as unknown as FakeElement;
    assert.equal(card.querySelectorAll('img').length, 0);
    const codes = card.querySelectorAll('code').map(c => c.textContent);
    assert.ok(codes.includes(HOSTILE), codes.join(' | '));
    assert.ok(codes.includes(`Bearer ${HOSTILE}`));
    assert.match(html(card), /&lt;img src=x onerror=alert\(1\)&gt;/);
  });

  it('has one button, which hands itself to the caller', () => {
    const pressed: unknown[] = [];
    const card = trustCard(prompt(1), button =>
      pressed.push(button)
    ) as unknown as FakeElement;
    const [button] = card.querySelectorAll('button');
    assert.equal(button.textContent, 'Trust this folder');
    button.click();
    assert.deepEqual(pressed, [button]);
  });
});

describe('the transcript once trusted', () => {
  it('says what applies now, each effect listed', () => {
    const t = transcriptHarness();
    t.apply({ kind: 'trusted', applied: prompt(3), n: 1 });
    const [line] = t.find('div.ja-trusted');
    assert.match(
      line.textContent,
      /Trusted this folder: its settings apply in full/
    );
    assert.equal(line.querySelectorAll('li.ja-trust-effect').length, 4);
    // What applies now, not what trusting would do.
    assert.deepEqual(
      line.querySelectorAll('h4').map(h => h.textContent),
      ['Programs and servers it may start or reach', 'Rules']
    );
    assert.doesNotMatch(line.textContent, /would/);
  });

  it('says when nothing was held back', () => {
    const empty = trustedLine({ folder: '/w', source: '', effects: [] });
    assert.match(
      (empty as unknown as FakeElement).textContent,
      /nothing was held back/
    );
  });

  it('shows a warning as its line, with no second Trust button', () => {
    // The kernel keeps its trust notice out of the transcript (the prompt above says it
    // from the panel's opening): a warning is a line, whatever it carries.
    const t = transcriptHarness();
    t.apply({
      kind: 'warning',
      run_id: 'r',
      message: 'A settings file was ignored.',
      action: 'trust_workspace',
      n: 1
    });
    const [line] = t.find('.ja-warning');
    assert.equal(line.textContent, '⚠ A settings file was ignored.');
    assert.equal(line.querySelector('button'), null);
  });
});

describe("the administrator's policy in the trust prompt", () => {
  it('lists what the policy fixes, as text, on the card and once trusted', () => {
    const fixed = {
      ...prompt(1),
      policy: ['Providers: anthropic', `Tools never offered: ${HOSTILE}`],
      policy_source: '/etc/jupyter_agent/policy.toml'
    };
    for (const el of [trustCard(fixed, () => undefined), trustedLine(fixed)]) {
      const note = (el as unknown as FakeElement).querySelector(
        '.ja-trust-policy'
      );
      assert.ok(note, 'the policy is said');
      assert.match(
        note.textContent,
        /administrator's policy \(\/etc\/jupyter_agent\/policy\.toml\) fixes:/
      );
      assert.deepEqual(
        note.querySelectorAll('li').map(li => li.textContent),
        ['Providers: anthropic', `Tools never offered: ${HOSTILE}`]
      );
      assert.ok(!html(el as unknown as FakeElement).includes('<img'));
    }
  });

  it('says nothing of a policy when there is none', () => {
    const card = trustCard(
      prompt(1),
      () => undefined
    ) as unknown as FakeElement;
    assert.equal(card.querySelector('.ja-trust-policy'), null);
  });
});
