/**
 * Small DOM helpers. Every piece of text goes in with textContent or text nodes: nothing
 * the agent or the user wrote ever reaches innerHTML.
 */

/** Characters of a tool's input or result shown in its card. */
export const MAX_PRE = 20000;

type AttrValue =
  string | number | boolean | null | undefined | ((event: Event) => void);
export type Attrs = Record<string, AttrValue>;
export type Child = Node | string | null | undefined | false;

/** An element with attributes (class, text, on<event> listeners, the rest as attributes). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs,
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K];
export function h(
  tag: string,
  attrs?: Attrs,
  ...children: (Child | Child[])[]
): HTMLElement;
export function h(
  tag: string,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElement {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = String(value);
    else if (key === 'text') node.textContent = String(value);
    else if (key.startsWith('on')) {
      // Only listeners: an on* attribute (code in a string) is never set.
      if (typeof value === 'function')
        node.addEventListener(key.slice(2), value);
    } else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(
      typeof child === 'string' ? document.createTextNode(child) : child
    );
  }
  return node;
}

export function clip(text: unknown, limit = MAX_PRE): string {
  const s = String(text ?? '');
  return s.length > limit
    ? `${s.slice(0, limit)}\n… (${s.length - limit} more characters)`
    : s;
}

export function pretty(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}
