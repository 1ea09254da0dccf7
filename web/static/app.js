// aletheia dashboard: a thin client of the REST API (/v1), signed in by a same-origin
// HttpOnly cookie.  Every text from the store is inserted as text (never as HTML).
"use strict";

const HOSTS = ["claude-code", "codex", "gemini", "cursor", "opencode", "windsurf", "command-code"];
const state = { detail: null, sessionsCursor: null, factsCursor: null, jobsCursor: null };

// -- helpers ----------------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function $(id) { return document.getElementById(id); }

function toast(message, kind) {
  const box = $("toast");
  box.textContent = message;
  box.className = kind || "info";
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { box.hidden = true; }, 6000);
}

async function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (response.status === 401) { window.location.reload(); throw new Error("signed out"); }
  const data = await response.json().catch(() => ({ message: response.statusText }));
  if (!response.ok) {
    const error = new Error(data.message || `HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

function guarded(fn) {
  return async (event) => {
    if (event && event.preventDefault) event.preventDefault();
    try { await fn(event); } catch (error) { toast(error.message, "error"); }
  };
}

function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== "" && value !== null && value !== undefined && value !== false) search.append(key, value);
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

function formValues(form) {
  const out = {};
  for (const [key, value] of new FormData(form).entries()) out[key] = typeof value === "string" ? value.trim() : value;
  return out;
}

function when(ms) { return ms ? new Date(ms).toISOString().replace("T", " ").slice(0, 16) : ""; }

// -- tabs -------------------------------------------------------------------------------------

const loaders = {};

function showTab(name) {
  for (const button of document.querySelectorAll("#tabs button")) {
    button.classList.toggle("active", button.dataset.tab === name);
  }
  for (const section of document.querySelectorAll("main > section")) {
    section.hidden = section.id !== `tab-${name}`;
  }
  if (loaders[name]) guarded(loaders[name])();
}

// -- search and detail ------------------------------------------------------------------------

async function runSearch() {
  const f = formValues($("search-form"));
  const params = { q: f.q, project: f.project, kind: f.kind, tool: f.tool, session_id: f.session_id,
                   include_dismissed: $("f-dismissed").checked ? "true" : "", limit: f.limit };
  const data = await api("GET", `/v1/search${query(params)}`);
  const list = $("results");
  list.replaceChildren();
  if (!data.items.length) list.append(el("li", { class: "empty" }, "no matches"));
  for (const hit of data.items) {
    list.append(el("li", { class: `hit ${hit.type}`, "data-id": hit.id },
      el("button", { class: "link", onclick: guarded(() => openItem(hit)) },
        el("span", { class: "title" }, hit.title || "(untitled)")),
      el("span", { class: "meta" }, `${hit.type}:${hit.kind} · ${hit.project} · ${hit.created}`),
      el("span", { class: "snippet" }, hit.snippet)));
  }
}

async function openItem(hit) {
  if (hit.type === "fact") return showFact(hit);
  const memory = await api("GET", `/v1/memories/${encodeURIComponent(hit.id)}`);
  showMemory(memory);
}

function showFact(hit) {
  const box = $("detail");
  box.hidden = false;
  box.replaceChildren(
    el("h2", {}, "Fact"), el("p", { class: "narrative" }, hit.title),
    el("p", { class: "meta" }, `${hit.id} · ${hit.project} · sources: ${(hit.source_ids || []).join(", ")}`),
    el("div", { class: "actions" },
      el("button", { onclick: guarded(async () => { await api("POST", "/v1/dismiss", { id: hit.id }); toast("fact dismissed"); await runSearch(); }) }, "Dismiss"),
      el("button", { onclick: guarded(async () => { await api("POST", "/v1/promote", { id: hit.id }); toast("fact promoted to global"); }) }, "Promote to global")));
}

function showMemory(m) {
  state.detail = m;
  const box = $("detail");
  box.hidden = false;
  const flags = [m.scope, m.pinned ? "pinned" : null, m.dismissed_at ? "dismissed" : null].filter(Boolean).join(" · ");
  const refresh = async (next) => { showMemory(next); };
  const actions = el("div", { class: "actions" },
    el("button", { id: "act-pin", onclick: guarded(async () => {
      const next = m.pinned ? await api("DELETE", `/v1/pins/${encodeURIComponent(m.id)}`) : await api("POST", "/v1/pins", { id: m.id });
      toast(next.pinned ? "pinned" : "unpinned"); await refresh(next);
    }) }, m.pinned ? "Unpin" : "Pin"),
    el("button", { id: "act-dismiss", onclick: guarded(async () => {
      const next = await api("POST", "/v1/dismiss", { id: m.id, undo: Boolean(m.dismissed_at) });
      toast(next.dismissed_at ? "dismissed (hidden from search and context)" : "restored");
      await refresh(next); await runSearch().catch(() => {});
    }) }, m.dismissed_at ? "Undismiss" : "Dismiss"),
    el("button", { id: "act-promote", onclick: guarded(async () => {
      const next = await api("POST", "/v1/promote", { id: m.id, scope: m.scope === "global" ? "project" : "global" });
      toast(`scope: ${next.scope}`); await refresh(next);
    }) }, m.scope === "global" ? "Back to project" : "Promote to global"),
    el("button", { id: "act-edit", onclick: () => editMemory(m) }, "Edit"),
    el("button", { id: "act-timeline", onclick: guarded(() => showTimeline(m)) }, "Timeline"),
    el("button", { id: "act-erase", class: "danger", onclick: guarded(async () => {
      if (!window.confirm("Erase this memory for good? This cannot be undone.")) return;
      const receipt = await api("POST", "/v1/erase", { ids: [m.id] });
      toast(`erased; receipt ${receipt.id}`);
      box.replaceChildren(el("h2", {}, "Erased"), el("p", {}, `Receipt ${receipt.id}`),
        el("pre", { class: "block" }, JSON.stringify(receipt.body, null, 2)));
      await runSearch().catch(() => {});
    }) }, "Erase"));
  box.replaceChildren(...[
    el("h2", { id: "detail-title" }, m.title || "(untitled)"),
    el("p", { class: "meta" }, `${m.id} · ${m.kind} · ${m.project} · ${m.created} · ${flags} · from ${m.source}`),
    m.subtitle ? el("p", { class: "subtitle" }, m.subtitle) : null,
    el("pre", { id: "detail-narrative", class: "narrative" }, m.narrative),
    m.files.length ? el("p", { class: "meta" }, `files: ${m.files.join(", ")}`) : null,
    m.concepts.length ? el("p", { class: "meta" }, `concepts: ${m.concepts.join(", ")}`) : null,
    actions, el("div", { id: "detail-extra" })].filter(Boolean));
}

function editMemory(m) {
  const form = el("form", { id: "edit-form", class: "stack" },
    el("label", {}, "Title ", el("input", { name: "title", value: m.title, maxlength: 200 })),
    el("label", {}, "Narrative ", el("textarea", { name: "narrative", rows: 10 }, m.narrative)),
    el("button", { type: "submit" }, "Save"));
  form.addEventListener("submit", guarded(async () => {
    const f = formValues(form);
    const next = await api("PATCH", `/v1/memories/${encodeURIComponent(m.id)}`, { title: f.title, narrative: f.narrative });
    toast("saved (redacted like every write)"); showMemory(next);
  }));
  $("detail-extra").replaceChildren(form);
}

async function showTimeline(m) {
  const data = await api("GET", `/v1/timeline${query({ anchor: m.id, before: 5, after: 5 })}`);
  $("detail-extra").replaceChildren(el("h3", {}, "Timeline"), el("ol", { class: "timeline" },
    data.items.map((r) => el("li", { class: r.id === m.id ? "anchor" : "" },
      el("button", { class: "link", onclick: guarded(() => openItem({ type: "memory", id: r.id })) },
        `${r.created.slice(11, 16)} [${r.kind}] ${r.title}`)))));
}

// -- note -------------------------------------------------------------------------------------

async function saveNote() {
  const f = formValues($("note-form"));
  const title = f.title || f.narrative.split("\n")[0].slice(0, 200);
  const result = await api("POST", "/v1/memories", { project: f.project, title, narrative: f.narrative, kind: "note" });
  const stored = await api("GET", `/v1/memories/${encodeURIComponent(result.id)}`);
  localStorage.setItem("aletheia.project", f.project);
  $("note-result").replaceChildren(
    el("p", {}, result.inserted ? "Saved. Stored text:" : "Already stored. Stored text:"),
    el("pre", { id: "note-stored", class: "narrative" }, stored.narrative),
    el("button", { class: "link", onclick: () => { showTab("search"); showMemory(stored); } }, `open ${stored.id}`));
  $("note-text").value = "";
  $("note-title").value = "";
  toast("note saved");
}

// -- sessions, facts, jobs (paginated tables) --------------------------------------------------

async function loadSessions(more) {
  const f = formValues($("sessions-form"));
  const data = await api("GET", `/v1/sessions${query({ project: f.project, limit: 50, cursor: more ? state.sessionsCursor : "" })}`);
  const body = $("sessions-body");
  if (!more) body.replaceChildren();
  for (const s of data.items) {
    body.append(el("tr", {},
      el("td", {}, when(s.started_at)), el("td", {}, s.tool || ""), el("td", {}, s.project),
      el("td", {}, s.event_count), el("td", {}, s.job_state || "not yet"),
      el("td", {}, el("button", { class: "link", onclick: guarded(() => sessionMemories(s)) }, s.first_request || "(no prompt)"))));
  }
  if (!body.children.length) body.append(el("tr", {}, el("td", { colspan: 6, class: "empty" }, "no sessions")));
  state.sessionsCursor = data.next_cursor;
  $("sessions-more").hidden = !data.next_cursor;
}

async function sessionMemories(s) {
  const data = await api("GET", `/v1/memories${query({ session_id: s.id, limit: 100 })}`);
  const box = $("detail");
  box.hidden = false;
  box.replaceChildren(el("h2", {}, `Session ${s.id}`), el("p", { class: "meta" }, `${s.project} · ${s.tool || ""} · ${data.items.length} memories`),
    el("ol", { class: "timeline" }, data.items.reverse().map((m) => el("li", {},
      el("button", { class: "link", onclick: () => showMemory(m) }, `${m.created.slice(11, 16)} [${m.kind}] ${m.title}`)))));
}

async function loadFacts(more) {
  const f = formValues($("facts-form"));
  const data = await api("GET", `/v1/facts${query({ project: f.project, status: f.status, limit: 50, cursor: more ? state.factsCursor : "" })}`);
  const body = $("facts-body");
  if (!more) body.replaceChildren();
  for (const fact of data.items) {
    const dismissed = fact.status === "dismissed";
    body.append(el("tr", {},
      el("td", {}, fact.text), el("td", {}, fact.scope === "global" ? "global" : fact.project),
      el("td", {}, fact.confidence.toFixed(2)), el("td", {}, fact.status),
      el("td", {}, fact.status === "superseded" ? "" : el("button", { onclick: guarded(async () => {
        await api("POST", "/v1/dismiss", { id: fact.id, undo: dismissed }); await loadFacts(false);
      }) }, dismissed ? "Restore" : "Dismiss"))));
  }
  if (!body.children.length) body.append(el("tr", {}, el("td", { colspan: 5, class: "empty" }, "no facts")));
  state.factsCursor = data.next_cursor;
  $("facts-more").hidden = !data.next_cursor;
}

async function loadJobs(more) {
  const f = formValues($("jobs-form"));
  const data = await api("GET", `/v1/jobs${query({ state: f.state, limit: 50, cursor: more ? state.jobsCursor : "" })}`);
  const body = $("jobs-body");
  if (!more) body.replaceChildren();
  for (const job of data.items) {
    const retryable = job.state === "dead";
    body.append(el("tr", { class: `job ${job.state}` },
      el("td", {}, job.id), el("td", {}, job.state), el("td", {}, job.session_id),
      el("td", {}, `${job.attempts}/${job.max_attempts}`), el("td", { class: "error-text" }, job.last_error || ""),
      el("td", {}, retryable ? el("button", { onclick: guarded(async () => {
        await api("POST", `/v1/jobs/${job.id}/retry`); toast(`job ${job.id} queued again`); await loadJobs(false);
      }) }, "Retry") : "")));
  }
  if (!body.children.length) body.append(el("tr", {}, el("td", { colspan: 6, class: "empty" }, "no jobs")));
  state.jobsCursor = data.next_cursor;
  $("jobs-more").hidden = !data.next_cursor;
}

// -- rules ------------------------------------------------------------------------------------

function hostBoxes(prefix, chosen) {
  return HOSTS.map((h) => el("label", { class: "host" },
    el("input", { type: "checkbox", name: `${prefix}-host`, value: h, checked: chosen.includes(h) }), h));
}

async function loadRules() {
  const data = await api("GET", "/v1/rules");
  const body = $("rules-body");
  body.replaceChildren();
  for (const rule of data.items) {
    const hosts = el("span", { class: "hosts" }, hostBoxes(`rule-${rule.id}`, rule.tools));
    for (const box of hosts.querySelectorAll("input")) {
      box.addEventListener("change", guarded(async () => {
        const tools = [...hosts.querySelectorAll("input:checked")].map((i) => i.value);
        await api("PATCH", `/v1/rules/${encodeURIComponent(rule.id)}`, { tools });
        toast(tools.length ? `limited to ${tools.join(", ")}` : "for every host");
      }));
    }
    body.append(el("tr", { "data-id": rule.id },
      el("td", {}, el("input", { type: "checkbox", class: "rule-enabled", "aria-label": "enabled", checked: rule.enabled, onchange: guarded(async (event) => {
        await api("PATCH", `/v1/rules/${encodeURIComponent(rule.id)}`, { enabled: event.target.checked });
        toast(event.target.checked ? "rule enabled" : "rule disabled");
      }) })),
      el("td", {}, rule.text), el("td", {}, rule.project || "every project"), el("td", {}, hosts),
      el("td", {}, el("button", { class: "danger", onclick: guarded(async () => {
        await api("DELETE", `/v1/rules/${encodeURIComponent(rule.id)}`); await loadRules();
      }) }, "Delete"))));
  }
  if (!data.items.length) body.append(el("tr", {}, el("td", { colspan: 5, class: "empty" }, "no rules")));
}

async function addRule() {
  const f = formValues($("rule-form"));
  const tools = [...document.querySelectorAll("#rule-hosts input:checked")].map((i) => i.value);
  await api("POST", "/v1/rules", { text: f.text, project: f.project || null, tools });
  $("rule-text").value = "";
  toast("rule added");
  await loadRules();
}

// -- settings ---------------------------------------------------------------------------------

function settingInput(s) {
  if (s.type === "bool") return el("input", { type: "checkbox", name: "value", checked: s.value });
  if (s.type === "int") return el("input", { type: "number", name: "value", value: s.value, min: s.minimum, max: s.maximum, step: 1 });
  if (s.type === "list") return el("textarea", { name: "value", rows: 3, placeholder: "one per line" }, s.value.join("\n"));
  return el("input", { type: "text", name: "value", value: s.value });
}

function settingValue(s, input) {
  if (s.type === "bool") return input.checked;
  if (s.type === "int") return Number.parseInt(input.value, 10);
  if (s.type === "list") return input.value.split("\n").map((v) => v.trim()).filter(Boolean);
  return input.value.trim();
}

async function loadSettings() {
  const data = await api("GET", "/v1/settings");
  const list = $("settings-list");
  list.replaceChildren();
  for (const s of data.items) {
    const input = settingInput(s);
    input.id = `setting-${s.key}`;
    const note = el("span", { class: "meta" }, `default ${JSON.stringify(s.default)}${s.note ? ` · ${s.note}` : ""}`);
    const form = el("form", { class: "setting", "data-key": s.key },
      el("label", { for: input.id }, el("code", {}, s.key), " — ", s.help), input,
      el("button", { type: "submit" }, "Save"), note);
    form.addEventListener("submit", guarded(async () => {
      const saved = await api("PUT", `/v1/settings/${encodeURIComponent(s.key)}`, { value: settingValue(s, input) });
      toast(`${saved.key} = ${JSON.stringify(saved.value)}`);
    }));
    list.append(form);
  }
}

async function previewContext() {
  const project = $("context-project").value.trim();
  const data = await api("GET", `/v1/context${query({ project, host: $("context-host").value })}`);
  $("context-block").textContent = data.block || "(no memories for this project)";
}

// -- stats ------------------------------------------------------------------------------------

async function loadStats() {
  const s = await api("GET", "/v1/stats");
  const figures = $("stats-figures");
  figures.replaceChildren();
  for (const [label, value] of [["memories", s.memories], ["projects", s.projects], ["sessions", s.sessions],
    ["active facts", s.facts], ["pinned", s.pinned], ["dismissed", s.dismissed], ["stop queue", s.stop_queue],
    ["jobs", Object.entries(s.jobs).map(([k, v]) => `${k} ${v}`).join(", ") || "none"]]) {
    figures.append(el("div", {}, el("dt", {}, label), el("dd", {}, value)));
  }
  $("stats-kinds").replaceChildren(...Object.entries(s.by_kind).map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, v))));
  $("stats-projects").replaceChildren(...Object.entries(s.by_project).map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, v))));
  return s;
}

async function fillChoices() {
  const s = await api("GET", "/v1/stats");
  $("projects").replaceChildren(...Object.keys(s.by_project).map((p) => el("option", { value: p })));
  const kind = $("f-kind");
  for (const k of Object.keys(s.by_kind)) kind.append(el("option", { value: k }, k));
  for (const select of [$("f-tool"), $("context-host")]) {
    for (const h of HOSTS) select.append(el("option", { value: h }, h));
  }
  const remembered = localStorage.getItem("aletheia.project") || Object.keys(s.by_project)[0] || "";
  $("note-project").value = remembered;
  $("context-project").value = remembered;
}

// -- wiring -----------------------------------------------------------------------------------

Object.assign(loaders, {
  sessions: () => loadSessions(false), facts: () => loadFacts(false), jobs: () => loadJobs(false),
  rules: loadRules, settings: loadSettings, stats: loadStats,
});

document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("#tabs button")) {
    button.addEventListener("click", () => showTab(button.dataset.tab));
  }
  $("search-form").addEventListener("submit", guarded(runSearch));
  $("note-form").addEventListener("submit", guarded(saveNote));
  $("sessions-form").addEventListener("submit", guarded(() => loadSessions(false)));
  $("sessions-more").addEventListener("click", guarded(() => loadSessions(true)));
  $("facts-form").addEventListener("submit", guarded(() => loadFacts(false)));
  $("facts-more").addEventListener("click", guarded(() => loadFacts(true)));
  $("jobs-form").addEventListener("submit", guarded(() => loadJobs(false)));
  $("jobs-more").addEventListener("click", guarded(() => loadJobs(true)));
  $("rule-form").addEventListener("submit", guarded(addRule));
  $("context-form").addEventListener("submit", guarded(previewContext));
  $("rule-hosts").append(...hostBoxes("new", []));
  guarded(fillChoices)();
});
