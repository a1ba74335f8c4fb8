// The jupyter_agent panel: an anywidget ES module, plain modern JavaScript, no build step.
//
// State comes from the model's traits (written by the kernel only); the transcript comes
// as custom messages (see jupyter_agent/jupyter/panel.py for the protocol); user actions
// go to the kernel as commands. Every piece of text is put in the page with textContent or
// text nodes: nothing the agent or the user wrote ever reaches innerHTML.

const CONTROL_TOOLS = new Set([
  "submit_plan",
  "ask_user",
  "update_plan_step",
  "send_update",
  "task_complete",
]);
// A click reaches the kernel only between cells: a command still unanswered after this
// long is waiting for the running cell, and the panel says so (it is not lost).
const SLOW_REPLY = 1500; // ms
const MAX_PRE = 20000; // characters of a tool's input or result shown in its card

// --- small DOM helpers -------------------------------------------------------------

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function clip(text, limit = MAX_PRE) {
  text = String(text ?? "");
  return text.length > limit ? `${text.slice(0, limit)}\n… (${text.length - limit} more characters)` : text;
}

function pretty(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

// --- markdown: a small, escape-first renderer that builds DOM nodes ------------------

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const SAFE_URL = /^https?:\/\//i;

function indentOf(line) {
  return line.length - line.trimStart().length;
}

function isBlank(line) {
  return line.trim() === "";
}

function startsBlock(lines, i) {
  const line = lines[i];
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    ITEM.test(line) ||
    (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes("-"))
  );
}

