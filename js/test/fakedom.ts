/**
 * A tiny DOM, just what the panel's markdown renderer and transcript touch, so their
 * tests run under node without jsdom. `install()` puts its `document` on globalThis;
 * `html(node)` serialises a node (text escaped) for assertions.
 */

type Listener = (event: FakeEvent) => void;

export class FakeEvent {
  defaultPrevented = false;
  propagationStopped = false;
  bubbles = false;
  constructor(readonly type: string) {}
  preventDefault(): void {
    this.defaultPrevented = true;
  }
  stopPropagation(): void {
    this.propagationStopped = true;
  }
}

/** A key press, bubbling as a real keydown does. */
export class FakeKeyboardEvent extends FakeEvent {
  bubbles = true;
  constructor(
    readonly key: string,
    readonly isComposing = false
  ) {
    super('keydown');
  }
}

/** Focus moving (focusout, focusin), bubbling; `relatedTarget`: where it goes. */
export class FakeFocusEvent extends FakeEvent {
  bubbles = true;
  constructor(
    type: 'focusout' | 'focusin',
    readonly relatedTarget: FakeNode | null
  ) {
    super(type);
  }
}

export class FakeNode {
  parentNode: FakeNode | null = null;
  childNodes: FakeNode[] = [];

  /** This node or one below it. */
  contains(other: FakeNode | null): boolean {
    for (let n = other; n; n = n.parentNode) if (n === this) return true;
    return false;
  }

  get textContent(): string {
    return this.childNodes.map(c => c.textContent).join('');
  }
  set textContent(value: string) {
    this.replaceChildren();
    if (value) this.append(value);
  }

  append(...nodes: (FakeNode | string)[]): void {
    for (const node of nodes) {
      const child = typeof node === 'string' ? new FakeText(node) : node;
      if (child instanceof FakeFragment) {
        this.append(...child.childNodes);
        continue;
      }
      child.remove();
      child.parentNode = this;
      this.childNodes.push(child);
    }
  }

  replaceChildren(...nodes: (FakeNode | string)[]): void {
    for (const child of this.childNodes) child.parentNode = null;
    this.childNodes = [];
    this.append(...nodes);
  }

  remove(): void {
    const parent = this.parentNode;
    if (!parent) return;
    // As in browsers, a node leaving the document takes the focus inside it along.
    const focused = fakeDocument.activeElement;
    if (focused && this.contains(focused)) fakeDocument.activeElement = null;
    parent.childNodes = parent.childNodes.filter(c => c !== this);
    this.parentNode = null;
  }

  before(node: FakeNode): void {
    const parent = this.parentNode!;
    node.remove();
    node.parentNode = parent;
    parent.childNodes.splice(parent.childNodes.indexOf(this), 0, node);
  }

  after(node: FakeNode): void {
    const parent = this.parentNode!;
    node.remove();
    node.parentNode = parent;
    parent.childNodes.splice(parent.childNodes.indexOf(this) + 1, 0, node);
  }

  get nextSibling(): FakeNode | null {
    const siblings = this.parentNode?.childNodes ?? [];
    return siblings[siblings.indexOf(this) + 1] ?? null;
  }

  prepend(node: FakeNode): void {
    if (this.childNodes.length) this.childNodes[0].before(node);
    else this.append(node);
  }

  insertBefore(node: FakeNode, next: FakeNode | null): void {
    if (next) next.before(node);
    else this.append(node);
  }
}

export class FakeText extends FakeNode {
  constructor(public data: string) {
    super();
  }
  get textContent(): string {
    return this.data;
  }
  set textContent(value: string) {
    this.data = value;
  }
}

export class FakeFragment extends FakeNode {}

const REFLECTED = new Set(['hidden', 'disabled', 'open', 'selected']);

export class FakeElement extends FakeNode {
  readonly localName: string;
  attributes = new Map<string, string>();
  listeners = new Map<string, Listener[]>();
  value = '';
  scrollTop = 0;
  scrollHeight = 0;
  clientHeight = 0;
  readonly dataset: Record<string, string | undefined>;
  readonly classList = {
    add: (name: string) => this.setClasses([...this.classes(), name]),
    remove: (name: string) =>
      this.setClasses(this.classes().filter(c => c !== name)),
    toggle: (name: string, on?: boolean) => {
      const has = this.classes().includes(name);
      if (on ?? !has) {
        if (!has) this.classList.add(name);
      } else this.classList.remove(name);
    },
    contains: (name: string) => this.classes().includes(name)
  };

  constructor(tag: string) {
    super();
    this.localName = tag.toLowerCase();
    const attr = (key: string) =>
      'data-' + key.replace(/[A-Z]/g, c => `-${c.toLowerCase()}`);
    this.dataset = new Proxy({} as Record<string, string | undefined>, {
      get: (_, key: string) => this.attributes.get(attr(key)),
      set: (_, key: string, value: unknown) => {
        this.setAttribute(attr(key), String(value));
        return true;
      }
    });
    for (const name of REFLECTED) {
      Object.defineProperty(this, name, {
        get: () => this.attributes.has(name),
        set: (on: boolean) =>
          on ? this.setAttribute(name, '') : this.attributes.delete(name)
      });
    }
  }

  get tagName(): string {
    return this.localName.toUpperCase();
  }
  get className(): string {
    return this.attributes.get('class') ?? '';
  }
  set className(value: string) {
    this.setAttribute('class', value);
  }
  get title(): string {
    return this.attributes.get('title') ?? '';
  }
  set title(value: string) {
    this.setAttribute('title', value);
  }
  get children(): FakeElement[] {
    return this.childNodes.filter(
      (c): c is FakeElement => c instanceof FakeElement
    );
  }

