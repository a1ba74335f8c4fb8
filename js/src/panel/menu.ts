/**
 * A menu button and its menu, as the WAI-ARIA menu pattern has them: the button opens the
 * menu on its first item (ArrowUp: on its last); in the menu, ArrowDown and ArrowUp move
 * from item to item and wrap, Home and End go to the first and the last; Escape closes it
 * and gives focus back to the button; Tab closes it and focus goes on as Tab takes it. The
 * menu never stays open once focus is outside it and its button.
 */

/** Where focus goes among `count` items from `index` on `key`, or null: not a menu key. */
export function menuMove(
  key: string,
  index: number,
  count: number
): number | null {
  if (count < 1) return null;
  switch (key) {
    case 'ArrowDown':
      return index < 0 ? 0 : (index + 1) % count;
    case 'ArrowUp':
      return index < 0 ? count - 1 : (index - 1 + count) % count;
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return null;
  }
}

export interface IMenu {
  readonly open: boolean;
  /** Opens the menu with focus on the item `at` (0 unless said). */
  show(at?: number): void;
  /** Closes it; `refocus`: focus back on its button. */
  close(refocus?: boolean): void;
}

/** Makes `button` open and close `menu` (hidden until then), whose `items` take focus by
 * the keys above (out of the Tab order: tabindex -1). */
export function menuButton(
  button: HTMLElement,
  menu: HTMLElement,
  items: HTMLElement[]
): IMenu {
  button.setAttribute('aria-haspopup', 'menu');
  button.setAttribute('aria-expanded', 'false');
  menu.hidden = true;
  for (const item of items) item.setAttribute('tabindex', '-1');
  const state: IMenu = {
    get open() {
      return !menu.hidden;
    },
    show(at = 0) {
      menu.hidden = false;
      button.setAttribute('aria-expanded', 'true');
      items[at]?.focus();
    },
    close(refocus = false) {
      menu.hidden = true;
      button.setAttribute('aria-expanded', 'false');
      if (refocus) button.focus();
    }
  };
  button.addEventListener('click', () =>
    state.open ? state.close() : state.show()
  );
  button.addEventListener('keydown', event => {
    const key = event as KeyboardEvent;
    if (key.isComposing) return;
    if (key.key === 'ArrowDown' || key.key === 'ArrowUp') {
      key.preventDefault();
      state.show(key.key === 'ArrowDown' ? 0 : items.length - 1);
    } else if (key.key === 'Escape' && state.open) {
      // Esc closes the open menu (and is not the panel's Stop: it stops here).
      key.preventDefault();
      key.stopPropagation();
      state.close(true);
    }
  });
  menu.addEventListener('keydown', event => {
    const key = event as KeyboardEvent;
    if (key.isComposing || !state.open) return;
    if (key.key === 'Escape') {
      key.preventDefault();
      key.stopPropagation();
      state.close(true);
      return;
    }
    if (key.key === 'Tab') return state.close(); // focus goes on as Tab takes it
    const at = items.indexOf(document.activeElement as HTMLElement);
    const next = menuMove(key.key, at, items.length);
    if (next === null) return;
    key.preventDefault();
    items[next].focus();
  });
  // Focus that leaves the menu and its button closes it (a click elsewhere, a screen
  // reader's own navigation). Back to the button, the menu stays: its click toggles it.
  const leave = (event: Event) => {
    const to = (event as FocusEvent).relatedTarget as Node | null;
    if (!state.open || to === button || (to && menu.contains(to))) return;
    state.close();
  };
  menu.addEventListener('focusout', leave);
  button.addEventListener('focusout', leave);
  return state;
}