function splitRow(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

export function renderMarkdown(source) {
  const fragment = document.createDocumentFragment();
  const lines = String(source ?? "").replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      i++;
      continue;
    }
    let m = FENCE.exec(line);
    if (m) {
      const fence = m[1];
      const lang = m[2].trim().split(/\s+/)[0].replace(/[^\w+-]/g, "");
      const body = [];
      i++;
      while (i < lines.length && !(lines[i].trim().startsWith(fence) && lines[i].trim().replace(/[`~]/g, "") === "")) {
        body.push(lines[i++]);
      }
      i++; // the closing fence (or the end of an unfinished block)
      const code = h("code", { class: lang ? `language-${lang}` : undefined, text: body.join("\n") });
      fragment.append(h("pre", { class: "ja-code" }, code));
      continue;
    }
    m = HEADING.exec(line);
    if (m) {
      const heading = h(`h${Math.min(6, m[1].length + 2)}`, { class: "ja-md-heading" });
      renderInline(m[2], heading);
      fragment.append(heading);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      fragment.append(h("hr"));
      i++;
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      const [table, next] = renderTable(lines, i);
      fragment.append(table);
      i = next;
      continue;
    }
    m = QUOTE.exec(line);
    if (m) {
      const quoted = [];
      while (i < lines.length && (m = QUOTE.exec(lines[i]))) {
        quoted.push(m[1]);
        i++;
      }
      fragment.append(h("blockquote", {}, renderMarkdown(quoted.join("\n"))));
      continue;
    }
    if (ITEM.test(line)) {
      const [list, next] = renderList(lines, i);
      fragment.append(list);
      i = next;
      continue;
    }
    const paragraph = [];
    while (i < lines.length && !isBlank(lines[i]) && (paragraph.length === 0 || !startsBlock(lines, i))) {
      paragraph.push(lines[i].trim());
      i++;
    }
    const p = h("p");
    paragraph.forEach((text, index) => {
      if (index > 0) p.append(h("br"));
      renderInline(text, p);
    });
    fragment.append(p);
  }
  return fragment;
}

function renderTable(lines, start) {
  const header = splitRow(lines[start]);
  const aligns = splitRow(lines[start + 1]).map((cell) =>
    cell.startsWith(":") && cell.endsWith(":") ? "center" : cell.endsWith(":") ? "right" : cell.startsWith(":") ? "left" : "",
  );
  const head = h("tr");
  header.forEach((cell, index) => {
    const th = h("th", { style: aligns[index] ? `text-align:${aligns[index]}` : undefined });
    renderInline(cell, th);
    head.append(th);
  });
  const body = h("tbody");
  let i = start + 2;
  while (i < lines.length && !isBlank(lines[i]) && lines[i].includes("|")) {
    const row = h("tr");
    const cells = splitRow(lines[i]);
    header.forEach((_, index) => {
      const td = h("td", { style: aligns[index] ? `text-align:${aligns[index]}` : undefined });
      renderInline(cells[index] ?? "", td);
      row.append(td);
    });
    body.append(row);
    i++;
  }
  return [h("table", { class: "ja-md-table" }, h("thead", {}, head), body), i];
}

function renderList(lines, start) {
  const first = ITEM.exec(lines[start]);
  const base = first[1].length;
  const ordered = /\d/.test(first[2]);
  const list = h(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1) list.setAttribute("start", String(parseInt(first[2], 10)));
  let item = null;
  let body = [];
  let contentIndent = base + 2;
  const flush = () => {
    if (item === null) return;
    const simple = body.length === 1 || body.every((line) => !isBlank(line) && !startsBlock([line.trim()], 0));
    if (simple) {
      body.forEach((text, index) => {
        if (index > 0) item.append(h("br"));
        renderInline(text.trim(), item);
      });
    } else {
      item.append(renderMarkdown(body.join("\n")));
    }
    list.append(item);
  };
  let i = start;
  while (i < lines.length) {
    const line = lines[i];
    const m = ITEM.exec(line);
    if (m && m[1].length <= base + 1 && /\d/.test(m[2]) === ordered) {
      flush();
      item = h("li");
      body = [m[3]];
      contentIndent = m[1].length + m[2].length + 1;
      i++;
      continue;
    }
    if (isBlank(line)) {
      const next = lines[i + 1];
      const nextItem = next !== undefined && ITEM.exec(next);
      if (next !== undefined && (indentOf(next) > base || (nextItem && nextItem[1].length <= base + 1 && /\d/.test(nextItem[2]) === ordered))) {
        body.push("");
        i++;
        continue;
      }
      break;
    }
    if (indentOf(line) > base) {
      body.push(line.slice(Math.min(indentOf(line), contentIndent)));
      i++;
      continue;
    }
    if (!startsBlock(lines, i) && body.length && !isBlank(body[body.length - 1])) {
      body.push(line); // a lazy continuation of the item's text
      i++;
      continue;
    }
    break;
  }
  flush();
  return [list, i];
}

// Inline spans, earliest first; code spans take nothing inside them.
const INLINE = [
  { re: /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/, make: (m) => h("code", { text: m[2].trim() === "" ? m[2] : m[2].replace(/^ (.*) $/s, "$1") }) },
  { re: /\[([^\]\n]+)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/, make: link },
  { re: /\*\*(?=\S)([\s\S]*?\S)\*\*/, make: (m) => wrap("strong", m[1]) },
  { re: /(?<![\w])__(?=\S)([\s\S]*?\S)__(?![\w])/, make: (m) => wrap("strong", m[1]) },
  { re: /\*(?=[^\s*])([\s\S]*?[^\s*])\*(?!\*)/, make: (m) => wrap("em", m[1]) },
  { re: /(?<![\w])_(?=[^\s_])([\s\S]*?[^\s_])_(?![\w])/, make: (m) => wrap("em", m[1]) },
  { re: /~~(?=\S)([\s\S]*?\S)~~/, make: (m) => wrap("del", m[1]) },
  { re: /\bhttps?:\/\/[^\s<>()]*[^\s<>().,;:!?'"\]]/, make: (m) => link([m[0], m[0], m[0]]) },
];

function wrap(tag, inner) {
  const node = h(tag);
  renderInline(inner, node);
  return node;
}

function link(m) {
  const [, label, url] = m;
  if (!SAFE_URL.test(url)) return document.createTextNode(label);
  const a = h("a", { href: url, target: "_blank", rel: "noopener noreferrer" });
  renderInline(label, a);
  return a;
}

export function renderInline(text, parent) {
  let rest = String(text ?? "");
  while (rest) {
    let best = null;
    for (const rule of INLINE) {
      const m = rule.re.exec(rest);
      if (m && (best === null || m.index < best.m.index)) best = { m, rule };
    }
    if (best === null) {
      parent.append(document.createTextNode(rest));
      return;
    }
    if (best.m.index > 0) parent.append(document.createTextNode(rest.slice(0, best.m.index)));
    parent.append(best.rule.make(best.m));
    rest = rest.slice(best.m.index + best.m[0].length);
  }
}

// --- the transcript ------------------------------------------------------------------

const STEP_LABELS = { pending: "pending", in_progress: "in progress", done: "done", skipped: "skipped" };

class Transcript {
  constructor(root, actions) {
    this.root = root;
    this.actions = actions; // { command(name, args) -> Promise, busy() -> bool, error(text) }
    // The transcript follows the newest output while the reader is at the bottom, whatever
    // grows it: a new entry, streamed text, or an entry that grows in place (a tool's result
    // and diff, an answered card). Scrolling up stops following; back at the bottom resumes.
    // (reset() starts a transcript following.)
    root.addEventListener("scroll", () => (this.follow = this.atBottom()), { passive: true });
    if (typeof MutationObserver === "function") {
      new MutationObserver(() => this.follow && this.scrollDown()).observe(root, {
        childList: true,
        subtree: true,
        characterData: true,
        attributes: true,
        attributeFilter: ["open", "hidden"],
      });
    }
    this.reset();
  }

  reset() {
    this.root.replaceChildren();
    this.follow = true;
    this.lastN = 0;
    this.text = null; // the text block being streamed
    this.thinking = null;
    this.tools = new Map();
    this.questions = new Map();
    this.approvals = new Map();
    this.plan = null; // the newest plan card
    this.dirty = new Set();
    this.frame = 0;
  }

  apply(entry) {
    if (entry.n !== undefined) {
      if (entry.n <= this.lastN) return;
      this.lastN = entry.n;
    }
    const handler = this[`on_${entry.kind}`];
    if (handler) handler.call(this, entry);
  }

  add(node) {
    this.root.append(node);
    if (this.follow) this.scrollDown();
    return node;
  }

  atBottom() {
    const r = this.root;
    return r.scrollHeight - r.scrollTop - r.clientHeight < 40;
  }

  scrollDown() {
    this.root.scrollTop = this.root.scrollHeight;
  }

  line(kind, text) {
    return this.add(h("div", { class: `ja-line ja-${kind}` }, text));
  }

  closeStreams() {
    if (this.text) this.finishText(this.text);
    this.text = null;
    this.thinking = null;
  }

  // Runs and messages

  on_user(e) {
    this.closeStreams();
    const bubble = h("div", { class: "ja-user" });
    const text = String(e.text ?? "");
    const split = text.search(/\n\s*\n/);
    if (split > 0 && text.length > 240) {
      // A long message (e.g. "Execute the approved plan" with the plan): its first
      // paragraph, the rest folded.
      bubble.append(renderMarkdown(text.slice(0, split)));
      bubble.append(h("details", {}, h("summary", { text: "More" }), renderMarkdown(text.slice(split))));
    } else {
      bubble.append(renderMarkdown(text));
    }
    this.add(bubble);
  }

  on_note(e) {
    this.line("note", e.text);
  }

  on_agent_start(e) {
    this.closeStreams();
    if (this.plan?.starting) {
      this.plan.starting = false;
      this.plan.runId = e.run_id ?? null;
    }
    this.on_user({ text: e.task });
    const label = e.model_label ? ` — ${e.model_label}` : "";
    this.line("run", `${e.role} · ${e.model}${label}`);
  }

  on_turn_start() {
    this.closeStreams();
  }

  on_text_delta(e) {
    const phase = e.phase ?? null;
    if (this.text === null || this.text.phase !== phase) {
      this.closeStreams();
      this.text = this.textBlock(phase);
    }
    this.text.text += e.text;
    this.dirty.add(this.text);
    this.schedule();
  }

  on_text(e) {
    const phase = e.phase ?? null;
    let block = this.text;
    if (block === null || block.phase !== phase) {
      this.closeStreams();
      block = this.textBlock(phase);
    }
    if (e.text !== undefined) block.text = e.text; // else: exactly what was streamed
    this.finishText(block);
    if (e.interrupted) block.el.append(h("span", { class: "ja-interrupted", text: " [interrupted]" }));
    this.text = null;
  }

  textBlock(phase) {
    const el = h("div", { class: "ja-text" });
    if (phase) el.append(h("div", { class: "ja-phase", text: phase }));
    const done = h("div");
    const tail = h("div");
    el.append(done, tail);
    this.add(el);
    return { el, done, tail, phase, text: "", doneLength: 0, scanned: 0, cut: 0, fence: null };
  }

  finishText(block) {
    this.dirty.delete(block);
    block.done.replaceChildren(renderMarkdown(block.text));
    block.tail.replaceChildren();
    block.doneLength = block.text.length;
  }

  schedule() {
    if (this.frame) return;
    const run = () => {
      this.frame = 0;
      this.renderDirty();
    };
    this.frame = typeof requestAnimationFrame === "function" && document.visibilityState !== "hidden"
      ? requestAnimationFrame(run)
      : setTimeout(run, 16);
  }

  renderDirty() {
    for (const block of this.dirty) this.renderStreaming(block);
    this.dirty.clear();
    if (this.follow) this.scrollDown();
  }

  // Streaming text: everything before the last blank line outside a code fence is final
  // and rendered once; only the paragraph being written is rendered again each frame.
  renderStreaming(block) {
    const text = block.text;
    let pos = block.scanned;
    for (;;) {
      const end = text.indexOf("\n", pos);
      if (end < 0) break;
      const line = text.slice(pos, end);
      const fence = FENCE.exec(line);
      if (fence) {
        if (block.fence === null) block.fence = fence[1][0];
        else if (line.trim()[0] === block.fence && line.trim().replace(/[`~]/g, "") === "") block.fence = null;
      } else if (block.fence === null && isBlank(line)) {
        block.cut = end + 1;
      }
      pos = end + 1;
    }
    block.scanned = pos;
    if (block.cut > block.doneLength) {
      block.done.append(renderMarkdown(text.slice(block.doneLength, block.cut)));
      block.doneLength = block.cut;
    }
    block.tail.replaceChildren(renderMarkdown(text.slice(block.doneLength)));
  }

  on_thinking_delta(e) {
    if (this.thinking === null) {
      const pre = h("div", { class: "ja-thinking-text" });
      const box = h("details", { class: "ja-thinking" }, h("summary", { text: "Thinking" }), pre);
      this.add(box);
      this.thinking = { pre };
    }
    this.thinking.pre.append(document.createTextNode(e.text));
  }

  on_reason(e) {
    if (e.control) this.line("meta", `reason: ${pretty(e.control)}`);
  }

  on_observe(e) {
    if (e.control) this.line("meta", `observe: ${pretty(e.control)}`);
  }

  on_retry(e) {
    if (this.text) this.text.el.remove();
    this.text = null;
    this.thinking = null;
    this.line("warning", `↻ The reply broke off (${e.reason}); retrying.`);
  }

  // Tools

  on_tool_start(e) {
    this.closeStreams();
    const status = h("span", { class: "ja-tool-status", text: "running…" });
    const summary = h(
      "summary",
      {},
      h("span", { class: "ja-tool-icon", "aria-hidden": "true", text: "⚙" }),
      h("span", { class: "ja-tool-summary", text: e.summary || e.name }),
      status,
    );
    const input = h("pre", { class: "ja-pre", text: clip(pretty(e.input)) });
    const output = h("pre", { class: "ja-pre ja-tool-output", hidden: true });
    const result = h("div", { class: "ja-tool-result" });
    const card = h(
      "details",
      { class: "ja-tool", "data-tool": e.name, "data-state": "running" },
      summary,
      h("div", { class: "ja-tool-body" }, h("div", { class: "ja-label", text: "Input" }), input, output, result),
    );
    if (CONTROL_TOOLS.has(e.name)) card.hidden = true;
    this.tools.set(e.tool_use_id, { card, status, output, result });
    this.add(card);
  }

  on_tool_progress(e) {
    const tool = this.tools.get(e.tool_use_id);
    if (!tool) return;
    tool.output.hidden = false;
    tool.output.append(document.createTextNode(e.output));
    const text = tool.output.textContent;
    if (text.length > 2 * MAX_PRE) tool.output.textContent = `…${text.slice(-MAX_PRE)}`;
  }

  on_tool_end(e) {
    let tool = this.tools.get(e.tool_use_id);
    if (!tool) {
      this.on_tool_start({ tool_use_id: e.tool_use_id, name: e.name, input: {}, summary: e.name });
      tool = this.tools.get(e.tool_use_id);
    }
    const { card, status, result } = tool;
    card.dataset.state = e.is_error ? "error" : "done";
    const took = e.duration ? ` · ${e.duration < 1 ? `${Math.round(e.duration * 1000)} ms` : `${e.duration.toFixed(1)} s`}` : "";
    status.textContent = `${e.is_error ? "failed" : "done"}${took}`;
    // An edit's result is its message and then its diff, for the model; the card shows the
    // message, and the diff once, coloured, below it.
    let shown = e.result;
    const diffHead = e.diff ? e.diff.split("\n", 1)[0] : "";
    const at = diffHead ? shown.indexOf(diffHead) : -1;
    if (at > 0) shown = shown.slice(0, at).trimEnd();
    result.replaceChildren(
      h("div", { class: "ja-label", text: e.is_error ? "Error" : "Result" }),
      h("pre", { class: "ja-pre", text: clip(shown) }),
    );
    if (e.diff) {
      result.append(h("div", { class: "ja-label", text: "Diff" }), renderDiff(e.diff));
      card.open = true;
    }
    if (CONTROL_TOOLS.has(e.name) && e.is_error) card.hidden = false;
  }

  // The plan

  on_plan(e) {
    this.closeStreams();
    const plan = e.plan;
    if (this.plan) this.plan.button.disabled = true;
    const rows = plan.steps.map((step) => {
      const status = h("td", { class: "ja-step-status", "data-status": "pending", text: "pending" });
      const row = h(
        "tr",
        { "data-step": step.step_number },
        h("td", { class: "ja-step-number", text: String(step.step_number) }),
        h("td", { text: step.action }),
        h("td", { text: step.reason || "" }),
        h("td", { text: (step.tools_needed || []).join(", ") }),
        h("td", { text: step.estimated_time || "" }),
        status,
      );
      return [step.step_number, { row, status }];
    });
    const table = h(
      "table",
      { class: "ja-plan-table" },
      h("thead", {}, h("tr", {}, ["#", "Action", "Reason", "Tools", "Time", "Status"].map((t) => h("th", { scope: "col", text: t })))),
      h("tbody", {}, rows.map(([, r]) => r.row)),
    );
    const button = h("button", { type: "button", class: "ja-primary ja-execute", text: "Execute plan" });
    const card = h(
      "section",
      { class: "ja-card ja-plan", "aria-label": "Plan" },
      h("h3", { text: "Plan" }),
      h("p", { class: "ja-goal" }, h("strong", { text: "Goal: " }), plan.goal),
      table,
      plan.estimated_total_time ? h("p", { class: "ja-meta" }, h("strong", { text: "Estimated total: " }), plan.estimated_total_time) : null,
      listSection("Risks", plan.risks, "ja-risks"),
      listSection("Prerequisites", plan.prerequisites, "ja-prerequisites"),
      h("div", { class: "ja-actions" }, button),
    );
    // executed: the plan's execution is running or done. runId: that run, once known
    // (from the run the button started, or the first step it marks), so a Stop or an
    // error of that run offers to carry on, as execute_plan() does.
    const entry = { card, button, steps: new Map(rows), executed: false, runId: null, starting: false };
    button.addEventListener("click", () => {
      button.disabled = true;
      entry.executed = true;
      entry.starting = true;
      this.actions.command("execute_plan").catch((error) => {
        entry.executed = false;
        entry.starting = false;
        this.refreshControls();
        this.actions.error(error.message);
      });
    });
    this.plan = entry;
    this.add(card);
    this.refreshControls();
  }

  on_plan_step(e) {
    const step = this.plan?.steps.get(e.step_number);
    if (!step) return;
    step.status.dataset.status = e.status;
    step.status.textContent = STEP_LABELS[e.status] ?? e.status;
    step.status.title = e.note || "";
    step.row.dataset.status = e.status;
    // Steps being marked: the plan is being executed, from this button or from code.
    this.plan.executed = true;
    if (e.run_id) this.plan.runId = e.run_id;
    this.refreshControls();
  }

  planRunEnded(e, cutShort) {
    const plan = this.plan;
    if (!plan) return;
    plan.starting = false; // a click that joined a running execution started no run
    if (cutShort && plan.executed && e.run_id && plan.runId === e.run_id) this.on_plan_stopped();
  }

  on_plan_stopped() {
    // The plan's execution was stopped or failed (live, or in a resumed session): it
    // can carry on from where it ended.
    const plan = this.plan;
    if (!plan) return;
    plan.executed = false;
    plan.runId = null;
    plan.button.textContent = "Continue plan";
    for (const step of plan.steps.values()) {
      if (step.status.dataset.status !== "in_progress") continue;
      step.status.dataset.status = step.row.dataset.status = "stopped";
      step.status.textContent = "stopped";
    }
    this.refreshControls();
  }

  refreshControls() {
    const plan = this.plan;
    if (plan) plan.button.disabled = plan.executed || this.actions.busy();
  }

  // Questions and approvals

  on_question(e) {
    this.closeStreams();
    const q = e.question;
    const card = h("section", {
      class: "ja-card ja-question ja-flash",
      "data-severity": q.severity,
      "aria-label": "Question",
    });
    const buttons = [];
    const answered = h("p", { class: "ja-answered", hidden: true });
    const send = (value, button) => {
      buttons.forEach((b) => (b.disabled = true));
      if (button) button.classList.add("ja-chosen");
      this.actions.command("answer", { question_id: e.question_id, value }).catch((error) => {
        buttons.forEach((b) => (b.disabled = false));
        if (button) button.classList.remove("ja-chosen");
        this.actions.error(error.message);
      });
    };
    const options = h("div", { class: "ja-options", role: "group", "aria-label": "Answer options" });
    for (const option of q.options || []) {
      const isDefault = q.default !== null && q.default !== undefined && option.value === q.default;
      const button = h("button", {
        type: "button",
        class: `ja-option${isDefault ? " ja-default" : ""}`,
        title: option.description || undefined,
        "data-value": option.value,
        text: option.label,
      });
      button.addEventListener("click", () => send(option.value, button));
      buttons.push(button);
      options.append(button);
    }
    let free = null;
    if (q.allow_custom || !(q.options || []).length) {
      const input = h("input", { type: "text", class: "ja-free-input", "aria-label": "Your answer", placeholder: "Type your answer…" });
      const submit = h("button", { type: "submit", text: "Answer" });
      free = h("form", { class: "ja-free" }, input, submit);
      free.addEventListener("submit", (event) => {
        event.preventDefault();
        if (!input.value.trim()) return;
        send(input.value, null);
      });
      buttons.push(input, submit);
    }
    const parts = [
      h("div", { class: "ja-card-head" }, h("h3", { text: "Question" }), h("span", { class: "ja-badge", text: q.severity })),
      h("p", { class: "ja-question-text", text: q.question }),
      q.context ? h("p", { class: "ja-context", text: q.context }) : null,
      (q.options || []).length ? options : null,
      free,
      answered,
    ];
    card.append(...parts.filter(Boolean));
    this.questions.set(e.question_id, { card, buttons, answered, options });
    this.add(card);
    card.scrollIntoView?.({ block: "nearest" });
    card.querySelector("button, input")?.focus?.({ preventScroll: true });
  }

  on_answer(e) {
    const q = this.questions.get(e.question_id);
    if (!q) return;
    q.buttons.forEach((b) => (b.disabled = true));
    for (const b of q.options.querySelectorAll("button")) b.classList.toggle("ja-chosen", b.dataset.value === e.value);
    q.card.classList.remove("ja-flash");
    q.card.dataset.state = "answered";
    q.answered.hidden = false;
    q.answered.textContent = `Answered: ${e.label ?? e.value}`;
  }

  on_request_input_timeout(e) {
    const pending = this.questions.get(e.question_id) || this.approvals.get(e.question_id);
    if (pending) this.closeCard(pending, `No answer within ${e.timeout} s.`);
  }

  on_permission_request(e) {
    this.closeStreams();
    const remember = e.remember ?? null;
    const allow = h("button", { type: "button", class: "ja-primary", text: "Allow" });
    const always = h("button", { type: "button", text: "Always allow", hidden: remember === null });
    const deny = h("button", { type: "button", class: "ja-danger", text: "Deny" });
    const buttons = [allow, always, deny];
    const answered = h("p", { class: "ja-answered", hidden: true });
    const warnings = (e.warnings || []).map((text) => h("li", { text }));
    const card = h(
      "section",
      { class: "ja-card ja-approval ja-flash", "aria-label": "Approval" },
      h("div", { class: "ja-card-head" }, h("h3", { text: "Approval needed" }), h("span", { class: "ja-badge", text: e.tool_name })),
      h("p", { class: "ja-approval-summary", text: e.summary }),
      warnings.length ? h("ul", { class: "ja-warnings", role: "alert", "aria-label": "Warnings" }, warnings) : null,
      e.reason ? h("p", { class: "ja-context", text: e.reason }) : null,
      h("p", {
        class: "ja-remember",
        text: remember === null ? "“Always allow” is not offered: a call like this asks every time." : `“Always allow” remembers: ${remember}.`,
      }),
      h("details", {}, h("summary", { text: "Input" }), h("pre", { class: "ja-pre", text: clip(pretty(e.input)) })),
      h("div", { class: "ja-actions" }, buttons),
      answered,
    );
    if (remember !== null) always.title = `Remembers for this session: ${remember}`;
    const decide = (allowed, remember) => {
      buttons.forEach((b) => (b.disabled = true));
      this.actions.command("approve", { request_id: e.request_id, allow: allowed, remember }).catch((error) => {
        buttons.forEach((b) => (b.disabled = false));
        this.actions.error(error.message);
      });
    };
    allow.addEventListener("click", () => decide(true, false));
    always.addEventListener("click", () => decide(true, true));
    deny.addEventListener("click", () => decide(false, false));
    this.approvals.set(e.request_id, { card, buttons, answered });
    this.add(card);
    card.scrollIntoView?.({ block: "nearest" });
  }

  on_permission_response(e) {
    const a = this.approvals.get(e.request_id);
    if (!a) return;
    const verdict = e.allowed ? (e.remember ? `Always allowed${e.rule ? ` (${e.rule})` : ""}` : "Allowed") : "Denied";
    this.closeCard(a, verdict);
    a.card.dataset.state = e.allowed ? "allowed" : "denied";
  }

  closeCard(pending, text) {
    pending.buttons.forEach((b) => (b.disabled = true));
    pending.card.classList.remove("ja-flash");
    if (!pending.card.dataset.state) pending.card.dataset.state = "closed";
    pending.answered.hidden = false;
    pending.answered.textContent = text;
  }

  closeOpenCards(text) {
    for (const cards of [this.questions, this.approvals]) {
      for (const card of cards.values()) {
        if (!card.card.dataset.state) this.closeCard(card, text);
      }
    }
  }

  // Progress and endings

  on_update(e) {
    this.closeStreams();
    this.line("update", `ℹ ${e.message}`);
  }

  on_warning(e) {
    const line = this.line("warning", `⚠ ${e.message}`);
    if (e.action !== "trust_workspace" || !line) return;
    const trust = h("button", { type: "button", text: "Trust this folder", title: "Apply this folder's settings (remembered in your own settings)" });
    trust.addEventListener("click", () => {
      trust.disabled = true;
      this.actions.command("trust").then(
        () => (trust.textContent = "Trusted"),
        (error) => {
          trust.disabled = false;
          this.actions.error(error.message);
        },
      );
    });
    line.append(" ", trust);
  }

  on_stopped(e) {
    this.closeStreams();
    this.closeOpenCards("Not answered: the run stopped.");
    for (const tool of this.tools.values()) if (tool.card.dataset.state === "running") tool.card.dataset.state = "error";
    this.line("stopped", `■ Stopped (${e.reason.replace(/_/g, " ")})${e.message ? `: ${e.message}` : ""}`);
    this.planRunEnded(e, true);
    this.refreshControls();
  }

  on_completed(e) {
    this.closeStreams();
    this.closeOpenCards("Not answered: the run ended.");
    const line = h("div", { class: "ja-line ja-completed" }, "✔ Completed");
    if (e.summary) {
      line.append(": ");
      renderInline(e.summary, line);
    }
    this.add(line);
    this.planRunEnded(e, false);
    this.refreshControls();
  }

  on_error(e) {
    this.closeStreams();
    this.closeOpenCards("Not answered: the run failed.");
    this.line("error", `✗ Error${e.error_type ? ` (${e.error_type})` : ""}: ${e.message}`);
    this.planRunEnded(e, true);
    this.refreshControls();
  }

  on_subagent_spawned(e) {
    this.line("meta", `↳ subagent ${e.agent_type}: ${e.task}`);
  }

  on_subagent_output(e) {
    const inner = e.event || {};
    if (inner.kind === "tool_start") this.line("meta", `  ↳ ${inner.summary || inner.name}`);
  }

  on_subagent_complete(e) {
    this.line("meta", `↳ subagent ended ${e.state}${e.result ? `: ${e.result}` : ""}`);
  }
}

