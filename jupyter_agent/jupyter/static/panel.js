// The jupyter_agent panel, built from js/src/panel/ by js/scripts/panel.js
// (`npm run build:panel`). Do not edit: js/test/panel-build.test.ts fails when this
// file is not what the sources give.

// src/panel/dom.ts
var MAX_PRE = 2e4;
function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === void 0 || value === null || value === false) continue;
    if (key === "class") node.className = String(value);
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on")) {
      if (typeof value === "function")
        node.addEventListener(key.slice(2), value);
    } else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === void 0 || child === null || child === false) continue;
    node.append(
      typeof child === "string" ? document.createTextNode(child) : child
    );
  }
  return node;
}
function clip(text, limit = MAX_PRE) {
  const s = String(text ?? "");
  return s.length > limit ? `${s.slice(0, limit)}
… (${s.length - limit} more characters)` : s;
}
function pretty(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

// src/panel/interrupt.ts
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
function interruptKernel(kernelId) {
  const event = new CustomEvent("jupyter-agent:interrupt", {
    detail: { kernelId },
    cancelable: true
  });
  if (!document.dispatchEvent(event) || !kernelId)
    return Promise.resolve(false);
  const config = pageConfig();
  if (!config) return Promise.resolve(false);
  let base = config.baseUrl || "/";
  if (!base.endsWith("/")) base += "/";
  const headers = {
    "Content-Type": "application/json"
  };
  const xsrf = cookie("_xsrf");
  if (xsrf) headers["X-XSRFToken"] = xsrf;
  if (config.token) headers.Authorization = `token ${config.token}`;
  return fetch(`${base}api/kernels/${encodeURIComponent(kernelId)}/interrupt`, {
    method: "POST",
    headers,
    credentials: "same-origin"
  }).then(
    (response) => response.ok,
    () => false
  );
}

// src/panel/wire.ts
var CONTROL_TOOLS = [
  "ask_user",
  "send_update",
  "submit_plan",
  "task_complete",
  "update_plan_step"
];

// src/panel/cards.ts
var CONTROL_TOOLS2 = new Set(CONTROL_TOOLS);
var STEP_LABELS = {
  pending: "pending",
  in_progress: "in progress",
  done: "done",
  skipped: "skipped"
};
function toolCard(e) {
  const status = h("span", { class: "ja-tool-status", text: "running…" });
  const summary = h(
    "summary",
    {},
    h("span", { class: "ja-tool-icon", "aria-hidden": "true", text: "⚙" }),
    h("span", { class: "ja-tool-summary", text: e.summary || e.name }),
    status
  );
  const input = h("pre", { class: "ja-pre", text: clip(pretty(e.input)) });
  const output = h("pre", { class: "ja-pre ja-tool-output", hidden: true });
  const result = h("div", { class: "ja-tool-result" });
  const card = h(
    "details",
    { class: "ja-tool", "data-tool": e.name, "data-state": "running" },
    summary,
    h(
      "div",
      { class: "ja-tool-body" },
      h("div", { class: "ja-label", text: "Input" }),
      input,
      output,
      result
    )
  );
  if (CONTROL_TOOLS2.has(e.name)) card.hidden = true;
  return { card, status, output, result };
}
function endTool(tool, e) {
  const { card, status, result } = tool;
  card.dataset.state = e.is_error ? "error" : "done";
  const took = e.duration ? ` · ${e.duration < 1 ? `${Math.round(e.duration * 1e3)} ms` : `${e.duration.toFixed(1)} s`}` : "";
  status.textContent = `${e.is_error ? "failed" : "done"}${took}`;
  let shown = e.result;
  const diffHead = e.diff ? e.diff.split("\n", 1)[0] : "";
  const at = diffHead ? shown.indexOf(diffHead) : -1;
  if (at > 0) shown = shown.slice(0, at).trimEnd();
  result.replaceChildren(
    h("div", { class: "ja-label", text: e.is_error ? "Error" : "Result" }),
    h("pre", { class: "ja-pre", text: clip(shown) })
  );
  if (e.diff) {
    result.append(
      h("div", { class: "ja-label", text: "Diff" }),
      renderDiff(e.diff)
    );
    card.open = true;
  }
  if (CONTROL_TOOLS2.has(e.name) && e.is_error) card.hidden = false;
}
function renderDiff(diff) {
  const pre = h("pre", { class: "ja-pre ja-diff" });
  for (const line of String(diff).split("\n")) {
    let cls = "ja-diff-context";
    if (line.startsWith("+++") || line.startsWith("---")) cls = "ja-diff-file";
    else if (line.startsWith("@@")) cls = "ja-diff-hunk";
    else if (line.startsWith("+")) cls = "ja-diff-add";
    else if (line.startsWith("-")) cls = "ja-diff-del";
    pre.append(h("span", { class: cls, text: `${line}
` }));
  }
  return pre;
}
function listSection(title, items, cls) {
  if (!items || !items.length) return null;
  return h(
    "div",
    { class: `ja-list ${cls}` },
    h("strong", { text: `${title}:` }),
    h(
      "ul",
      {},
      items.map((item) => h("li", { text: item }))
    )
  );
}
function planCard(plan) {
  const rows = plan.steps.map((step) => {
    const status = h("td", {
      class: "ja-step-status",
      "data-status": "pending",
      text: "pending"
    });
    const row = h(
      "tr",
      { "data-step": step.step_number },
      h("td", { class: "ja-step-number", text: String(step.step_number) }),
      h("td", { text: step.action }),
      h("td", { text: step.reason || "" }),
      h("td", { text: (step.tools_needed || []).join(", ") }),
      h("td", { text: step.estimated_time || "" }),
      status
    );
    return [step.step_number, { row, status }];
  });
  const table = h(
    "table",
    { class: "ja-plan-table" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["#", "Action", "Reason", "Tools", "Time", "Status"].map(
          (t) => h("th", { scope: "col", text: t })
        )
      )
    ),
    h(
      "tbody",
      {},
      rows.map(([, r]) => r.row)
    )
  );
  const button = h("button", {
    type: "button",
    class: "ja-primary ja-execute",
    text: "Execute plan"
  });
  const card = h(
    "section",
    { class: "ja-card ja-plan", "aria-label": "Plan" },
    h("h3", { text: "Plan" }),
    h("p", { class: "ja-goal" }, h("strong", { text: "Goal: " }), plan.goal),
    table,
    plan.estimated_total_time ? h(
      "p",
      { class: "ja-meta" },
      h("strong", { text: "Estimated total: " }),
      plan.estimated_total_time
    ) : null,
    listSection("Risks", plan.risks, "ja-risks"),
    listSection("Prerequisites", plan.prerequisites, "ja-prerequisites"),
    h("div", { class: "ja-actions" }, button)
  );
  return { card, button, steps: new Map(rows) };
}
function questionCard(e, send) {
  const q = e.question;
  const card = h("section", {
    class: "ja-card ja-question ja-flash",
    "data-severity": q.severity,
    "aria-label": "Question"
  });
  const buttons = [];
  const answered = h("p", { class: "ja-answered", hidden: true });
  const options = h("div", {
    class: "ja-options",
    role: "group",
    "aria-label": "Answer options"
  });
  const parts = { card, buttons, answered, options };
  for (const option of q.options || []) {
    const isDefault = q.default !== null && q.default !== void 0 && option.value === q.default;
    const button = h("button", {
      type: "button",
      class: `ja-option${isDefault ? " ja-default" : ""}`,
      title: option.description || void 0,
      "data-value": option.value,
      text: option.label
    });
    button.addEventListener("click", () => send(parts, option.value, button));
    buttons.push(button);
    options.append(button);
  }
  let free = null;
  if (q.allow_custom || !(q.options || []).length) {
    const input = h("input", {
      type: "text",
      class: "ja-free-input",
      "aria-label": "Your answer",
      placeholder: "Type your answer…"
    });
    const submit = h("button", { type: "submit", text: "Answer" });
    free = h("form", { class: "ja-free" }, input, submit);
    free.addEventListener("submit", (event) => {
      event.preventDefault();
      if (!input.value.trim()) return;
      send(parts, input.value, null);
    });
    buttons.push(input, submit);
  }
  const children = [
    h(
      "div",
      { class: "ja-card-head" },
      h("h3", { text: "Question" }),
      h("span", { class: "ja-badge", text: q.severity })
    ),
    h("p", { class: "ja-question-text", text: q.question }),
    q.context ? h("p", { class: "ja-context", text: q.context }) : null,
    (q.options || []).length ? options : null,
    free,
    answered
  ];
  card.append(...children.filter((c) => Boolean(c)));
  return parts;
}
function approvalCard(e, decide) {
  const remember = e.remember ?? null;
  const allow = h("button", {
    type: "button",
    class: "ja-primary",
    text: "Allow"
  });
  const always = h("button", {
    type: "button",
    text: "Always allow",
    hidden: remember === null
  });
  const deny = h("button", {
    type: "button",
    class: "ja-danger",
    text: "Deny"
  });
  const buttons = [allow, always, deny];
  const answered = h("p", { class: "ja-answered", hidden: true });
  const warnings = (e.warnings || []).map((text) => h("li", { text }));
  const card = h(
    "section",
    { class: "ja-card ja-approval ja-flash", "aria-label": "Approval" },
    h(
      "div",
      { class: "ja-card-head" },
      h("h3", { text: "Approval needed" }),
      h("span", { class: "ja-badge", text: e.tool_name })
    ),
    h("p", { class: "ja-approval-summary", text: e.summary }),
    warnings.length ? h(
      "ul",
      { class: "ja-warnings", role: "alert", "aria-label": "Warnings" },
      warnings
    ) : null,
    e.reason ? h("p", { class: "ja-context", text: e.reason }) : null,
    h("p", {
      class: "ja-remember",
      text: remember === null ? "“Always allow” is not offered: a call like this asks every time." : `“Always allow” remembers: ${remember}.`
    }),
    h(
      "details",
      {},
      h("summary", { text: "Input" }),
      h("pre", { class: "ja-pre", text: clip(pretty(e.input)) })
    ),
    h("div", { class: "ja-actions" }, buttons),
    answered
  );
  if (remember !== null)
    always.title = `Remembers for this session: ${remember}`;
  const parts = { card, buttons, answered };
  allow.addEventListener("click", () => decide(parts, true, false));
  always.addEventListener("click", () => decide(parts, true, true));
  deny.addEventListener("click", () => decide(parts, false, false));
  return parts;
}