  private classes(): string[] {
    return this.className.split(/\s+/).filter(Boolean);
  }
  private setClasses(names: string[]): void {
    this.className = names.join(' ');
  }

  setAttribute(name: string, value: string): void {
    this.attributes.set(name.toLowerCase(), String(value));
  }
  removeAttribute(name: string): void {
    this.attributes.delete(name.toLowerCase());
  }
  getAttribute(name: string): string | null {
    return this.attributes.get(name) ?? null;
  }
  hasAttribute(name: string): boolean {
    return this.attributes.has(name);
  }

  addEventListener(type: string, listener: Listener): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  dispatch(type: string): FakeEvent {
    const event = new FakeEvent(type);
    for (const listener of this.listeners.get(type) ?? []) listener(event);
    return event;
  }
  click(): void {
    if (!this.attributes.has('disabled')) this.dispatch('click');
  }
  /** A real event (a CustomEvent), to this element's listeners and then, when it
   * bubbles, to its ancestors'. */
  dispatchEvent(event: Event): boolean {
    for (let n: FakeNode | null = this; n; n = n.parentNode) {
      if (!(n instanceof FakeElement)) continue;
      for (const listener of n.listeners.get(event.type) ?? [])
        listener(event as unknown as FakeEvent);
      if (!event.bubbles) break;
      if ((event as unknown as FakeEvent).propagationStopped) break;
    }
    return !event.defaultPrevented;
  }
  toggleAttribute(name: string, force: boolean): void {
    if (force) this.setAttribute(name, '');
    else this.removeAttribute(name);
  }

  /** Focus: the element becomes `document.activeElement` (a disabled one cannot). */
  focus(): void {
    if (!this.attributes.has('disabled')) fakeDocument.activeElement = this;
  }

  /** Every element below, in document order. */
  descendants(): FakeElement[] {
    return this.children.flatMap(c => [c, ...c.descendants()]);
  }

  /** Selectors: `tag`, `.class`, `tag.class`, `[attr=value]`, comma-separated. */
  querySelectorAll(selectors: string): FakeElement[] {
    const tests = selectors.split(',').map(s => matcher(s.trim()));
    return this.descendants().filter(e => tests.some(t => t(e)));
  }
  querySelector(selectors: string): FakeElement | null {
    return this.querySelectorAll(selectors)[0] ?? null;
  }
}

/** `compound` or `ancestor descendant` selectors. */
function matcher(selector: string): (e: FakeElement) => boolean {
  const parts = selector.split(/\s+/).map(compound);
  return e => {
    if (!parts[parts.length - 1](e)) return false;
    let i = parts.length - 2;
    for (let p = e.parentNode; p && i >= 0; p = p.parentNode)
      if (p instanceof FakeElement && parts[i](p)) i--;
    return i < 0;
  };
}

function compound(selector: string): (e: FakeElement) => boolean {
  const m = /^([a-z0-9]*)((?:\.[\w-]+)*)(?:\[([\w-]+)="?([^"\]]*)"?\])?$/.exec(
    selector
  );
  if (!m) throw new Error(`fakedom: unsupported selector ${selector}`);
  const [, tag, classes, attr, value] = m;
  const wanted = classes.split('.').filter(Boolean);
  return e =>
    (!tag || e.localName === tag) &&
    wanted.every(c => e.classList.contains(c)) &&
    (!attr || e.getAttribute(attr) === value);
}

function escape(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

const VOID = new Set(['br', 'hr', 'img', 'input']);

/** The node as HTML: attributes in the order set, text escaped. */
export function html(node: unknown): string {
  const n = node as FakeNode;
  if (n instanceof FakeText) return escape(n.data);
  const inner = n.childNodes.map(html).join('');
  if (!(n instanceof FakeElement)) return inner;
  const attrs = [...n.attributes]
    .map(([k, v]) => (v === '' ? ` ${k}` : ` ${k}="${escape(v)}"`))
    .join('');
  if (VOID.has(n.localName)) return `<${n.localName}${attrs}>`;
  return `<${n.localName}${attrs}>${inner}</${n.localName}>`;
}

const documentListeners = new Map<string, ((event: Event) => void)[]>();

export const fakeDocument = {
  visibilityState: 'hidden',
  activeElement: null as FakeElement | null,
  createElement: (tag: string) => new FakeElement(tag),
  createTextNode: (text: string) => new FakeText(String(text)),
  createDocumentFragment: () => new FakeFragment(),
  /** Events on the document itself (the panel's to the lab extension): real Events. */
  addEventListener: (type: string, listener: (event: Event) => void) =>
    documentListeners.set(type, [
      ...(documentListeners.get(type) ?? []),
      listener
    ]),
  removeEventListener: (type: string, listener: (event: Event) => void) =>
    documentListeners.set(
      type,
      (documentListeners.get(type) ?? []).filter(l => l !== listener)
    ),
  dispatchEvent: (event: Event): boolean => {
    for (const listener of documentListeners.get(event.type) ?? [])
      listener(event);
    return !event.defaultPrevented;
  }
};

/** Puts the fake document on globalThis (idempotent). */
export function install(): void {
  (globalThis as unknown as { document: unknown }).document = fakeDocument;
}

/** A DOM value as the fake it is. */
export function fake(node: unknown): FakeElement {
  return node as FakeElement;
}