function listSection(title, items, cls) {
  if (!items || !items.length) return null;
  return h("div", { class: `ja-list ${cls}` }, h("strong", { text: `${title}:` }), h("ul", {}, items.map((item) => h("li", { text: item }))));
}

function renderDiff(diff) {
  const pre = h("pre", { class: "ja-pre ja-diff" });
  for (const line of String(diff).split("\n")) {
    let cls = "ja-diff-context";
    if (line.startsWith("+++") || line.startsWith("---")) cls = "ja-diff-file";
    else if (line.startsWith("@@")) cls = "ja-diff-hunk";
    else if (line.startsWith("+")) cls = "ja-diff-add";
    else if (line.startsWith("-")) cls = "ja-diff-del";
    pre.append(h("span", { class: cls, text: `${line}\n` }));
  }
  return pre;
}

// --- talking to the Jupyter server (Stop while the agent runs a cell) --------------------

function pageConfig() {
  const node = document.getElementById("jupyter-config-data");
  if (!node) return null;
  try {
    return JSON.parse(node.textContent || "{}");
  } catch {
    return null;
  }
}

function cookie(name) {
  const match = document.cookie.match(new RegExp(`(?:^|;\\s*)${name}=([^;]*)`));
  return match ? decodeURIComponent(match[1]) : "";
}