// src/panel/markdown.ts
var FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
var HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
var RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
var QUOTE = /^ {0,3}>\s?(.*)$/;
var ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
var TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
var SAFE_URL = /^https?:\/\//i;
function indentOf(line) {
  return line.length - line.trimStart().length;
}
function isBlank(line) {
  return line.trim() === "";
}
function startsTable(lines, i) {
  return lines[i].includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes("-");
}
function startsBlock(lines, i) {
  const line = lines[i];
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line) || startsTable(lines, i);
}
function splitRow(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}
function renderMarkdown(source) {
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
      i++;
      const code = h("code", {
        class: lang ? `language-${lang}` : void 0,
        text: body.join("\n")
      });
      fragment.append(h("pre", { class: "ja-code" }, code));
      continue;
    }
    m = HEADING.exec(line);
    if (m) {
      const heading = h(`h${Math.min(6, m[1].length + 2)}`, {
        class: "ja-md-heading"
      });
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
    if (startsTable(lines, i)) {
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
  const aligns = splitRow(lines[start + 1]).map(
    (cell) => cell.startsWith(":") && cell.endsWith(":") ? "center" : cell.endsWith(":") ? "right" : cell.startsWith(":") ? "left" : ""
  );
  const style = (index) => aligns[index] ? `text-align:${aligns[index]}` : void 0;
  const head = h("tr");
  header.forEach((cell, index) => {
    const th = h("th", { style: style(index) });
    renderInline(cell, th);
    head.append(th);
  });
  const body = h("tbody");
  let i = start + 2;
  while (i < lines.length && !isBlank(lines[i]) && lines[i].includes("|")) {
    const row = h("tr");
    const cells = splitRow(lines[i]);
    header.forEach((_, index) => {
      const td = h("td", { style: style(index) });
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
  if (ordered && parseInt(first[2], 10) !== 1)
    list.setAttribute("start", String(parseInt(first[2], 10)));
  let item = null;
  let body = [];
  let contentIndent = base + 2;
  const flush = () => {
    if (item === null) return;
    const li = item;
    const simple = body.length === 1 || body.every((line) => !isBlank(line) && !startsBlock([line.trim()], 0));
    if (simple) {
      body.forEach((text, index) => {
        if (index > 0) li.append(h("br"));
        renderInline(text.trim(), li);
      });
    } else {
      li.append(renderMarkdown(body.join("\n")));
    }
    list.append(li);
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
      const nextItem = next !== void 0 && ITEM.exec(next);
      if (next !== void 0 && (indentOf(next) > base || nextItem && nextItem[1].length <= base + 1 && /\d/.test(nextItem[2]) === ordered)) {
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
      body.push(line);
      i++;
      continue;
    }
    break;
  }
  flush();
  return [list, i];
}
function wrap(tag, inner, inLink) {
  const node = h(tag);
  renderSpans(inner, node, inLink);
  return node;
}
function link(label, url) {
  if (!SAFE_URL.test(url)) return document.createTextNode(label);
  const a = h("a", { href: url, target: "_blank", rel: "noopener noreferrer" });
  renderSpans(label, a, true);
  return a;
}
var INLINE = [
  {
    re: /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/,
    make: (m) => h("code", {
      text: m[2].trim() === "" ? m[2] : m[2].replace(/^ (.*) $/s, "$1")
    })
  },
  {
    re: /\[([^\]\n]+)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/,
    link: true,
    make: (m) => link(m[1], m[2])
  },
  {
    re: /\*\*(?=\S)([\s\S]*?\S)\*\*/,
    make: (m, inLink) => wrap("strong", m[1], inLink)
  },
  {
    re: /(?<![\w])__(?=\S)([\s\S]*?\S)__(?![\w])/,
    make: (m, inLink) => wrap("strong", m[1], inLink)
  },
  {
    re: /\*(?=[^\s*])([\s\S]*?[^\s*])\*(?!\*)/,
    make: (m, inLink) => wrap("em", m[1], inLink)
  },
  {
    re: /(?<![\w])_(?=[^\s_])([\s\S]*?[^\s_])_(?![\w])/,
    make: (m, inLink) => wrap("em", m[1], inLink)
  },
  {
    re: /~~(?=\S)([\s\S]*?\S)~~/,
    make: (m, inLink) => wrap("del", m[1], inLink)
  },
  {
    re: /\bhttps?:\/\/[^\s<>()]*[^\s<>().,;:!?'"\]]/,
    link: true,
    make: (m) => link(m[0], m[0])
  }
];
function renderInline(text, parent) {
  renderSpans(text, parent, false);
}
function renderSpans(text, parent, inLink) {
  let rest = String(text ?? "");
  while (rest) {
    let best = null;
    for (const rule of INLINE) {
      if (inLink && rule.link) continue;
      const m = rule.re.exec(rest);
      if (m && (best === null || m.index < best.m.index)) best = { m, rule };
    }
    if (best === null) {
      parent.append(document.createTextNode(rest));
      return;
    }
    if (best.m.index > 0)
      parent.append(document.createTextNode(rest.slice(0, best.m.index)));
    parent.append(best.rule.make(best.m, inLink));
    rest = rest.slice(best.m.index + best.m[0].length);
  }
}

// src/panel/text-block.ts
function textBlock(phase) {
  const el = h("div", { class: "ja-text" });
  if (phase) el.append(h("div", { class: "ja-phase", text: phase }));
  const done = h("div");
  const tail = h("div");
  el.append(done, tail);
  return {
    el,
    done,
    tail,
    phase,
    text: "",
    doneLength: 0,
    scanned: 0,
    cut: 0,
    fence: null
  };
}
function finishText(block) {
  block.done.replaceChildren(renderMarkdown(block.text));
  block.tail.replaceChildren();
  block.doneLength = block.text.length;
}
function renderStreaming(block) {
  const text = block.text;
  let pos = block.scanned;
  for (; ; ) {
    const end = text.indexOf("\n", pos);
    if (end < 0) break;
    const line = text.slice(pos, end);
    const fence = FENCE.exec(line);
    if (fence) {
      if (block.fence === null) block.fence = fence[1][0];
      else if (line.trim()[0] === block.fence && line.trim().replace(/[`~]/g, "") === "")
        block.fence = null;
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

// src/panel/transcript.ts
var UnknownEntryError = class extends Error {
  constructor(entry) {
    super(
      `jupyter_agent panel: unknown transcript entry kind ${JSON.stringify(entry?.kind)}`
    );
    this.entry = entry;
  }
};
var Transcript = class {
  /**
   * `strict`: an unknown entry kind throws (the tests) rather than being logged to the
   * console (a page talking to a newer kernel).
   */
  constructor(root, actions, strict = false) {
    this.root = root;
    this.actions = actions;
    this.strict = strict;
    this.follow = true;
    this.lastN = 0;
    this.text = null;
    this.thinking = null;
    this.tools = /* @__PURE__ */ new Map();
    this.questions = /* @__PURE__ */ new Map();
    this.approvals = /* @__PURE__ */ new Map();
    /** The newest plan card. */
    this.plan = null;
    this.dirty = /* @__PURE__ */ new Set();
    this.frame = 0;
    root.addEventListener("scroll", () => this.follow = this.atBottom(), {
      passive: true
    });
    if (typeof MutationObserver === "function") {
      new MutationObserver(() => this.follow && this.scrollDown()).observe(
        root,
        {
          childList: true,
          subtree: true,
          characterData: true,
          attributes: true,
          attributeFilter: ["open", "hidden"]
        }
      );
    }
    this.reset();
  }
  reset() {
    this.root.replaceChildren();
    this.follow = true;
    this.lastN = 0;
    this.text = null;
    this.thinking = null;
    this.tools = /* @__PURE__ */ new Map();
    this.questions = /* @__PURE__ */ new Map();
    this.approvals = /* @__PURE__ */ new Map();
    this.plan = null;
    this.dirty = /* @__PURE__ */ new Set();
    this.frame = 0;
  }
  apply(entry) {
    if (entry.n !== void 0) {
      if (entry.n <= this.lastN) return;
      this.lastN = entry.n;
    }
    switch (entry.kind) {
      case "user":
        return this.onUser(entry);
      case "note":
        return void this.line("note", entry.text);
      case "agent_start":
        return this.onAgentStart(entry);
      case "turn_start":
        return this.closeStreams();
      case "text_delta":
        return this.onTextDelta(entry);
      case "text":
      case "text_end":
        return this.onText(entry);
      case "thinking_delta":
        return this.onThinkingDelta(entry);
      case "reason":
      case "observe":
        if (entry.control)
          this.line("meta", `${entry.kind}: ${pretty(entry.control)}`);
        return;
      case "retry":
        return this.onRetry(entry);
      case "tool_start":
        return void this.onToolStart(entry);
      case "tool_progress":
        return this.onToolProgress(entry);
      case "tool_end":
        return this.onToolEnd(entry);
      case "plan":
        return this.onPlan(entry);
      case "plan_step":
        return this.onPlanStep(entry);
      case "plan_stopped":
        return this.onPlanStopped();
      case "question":
        return this.onQuestion(entry);
      case "answer":
        return this.onAnswer(entry);
      case "request_input_timeout": {
        const pending = this.questions.get(entry.question_id) || this.approvals.get(entry.question_id);
        if (pending)
          this.closeCard(pending, `No answer within ${entry.timeout} s.`);
        return;
      }
      case "permission_request":
        return this.onPermissionRequest(entry);
      case "permission_response":
        return this.onPermissionResponse(entry);
      case "update":
        this.closeStreams();
        return void this.line("update", `ℹ ${entry.message}`);
      case "warning":
        return this.onWarning(entry);
      case "stopped":
        return this.onStopped(entry);
      case "completed":
        return this.onCompleted(entry);
      case "error":
        return this.onError(entry);
      case "subagent_spawned":
        return void this.line(
          "meta",
          `↳ subagent ${entry.agent_type}: ${entry.task}`
        );
      case "subagent_output": {
        const inner = entry.event || {};
        if (inner.kind === "tool_start")
          this.line("meta", `  ↳ ${inner.summary || inner.name}`);
        return;
      }
      case "subagent_complete":
        return void this.line(
          "meta",
          `↳ subagent ended ${entry.state}${entry.result ? `: ${entry.result}` : ""}`
        );
      default:
        return this.unknown(entry);
    }
  }
  unknown(entry) {
    const error = new UnknownEntryError(entry);
    if (this.strict) throw error;
    console.error(error.message, entry);
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
  onUser(e) {
    this.closeStreams();
    const bubble = h("div", { class: "ja-user" });
    const text = String(e.text ?? "");
    const split = text.search(/\n\s*\n/);
    if (split > 0 && text.length > 240) {
      bubble.append(renderMarkdown(text.slice(0, split)));
      bubble.append(
        h(
          "details",
          {},
          h("summary", { text: "More" }),
          renderMarkdown(text.slice(split))
        )
      );
    } else {
      bubble.append(renderMarkdown(text));
    }
    this.add(bubble);
  }
  onAgentStart(e) {
    this.closeStreams();
    if (this.plan?.starting) {
      this.plan.starting = false;
      this.plan.runId = e.run_id ?? null;
    }
    this.onUser({ text: e.task });
    const label = e.model_label ? ` — ${e.model_label}` : "";
    this.line("run", `${e.role} · ${e.model}${label}`);
  }
  onTextDelta(e) {
    const phase = e.phase ?? null;
    if (this.text === null || this.text.phase !== phase) {
      this.closeStreams();
      this.text = this.textBlock(phase);
    }
    this.text.text += e.text;
    this.dirty.add(this.text);
    this.schedule();
  }
  /** A text block ended: `text` carries its whole text, `text_end` keeps what streamed. */
  onText(e) {
    const phase = e.phase ?? null;
    let block = this.text;
    if (block === null || block.phase !== phase) {
      this.closeStreams();
      block = this.textBlock(phase);
    }
    if (e.kind === "text") block.text = e.text;
    this.finishText(block);
    if (e.interrupted)
      block.el.append(
        h("span", { class: "ja-interrupted", text: " [interrupted]" })
      );
    this.text = null;
  }
  textBlock(phase) {
    const block = textBlock(phase);
    this.add(block.el);
    return block;
  }
  finishText(block) {
    this.dirty.delete(block);
    finishText(block);
  }
  schedule() {
    if (this.frame) return;
    const run = () => {
      this.frame = 0;
      this.renderDirty();
    };
    this.frame = typeof requestAnimationFrame === "function" && document.visibilityState !== "hidden" ? requestAnimationFrame(run) : setTimeout(run, 16);
  }
  /** Renders the streamed text that arrived since the last frame. */
  renderDirty() {
    for (const block of this.dirty) renderStreaming(block);
    this.dirty.clear();
    if (this.follow) this.scrollDown();
  }
  onThinkingDelta(e) {
    if (this.thinking === null) {
      const pre = h("div", { class: "ja-thinking-text" });
      const box = h(
        "details",
        { class: "ja-thinking" },
        h("summary", { text: "Thinking" }),
        pre
      );
      this.add(box);
      this.thinking = { pre };
    }
    this.thinking.pre.append(document.createTextNode(e.text));
  }
  onRetry(e) {
    if (this.text) this.text.el.remove();
    this.text = null;
    this.thinking = null;
    this.line("warning", `↻ The reply broke off (${e.reason}); retrying.`);
  }
  // Tools
  onToolStart(e) {
    this.closeStreams();
    const tool = toolCard(e);
    this.tools.set(e.tool_use_id, tool);
    this.add(tool.card);
    return tool;
  }
  onToolProgress(e) {
    const tool = this.tools.get(e.tool_use_id);
    if (!tool) return;
    tool.output.hidden = false;
    tool.output.append(document.createTextNode(e.output));
    const text = tool.output.textContent ?? "";
    if (text.length > 2 * MAX_PRE)
      tool.output.textContent = `…${text.slice(-MAX_PRE)}`;
  }
  onToolEnd(e) {
    const tool = this.tools.get(e.tool_use_id) ?? this.onToolStart({
      tool_use_id: e.tool_use_id,
      name: e.name,
      input: {},
      summary: e.name
    });
    endTool(tool, e);
  }
  // The plan
  onPlan(e) {
    this.closeStreams();
    if (this.plan) this.plan.button.disabled = true;
    const entry = {
      ...planCard(e.plan),
      executed: false,
      runId: null,
      starting: false
    };
    const button = entry.button;
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
    this.add(entry.card);
    this.refreshControls();
  }
  onPlanStep(e) {
    const plan = this.plan;
    const step = plan?.steps.get(e.step_number);
    if (!plan || !step) return;
    step.status.dataset.status = e.status;
    step.status.textContent = STEP_LABELS[e.status] ?? e.status;
    step.status.title = e.note || "";
    step.row.dataset.status = e.status;
    plan.executed = true;
    if (e.run_id) plan.runId = e.run_id;
    this.refreshControls();
  }
  planRunEnded(e, cutShort) {
    const plan = this.plan;
    if (!plan) return;
    plan.starting = false;
    if (cutShort && plan.executed && e.run_id && plan.runId === e.run_id)
      this.onPlanStopped();
  }
  onPlanStopped() {
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
  /** The Execute plan button: enabled while the plan is not running and the agent idle. */
  refreshControls() {
    const plan = this.plan;
    if (plan) plan.button.disabled = plan.executed || this.actions.busy();
  }
  // Questions and approvals
  onQuestion(e) {
    this.closeStreams();
    const question = questionCard(e, ({ buttons }, value, button) => {
      buttons.forEach((b) => b.disabled = true);
      if (button) button.classList.add("ja-chosen");
      this.actions.command("answer", { question_id: e.question_id, value }).catch((error) => {
        buttons.forEach((b) => b.disabled = false);
        if (button) button.classList.remove("ja-chosen");
        this.actions.error(error.message);
      });
    });
    this.questions.set(e.question_id, question);
    const card = question.card;
    this.add(card);
    card.scrollIntoView?.({ block: "nearest" });
    card.querySelector("button, input")?.focus?.({ preventScroll: true });
  }
  onAnswer(e) {
    const q = this.questions.get(e.question_id);
    if (!q) return;
    q.buttons.forEach((b) => b.disabled = true);
    for (const b of q.options.querySelectorAll("button"))
      b.classList.toggle("ja-chosen", b.dataset.value === e.value);
    q.card.classList.remove("ja-flash");
    q.card.dataset.state = "answered";
    q.answered.hidden = false;
    q.answered.textContent = `Answered: ${e.label ?? e.value}`;
  }
  onPermissionRequest(e) {
    this.closeStreams();
    const approval = approvalCard(e, ({ buttons }, allow, remember) => {
      buttons.forEach((b) => b.disabled = true);
      this.actions.command("approve", { request_id: e.request_id, allow, remember }).catch((error) => {
        buttons.forEach((b) => b.disabled = false);
        this.actions.error(error.message);
      });
    });
    this.approvals.set(e.request_id, approval);
    this.add(approval.card);
    approval.card.scrollIntoView?.({ block: "nearest" });
  }
  onPermissionResponse(e) {
    const a = this.approvals.get(e.request_id);
    if (!a) return;
    const verdict = e.allowed ? e.remember ? `Always allowed${e.rule ? ` (${e.rule})` : ""}` : "Allowed" : "Denied";
    this.closeCard(a, verdict);
    a.card.dataset.state = e.allowed ? "allowed" : "denied";
  }
  closeCard(pending, text) {
    pending.buttons.forEach((b) => b.disabled = true);
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
  onWarning(e) {
    const line = this.line("warning", `⚠ ${e.message}`);
    if (e.action !== "trust_workspace" || !line) return;
    const trust = h("button", {
      type: "button",
      text: "Trust this folder",
      title: "Apply this folder's settings (remembered in your own settings)"
    });
    trust.addEventListener("click", () => {
      trust.disabled = true;
      this.actions.command("trust").then(
        () => trust.textContent = "Trusted",
        (error) => {
          trust.disabled = false;
          this.actions.error(error.message);
        }
      );
    });
    line.append(" ", trust);
  }
  onStopped(e) {
    this.closeStreams();
    this.closeOpenCards("Not answered: the run stopped.");
    for (const tool of this.tools.values())
      if (tool.card.dataset.state === "running")
        tool.card.dataset.state = "error";
    this.line(
      "stopped",
      `■ Stopped (${e.reason.replace(/_/g, " ")})${e.message ? `: ${e.message}` : ""}`
    );
    this.planRunEnded(e, true);
    this.refreshControls();
  }
  onCompleted(e) {
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
  onError(e) {
    this.closeStreams();
    this.closeOpenCards("Not answered: the run failed.");
    this.line(
      "error",
      `✗ Error${e.error_type ? ` (${e.error_type})` : ""}: ${e.message}`
    );
    this.planRunEnded(e, true);
    this.refreshControls();
  }
};

// src/panel/widget.ts
var SLOW_REPLY = 1500;
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
    default: {
      const unknown = status;
      return String(unknown);
    }
  }
}
function number(n) {
  return Number(n || 0).toLocaleString("en-US");
}
function usageText(usage) {
  if (!usage || usage.run_input_tokens === void 0) return "";
  const cached = (input, read) => input ? ` (${Math.round(100 * read / input)}% cached)` : "";
  return `Run: ${number(usage.run_input_tokens)} in${cached(usage.run_input_tokens, usage.run_cache_read_input_tokens)}, ${number(usage.run_output_tokens)} out · $${Number(usage.run_cost_usd || 0).toFixed(4)} — Session: ${number(usage.session_input_tokens)} in${cached(usage.session_input_tokens, usage.session_cache_read_input_tokens)}, ${number(usage.session_output_tokens)} out · $${Number(usage.session_cost_usd || 0).toFixed(4)}`;
}
function render({ model, el }) {
  const viewId = Math.random().toString(36).slice(2, 10);
  const listeners = [];
  let disposed = false;
  const on = (name, fn) => {
    model.on(name, fn);
    listeners.push([name, fn]);
  };
  const status = h("span", {
    class: "ja-status",
    role: "status",
    "aria-live": "polite"
  });
  const roleBadge = h("span", { class: "ja-badge ja-role-badge" });
  const modelName = h("span", { class: "ja-model" });
  const replay = h("span", { class: "ja-replay", hidden: true });
  const sandbox = h("span", { class: "ja-sandbox", hidden: true });
  const notebook = h("div", { class: "ja-notebook", hidden: true });
  const dockNote = h("div", { class: "ja-note", hidden: true });
  const errors = h("div", { class: "ja-errors", "aria-live": "assertive" });
  const transcriptEl = h("div", {
    class: "ja-transcript",
    tabindex: "0",
    "aria-label": "Transcript"
  });
  const waiting = h("div", {
    class: "ja-line ja-meta",
    text: "Connecting to the kernel…"
  });
  transcriptEl.append(waiting);
  const message = h("textarea", {
    class: "ja-message",
    rows: 2,
    "aria-label": "Message",
    placeholder: "Ask the agent… (Enter sends, Shift+Enter starts a new line)"
  });
  const sendButton = h("button", {
    type: "submit",
    class: "ja-primary",
    text: "Send"
  });
  const stopButton = h("button", {
    type: "button",
    class: "ja-danger ja-stop",
    text: "Stop"
  });
  const inputForm = h(
    "form",
    { class: "ja-input" },
    message,
    h("div", { class: "ja-buttons" }, sendButton, stopButton)
  );
  const roleSelect = h("select", { "aria-label": "Role" });
  const maxSteps = h("input", {
    type: "number",
    min: 1,
    step: 1,
    class: "ja-max-steps",
    "aria-label": "Max iterations"
  });
  const sessionSelect = h("select", { "aria-label": "Session" });
  const resumeButton = h("button", { type: "button", text: "Resume" });
  const controls = h(
    "div",
    { class: "ja-controls" },
    h("label", {}, "Role ", roleSelect),
    h("label", {}, "Max iterations ", maxSteps),
    h("label", { class: "ja-session-picker" }, "Session ", sessionSelect),
    resumeButton
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
      status
    ),
    notebook,
    dockNote,
    transcriptEl,
    errors,
    inputForm,
    controls,
    usage
  );
  el.append(root);
  let nextId = 1;
  const waitingReplies = /* @__PURE__ */ new Map();
  const waitNote = h("div", {
    class: "ja-line ja-note ja-wait",
    hidden: true,
    text: "Sent. The kernel is running a cell; it reads this when the cell ends."
  });
  errors.before(waitNote);
  const showWaitNote = () => {
    waitNote.hidden = ![...waitingReplies.values()].some(
      (pending) => pending.slow
    );
  };
  const command = (name, args) => new Promise((resolve, reject) => {
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
    setTimeout(() => line.remove(), 8e3);
  };
  const transcript = new Transcript(transcriptEl, {
    command,
    busy: () => model.get("busy"),
    error: showError
  });
  let ready = false;
  on("msg:custom", (msg) => {
    if (!msg || typeof msg !== "object") return;
    switch (msg.type) {
      case "reply": {
        if (msg.id === null) {
          if (!msg.ok) showError(msg.error || "The kernel refused a message.");
          return;
        }
        const pending = waitingReplies.get(msg.id);
        if (!pending) return;
        waitingReplies.delete(msg.id);
        clearTimeout(pending.timer);
        showWaitNote();
        if (msg.ok) pending.resolve(msg);
        else pending.reject(new Error(msg.error || "The command failed."));
        return;
      }
      case "snapshot":
        if (msg.view !== null && msg.view !== viewId) return;
        transcript.reset();
        for (const entry of msg.entries) transcript.apply(entry);
        transcript.renderDirty();
        transcript.scrollDown();
        ready = true;
        refresh();
        return;
      case "events":
        if (ready) for (const entry of msg.entries) transcript.apply(entry);
        return;
      case "text":
        if (ready)
          transcript.apply({ kind: "text_delta", n: msg.n, text: msg.text });
        return;
      default: {
        const unknown = msg;
        console.error("jupyter_agent panel: unknown kernel message", unknown);
      }
    }
  });
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
        const option = h("option", {
          value: role.name,
          title: role.description || void 0,
          text: label
        });
        option.selected = role.name === current;
        return option;
      })
    );
    roleSelect.value = current;
  }
  function refreshSessions() {
    const current = model.get("session_id");
    const sessions = model.get("sessions") || [];
    const options = sessions.map((s) => {
      const when = new Date(s.updated * 1e3).toLocaleString();
      const option = h("option", {
        value: s.id,
        text: `${s.title} — ${when}${s.id === current ? " (current)" : ""}`
      });
      option.selected = s.id === current;
      return option;
    });
    if (!sessions.some((s) => s.id === current))
      options.unshift(
        h("option", {
          value: current,
          text: "(current session)",
          selected: true
        })
      );
    sessionSelect.replaceChildren(...options);
    refresh();
  }
  function refreshNotebook() {
    const mode = model.get("bridge_mode");
    const text = model.get("notebook");
    notebook.hidden = !text;
    notebook.dataset.mode = mode;
    notebook.textContent = mode === "file" ? `Notebook edits go to the file: ${text}` : mode === "live" ? `Notebook: ${text}` : text;
  }
  function refreshDock() {
    const side = model.get("dock") === "side";
    dockNote.hidden = true;
    if (!side) return;
    if (!el.isConnected) {
      requestAnimationFrame(() => {
        if (!disposed) refreshDock();
      });
      return;
    }
    if (el.closest("[data-jupyter-agent-side]")) return;
    const event = new CustomEvent("jupyter-agent:dock", {
      detail: {
        where: "side",
        kernelId: model.get("kernel_id"),
        widgetId: model.get("widget_id")
      },
      cancelable: true
    });
    const taken = !document.dispatchEvent(event);
    dockNote.hidden = false;
    dockNote.textContent = taken ? "The agent panel is in the right sidebar." : "Docking in the sidebar needs the jupyter_agent JupyterLab extension; the panel stays here.";
    root.classList.toggle("ja-docked-away", taken);
  }
  for (const name of [
    "status",
    "detail",
    "stop_reason",
    "busy",
    "role",
    "model_name",
    "model_label",
    "sandbox",
    "sandboxed"
  ])
    on(`change:${name}`, refresh);
  on("change:roles", refreshRoles);
  on("change:role", refreshRoles);
  on("change:sessions", refreshSessions);
  on("change:session_id", refreshSessions);
  on("change:notebook", refreshNotebook);
  on("change:bridge_mode", refreshNotebook);
  on("change:usage", () => usage.textContent = usageText(model.get("usage")));
  on(
    "change:max_steps",
    () => maxSteps.value = String(model.get("max_steps"))
  );
  on("change:dock", refreshDock);
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
      }
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
    command("resume", { session_id: sessionSelect.value }).catch(
      (error) => {
        showError(error.message);
        refresh();
      }
    );
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
var widget_default = { render };
export {
  widget_default as default,
  interruptKernel,
  renderInline,
  renderMarkdown
};
