/**
 * How the cards name things: a tool, a plan step's status, a card for a screen reader,
 * a program or a rule quoted in a sentence.
 */
import { h } from './dom';
import type { EntryOf } from './types';
import { CONTROL_TOOLS as CONTROL_TOOL_NAMES } from './wire';

/** Tools the agent uses to talk to the panel: their cards stay hidden unless they fail. */
export const CONTROL_TOOLS: ReadonlySet<string> = new Set(CONTROL_TOOL_NAMES);

export const STEP_LABELS: Record<EntryOf<'plan_step'>['status'], string> = {
  pending: 'pending',
  in_progress: 'in progress',
  done: 'done',
  skipped: 'skipped'
};

/** Characters of a question, a goal or a summary an accessible name keeps. */
const NAME_CHARS = 80;

/** `text` short enough for a card's accessible name. */
export function nameOf(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > NAME_CHARS ? `${line.slice(0, NAME_CHARS - 1)}…` : line;
}

/**
 * A sentence of the kernel's that quotes data between backticks ("allow `git log` when it
 * only reads", as `_wording.code` writes it): the quotes as code, the rest as text. Inert:
 * text nodes and <code> elements, never HTML.
 */
export function withCode(text: string): Node[] {
  const nodes: Node[] = [];
  const parts = text.split('`');
  // An odd number of backticks: the last one opens nothing, it stays text.
  const closed = parts.length % 2 === 1 ? parts.length : parts.length - 1;
  parts.forEach((part, i) => {
    if (i % 2 === 1 && i < closed)
      nodes.push(h('code', { class: 'ja-quoted', text: part }));
    else {
      const shown = i >= closed ? `\`${part}` : part;
      if (shown) nodes.push(document.createTextNode(shown));
    }
  });
  return nodes;
}

/** The same sentence for a tooltip (plain text): the quotes as they are, backticks gone. */
export function withoutBackticks(text: string): string {
  return text.replace(/`([^`]*)`/g, '$1');
}

/** A tool as a person names it: an MCP server's tool (`mcp__github__search_issues`) as
 * "github · search_issues"; any other by its name. */
export function toolLabel(name: string): string {
  const mcp = /^mcp__(.+?)__(.+)$/.exec(name);
  return mcp ? `${mcp[1]} · ${mcp[2]}` : name;
}

/**
 * Tools that wait for a running cell (tools/_cell_run.py): while one waits, its card ticks
 * the time since it started (from here, so it goes on while the kernel is busy and sends
 * nothing) and shows the cell's last output line (its progress events).
 */
export const CELL_TOOLS: ReadonlySet<string> = new Set([
  'run_cell',
  'wait_for_cell'
]);

/** Tools whose row ticks the time since the call started (a cell, a shell command): what
 * may run long while the kernel sends nothing. */
export const TIMED_TOOLS: ReadonlySet<string> = new Set([
  ...CELL_TOOLS,
  'execute_command'
]);