// The kernel cannot read the Stop click while it runs a cell, so the frontend interrupts
// it: first by asking the lab extension (an event it may take with preventDefault()), else
// through the Jupyter server's REST API.
export function interruptKernel(kernelId) {
  const event = new CustomEvent("jupyter-agent:interrupt", { detail: { kernelId }, cancelable: true });
  if (!document.dispatchEvent(event) || !kernelId) return Promise.resolve(false);
  const config = pageConfig();
  if (!config) return Promise.resolve(false);
  let base = config.baseUrl || "/";
  if (!base.endsWith("/")) base += "/";
  const headers = { "Content-Type": "application/json" };
  const xsrf = cookie("_xsrf");
  if (xsrf) headers["X-XSRFToken"] = xsrf;
  if (config.token) headers.Authorization = `token ${config.token}`;
  return fetch(`${base}api/kernels/${encodeURIComponent(kernelId)}/interrupt`, {
    method: "POST",
    headers,
    credentials: "same-origin",
  }).then(
    (response) => response.ok,
    () => false,
  );
}

// --- the view ----------------------------------------------------------------------

function statusText(model) {
  const status = model.get("status");
  const detail = model.get("detail");
  switch (status) {
    case "idle":
      return "ready";
    case "running":
      return "working…";
    case "thinking":
      return "thinking…";
    case "tool_executing":
      return `running tool ${detail || "…"}`;
    case "waiting_user":
      return `waiting for you${detail ? ` (${detail.replace(/^waiting for /, "")})` : ""}`;
    case "paused":
      return "paused";
    case "completed":
      return "completed";
    case "cancelled":
      return `stopped: ${detail || (model.get("stop_reason") || "").replace(/_/g, " ")}`;
    case "error":
      return `error: ${detail}`;
    default:
      return status;
  }
}

