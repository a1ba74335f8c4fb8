/**
 * The panel's markdown renderer (src/panel/markdown.ts) builds DOM nodes from text and
 * never parses HTML: whatever the agent writes, the only elements are the markdown ones,
 * the only attributes a language class, an alignment and an http(s) href.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { renderInline, renderMarkdown } from '../src/panel/markdown';
import { fake, FakeElement, html, install } from './fakedom';

install();

function md(source: string): string {
  return html(renderMarkdown(source));
}

function elements(source: string): FakeElement[] {
  const root = new FakeElement('div');
  root.append(fake(renderMarkdown(source)));
  return root.descendants();
}

describe('the markdown renderer', () => {
  it('renders headings two levels down, so they stay below the panel title', () => {
    assert.equal(md('# Title'), '<h3 class="ja-md-heading">Title</h3>');
    assert.equal(md('#### Deep ##'), '<h6 class="ja-md-heading">Deep</h6>');
  });

  it('joins a paragraph with line breaks and renders inline spans', () => {
    assert.equal(
      md('one **bold** and *em*\ntwo `x < y` ~~gone~~'),
      '<p>one <strong>bold</strong> and <em>em</em><br>two <code>x &lt; y</code> <del>gone</del></p>'
    );
  });

  it('renders bullet, ordered and nested lists', () => {
    assert.equal(md('- a\n- b'), '<ul><li>a</li><li>b</li></ul>');
    assert.equal(md('3. c\n4. d'), '<ol start="3"><li>c</li><li>d</li></ol>');
    assert.equal(
      md('- a\n  - inner\n- b'),
      '<ul><li><p>a</p><ul><li>inner</li></ul></li><li>b</li></ul>'
    );
  });

  it('renders a fenced code block verbatim, with its language', () => {
    assert.equal(
      md('```python\nif a < b:\n    **x**\n```'),
      '<pre class="ja-code"><code class="language-python">if a &lt; b:\n    **x**</code></pre>'
    );
  });

  it('keeps an unfinished code block open to the end (streaming)', () => {
    assert.equal(
      md('```\nstill going'),
      '<pre class="ja-code"><code>still going</code></pre>'
    );
  });

  it('renders tables with alignment', () => {
    assert.equal(
      md('| a | b |\n|:--|--:|\n| 1 | 2 \\| 3 |'),
      '<table class="ja-md-table"><thead><tr><th style="text-align:left">a</th>' +
        '<th style="text-align:right">b</th></tr></thead><tbody><tr>' +
        '<td style="text-align:left">1</td><td style="text-align:right">2 | 3</td>' +
        '</tr></tbody></table>'
    );
  });

  it('renders quotes and rules', () => {
    assert.equal(md('> quoted'), '<blockquote><p>quoted</p></blockquote>');
    assert.equal(md('---'), '<hr>');
  });

  it('links http(s) URLs, in a new tab without an opener', () => {
    assert.equal(
      md('[docs](https://example.org/a) and http://x.org/b.'),
      '<p><a href="https://example.org/a" target="_blank" rel="noopener noreferrer">docs</a>' +
        ' and <a href="http://x.org/b" target="_blank" rel="noopener noreferrer">http://x.org/b</a>.</p>'
    );
  });

  it('does not nest links (a bare URL as a label, or in one)', () => {
    assert.equal(
      md('[https://a.org](https://b.org) **see https://c.org**'),
      '<p><a href="https://b.org" target="_blank" rel="noopener noreferrer">https://a.org</a>' +
        ' <strong>see <a href="https://c.org" target="_blank" rel="noopener noreferrer">https://c.org</a></strong></p>'
    );
  });

  it('renderInline appends spans to a parent', () => {
    const parent = new FakeElement('span');
    renderInline('a **b**', parent as unknown as ParentNode);
    assert.equal(html(parent), '<span>a <strong>b</strong></span>');
  });
});

describe('the markdown renderer sanitises', () => {
  const hostile = [
    '<script>alert(1)</script>',
    '<img src=x onerror="alert(1)">',
    '<a href="javascript:alert(1)" onclick="alert(1)">x</a>',
    '[click](javascript:alert(1))',
    '[data](data:text/html;base64,PHNjcmlwdD4=)',
    '[vb](VBScript:msgbox)',
    '<iframe src="https://evil.example"></iframe>',
    '<div style="background:url(javascript:alert(1))">raw</div>',
    '# <svg onload=alert(1)>',
    '- <b onmouseover=alert(1)>item</b>',
    '| <script>x</script> |\n|---|\n| <img onerror=y> |',
    '```"><script>alert(1)</script>\ncode\n```',
    '`<script>`',
    '**<script>alert(1)</script>**'
  ];
  const allowed = new Set([
    'p',
    'br',
    'h3',
    'h4',
    'h5',
    'h6',
    'ul',
    'ol',
    'li',
    'pre',
    'code',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
    'blockquote',
    'hr',
    'strong',
    'em',
    'del',
    'a'
  ]);

  for (const source of hostile) {
    it(`renders ${JSON.stringify(source)} inert`, () => {
      for (const element of elements(source)) {
        assert.ok(allowed.has(element.localName), element.localName);
        for (const [name, value] of element.attributes) {
          assert.ok(!name.startsWith('on'), `${name}="${value}"`);
          assert.ok(
            ['class', 'href', 'target', 'rel', 'style', 'start'].includes(name),
            name
          );
          if (name === 'href') assert.match(value, /^https?:\/\//);
          if (name === 'class')
            assert.match(value, /^(ja-[\w-]+|language-[\w+-]*)$/);
          if (name === 'style') assert.match(value, /^text-align:\w+$/);
        }
      }
    });
  }

  it('shows raw HTML as the text it is', () => {
    assert.equal(
      md('<script>alert(1)</script>'),
      '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'
    );
  });

  it('turns a link to a javascript: URL into its label, unlinked', () => {
    assert.equal(md('[click](javascript:void)'), '<p>click</p>');
    assert.equal(md('[click](JavaScript:alert(1))'), '<p>click)</p>');
  });

  it('keeps a code block language to word characters', () => {
    assert.equal(
      md('```"><script>\nx\n```'),
      '<pre class="ja-code"><code class="language-script">x</code></pre>'
    );
  });
});
