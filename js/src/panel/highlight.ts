/**
 * Syntax highlighting for the code an approval card shows. highlight.js escapes every
 * character of the source it is given; its result is read back here as nothing but
 * `<span class="hljs-…">` and text (anything else, and the code shows as plain text), and
 * built with text nodes, so no markup from a cell ever reaches the page.
 */
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import python from 'highlight.js/lib/languages/python';

hljs.registerLanguage('python', python);
hljs.registerLanguage('bash', bash);

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#x27;': "'",
  '&#39;': "'"
};

/** `<code>` with `source` highlighted as `language` (plain text when not python/bash). */
export function highlightCode(source: string, language: string): HTMLElement {
  const code = document.createElement('code');
  const lang = hljs.getLanguage(language) ? language : null;
  code.className = `ja-code hljs${lang ? ` language-${lang}` : ''}`;
  if (!lang || !spansInto(code, highlighted(source, lang)))
    code.replaceChildren(document.createTextNode(source));
  return code;
}

function highlighted(source: string, language: string): string {
  try {
    return hljs.highlight(source, { language, ignoreIllegals: true }).value;
  } catch {
    return '';
  }
}

/** Build `html` (spans with classes, escaped text) into `into`; false on anything else
 * (the caller then replaces what was built). */
function spansInto(into: HTMLElement, html: string): boolean {
  if (!html) return false;
  const stack: HTMLElement[] = [into];
  const token = /<span class="([\w\- ]+)">|<\/span>|[^<]+/gy;
  let at = 0;
  for (let m = token.exec(html); m; m = token.exec(html)) {
    at = token.lastIndex;
    const top = stack[stack.length - 1];
    if (m[1] !== undefined) {
      const span = document.createElement('span');
      span.className = m[1];
      top.append(span);
      stack.push(span);
    } else if (m[0] === '</span>') {
      if (stack.length === 1) return false;
      stack.pop();
    } else {
      const text = m[0].replace(
        /&(?:amp|lt|gt|quot|#x27|#39);/g,
        e => ENTITIES[e]
      );
      top.append(document.createTextNode(text));
    }
  }
  return at === html.length && stack.length === 1;
}