function number(n) {
  return Number(n || 0).toLocaleString("en-US");
}

function usageText(usage) {
  if (!usage || usage.run_input_tokens === undefined) return "";
  const cached = (input, read) => (input ? ` (${Math.round((100 * read) / input)}% cached)` : "");
  return (
    `Run: ${number(usage.run_input_tokens)} in${cached(usage.run_input_tokens, usage.run_cache_read_input_tokens)}, ` +
    `${number(usage.run_output_tokens)} out · $${Number(usage.run_cost_usd || 0).toFixed(4)}` +
    ` — Session: ${number(usage.session_input_tokens)} in${cached(usage.session_input_tokens, usage.session_cache_read_input_tokens)}, ` +
    `${number(usage.session_output_tokens)} out · $${Number(usage.session_cost_usd || 0).toFixed(4)}`
  );
}

function render({ model, el }) {
  const viewId = Math.random().toString(36).slice(2, 10);
  const listeners = [];
  let disposed = false;
  const on = (name, fn) => {
    model.on(name, fn);
    listeners.push([name, fn]);
  };

  // Layout
  const status = h("span", { class: "ja-status", role: "status", "aria-live": "polite" });
  const roleBadge = h("span", { class: "ja-badge ja-role-badge" });
  const modelName = h("span", { class: "ja-model" });
  const replay = h("span", { class: "ja-replay", hidden: true });
  const sandbox = h("span", { class: "ja-sandbox", hidden: true });
  const notebook = h("div", { class: "ja-notebook", hidden: true });
  const dockNote = h("div", { class: "ja-note", hidden: true });
  const errors = h("div", { class: "ja-errors", "aria-live": "assertive" });
  const transcriptEl = h("div", { class: "ja-transcript", tabindex: "0", "aria-label": "Transcript" });
  const waiting = h("div", { class: "ja-line ja-meta", text: "Connecting to the kernel…" });
  transcriptEl.append(waiting);

  const message = h("textarea", {
    class: "ja-message",
    rows: 2,
    "aria-label": "Message",
    placeholder: "Ask the agent… (Enter sends, Shift+Enter starts a new line)",
  });
  const sendButton = h("button", { type: "submit", class: "ja-primary", text: "Send" });
  const stopButton = h("button", { type: "button", class: "ja-danger ja-stop", text: "Stop" });
  const inputForm = h("form", { class: "ja-input" }, message, h("div", { class: "ja-buttons" }, sendButton, stopButton));

  const roleSelect = h("select", { "aria-label": "Role" });
  const maxSteps = h("input", { type: "number", min: 1, step: 1, class: "ja-max-steps", "aria-label": "Max iterations" });
  const sessionSelect = h("select", { "aria-label": "Session" });
  const resumeButton = h("button", { type: "button", text: "Resume" });
  const controls = h(
    "div",
    { class: "ja-controls" },
    h("label", {}, "Role ", roleSelect),
    h("label", {}, "Max iterations ", maxSteps),
    h("label", { class: "ja-session-picker" }, "Session ", sessionSelect),
    resumeButton,
  );
  const usage = h("div", { class: "ja-usage" });

  const root = h(
    "div",
    { class: "ja-panel" },
    h(
      "div",
      { class: "ja-header" },
      h("span", { class: "ja-title", text: "jupyter_agent" }),
      roleBadge,
      modelName,
      replay,
      sandbox,
      status,
    ),
    notebook,
    dockNote,
    transcriptEl,
    errors,
    inputForm,
    controls,
    usage,
  );
  el.append(root);

  // Commands and replies
  let nextId = 1;
  const waitingReplies = new Map();
  const waitNote = h("div", {
    class: "ja-line ja-note ja-wait",
    hidden: true,
    text: "Sent. The kernel is running a cell; it reads this when the cell ends.",
  });
  errors.before(waitNote);
  const showWaitNote = () => {
    waitNote.hidden = ![...waitingReplies.values()].some((pending) => pending.slow);
  };
  const command = (name, args = {}) =>
    new Promise((resolve, reject) => {
      const id = `${viewId}:${nextId++}`;
      const pending = { resolve, reject, slow: false };
      pending.timer = setTimeout(() => {
        pending.slow = true;
        showWaitNote();
      }, SLOW_REPLY);
      waitingReplies.set(id, pending);
      model.send({ type: "command", id, name, ...args });
    });
  const showError = (text) => {
    const line = h("div", { class: "ja-line ja-error", text });
    errors.replaceChildren(line);
    setTimeout(() => line.remove(), 8000);
  };

  const transcript = new Transcript(transcriptEl, { command, busy: () => model.get("busy"), error: showError });
  let ready = false;

  on("msg:custom", (msg) => {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "reply") {
      const pending = waitingReplies.get(msg.id);
      if (!pending) return;
      waitingReplies.delete(msg.id);
      clearTimeout(pending.timer);
      showWaitNote();
      if (msg.ok) pending.resolve(msg);
      else pending.reject(new Error(msg.error || "The command failed."));
    } else if (msg.type === "snapshot") {
      if (msg.view !== null && msg.view !== viewId) return;
      transcript.reset();
      for (const entry of msg.entries || []) transcript.apply(entry);
      transcript.renderDirty();
      transcript.scrollDown();
      ready = true;
      refresh();
    } else if (!ready) {
      // The snapshot this view asked for will hold these.
    } else if (msg.type === "events") {
      for (const entry of msg.entries || []) transcript.apply(entry);
    } else if (msg.type === "text") {
      transcript.apply({ kind: "text_delta", n: msg.n, text: msg.text });
    }
  });

  // State → view
  function refresh() {
    const busy = model.get("busy");
    status.textContent = statusText(model);
    status.dataset.state = model.get("status");
    roleBadge.textContent = model.get("role");
    modelName.textContent = model.get("model_name");
    const label = model.get("model_label");
    replay.hidden = !label;
    replay.textContent = label || "";
    const confinement = model.get("sandbox") || "";
    sandbox.hidden = !confinement;
    sandbox.textContent = confinement;
    sandbox.title = model.get("sandbox_detail") || "";
    sandbox.dataset.active = model.get("sandboxed") ? "true" : "false";
    stopButton.disabled = !busy;
    sendButton.disabled = busy;
    sendButton.title = busy ? "The agent is working: wait, or Stop it first" : "";
    roleSelect.disabled = busy;
    resumeButton.disabled = busy || !sessionSelect.value || sessionSelect.value === model.get("session_id");
    root.dataset.busy = busy ? "true" : "false";
    transcript.refreshControls();
  }

  function refreshRoles() {
    const current = model.get("role");
    roleSelect.replaceChildren(
      ...(model.get("roles") || []).map((role) => {
        const label = role.name.charAt(0).toUpperCase() + role.name.slice(1);
        const option = h("option", { value: role.name, title: role.description || undefined, text: label });
        option.selected = role.name === current;
        return option;
      }),
    );
    roleSelect.value = current;
  }

  function refreshSessions() {
    const current = model.get("session_id");
    const sessions = model.get("sessions") || [];
    const options = sessions.map((s) => {
      const when = new Date(s.updated * 1000).toLocaleString();
      const option = h("option", { value: s.id, text: `${s.title} — ${when}${s.id === current ? " (current)" : ""}` });
      option.selected = s.id === current;
      return option;
    });
    if (!sessions.some((s) => s.id === current)) options.unshift(h("option", { value: current, text: "(current session)", selected: true }));
    sessionSelect.replaceChildren(...options);
    refresh();
  }

  function refreshNotebook() {
    const mode = model.get("bridge_mode");
    const text = model.get("notebook");
    notebook.hidden = !text;
    notebook.dataset.mode = mode;
    notebook.textContent =
      mode === "file" ? `Notebook edits go to the file: ${text}` : mode === "live" ? `Notebook: ${text}` : text;
  }

  function refreshDock() {
    const side = model.get("dock") === "side";
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
    if (el.closest("[data-jupyter-agent-side]")) return;
    const event = new CustomEvent("jupyter-agent:dock", {
      detail: { where: "side", kernelId: model.get("kernel_id"), widgetId: model.get("widget_id") },
      cancelable: true,
    });
    const taken = !document.dispatchEvent(event);
    dockNote.hidden = false;
    dockNote.textContent = taken
      ? "The agent panel is in the right sidebar."
      : "Docking in the sidebar needs the jupyter_agent JupyterLab extension; the panel stays here.";
    root.classList.toggle("ja-docked-away", taken);
  }

  for (const name of ["status", "detail", "stop_reason", "busy", "role", "model_name", "model_label", "sandbox", "sandboxed"]) on(`change:${name}`, refresh);
  on("change:roles", refreshRoles);
  on("change:role", refreshRoles);
  on("change:sessions", refreshSessions);
  on("change:session_id", refreshSessions);
  on("change:notebook", refreshNotebook);
  on("change:bridge_mode", refreshNotebook);
  on("change:usage", () => (usage.textContent = usageText(model.get("usage"))));
  on("change:max_steps", () => (maxSteps.value = String(model.get("max_steps"))));
  on("change:dock", refreshDock);

  // View → kernel
  inputForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = message.value.trim();
    if (!text || model.get("busy")) return;
    sendButton.disabled = true;
    command("send", { text, role: roleSelect.value }).then(
      () => {
        message.value = "";
      },
      (error) => {
        showError(error.message);
        refresh();
      },
    );
  });
  message.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      inputForm.requestSubmit();
    }
  });
  stopButton.addEventListener("click", () => {
    stopButton.disabled = true;
    if (model.get("running_code")) void interruptKernel(model.get("kernel_id"));
    command("stop").catch((error) => showError(error.message));
  });
  roleSelect.addEventListener("change", () => {
    command("set_role", { role: roleSelect.value }).catch((error) => {
      showError(error.message);
      refreshRoles();
    });
  });
  maxSteps.addEventListener("change", () => {
    const value = parseInt(maxSteps.value, 10);
    command("set_max_steps", { value }).catch((error) => {
      showError(error.message);
      maxSteps.value = String(model.get("max_steps"));
    });
  });
  sessionSelect.addEventListener("change", refresh);
  resumeButton.addEventListener("click", () => {
    resumeButton.disabled = true;
    command("resume", { session_id: sessionSelect.value }).catch((error) => {
      showError(error.message);
      refresh();
    });
  });

  refreshRoles();
  refreshSessions();
  refreshNotebook();
  refreshDock();
  usage.textContent = usageText(model.get("usage"));
  maxSteps.value = String(model.get("max_steps"));
  refresh();
  model.send({ type: "hello", view: viewId });

  return () => {
    disposed = true;
    for (const [name, fn] of listeners) model.off(name, fn);
    for (const pending of waitingReplies.values()) clearTimeout(pending.timer);
    waitingReplies.clear();
  };
}

export default { render };
