// aletheia dashboard: a memory viewer over the REST API (/v1), signed in by a same-origin
// HttpOnly cookie.  Plain JS, no build step.  Every text from the store is inserted as text
// (never as HTML); the view lives in the URL's hash, so every screen has a link.
"use strict";

const HOSTS = ["claude-code", "codex", "gemini", "cursor", "opencode", "windsurf", "command-code"];
const VIEWS = ["feed", "search", "sessions", "knowledge", "facts", "jobs", "note", "rules", "settings", "data", "stats"];
const state = {
  view: "feed", project: "", projects: [], detail: null, selected: new Set(), hits: [],
  sessionsCursor: null, factsCursor: null, jobsCursor: null, feed: null, searchTimer: null,
  seq: 0, focus: -1, facts: new Map(),
};

// -- helpers ----------------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const svg = ["svg", "rect", "g", "text", "line", "title", "circle"].includes(tag);
  const node = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.setAttribute("class", value);
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
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

async function api(method, path, body, raw) {
  const init = { method, credentials: "same-origin", headers: {} };
  if (raw !== undefined) {
    init.headers["content-type"] = "application/x-ndjson";
    init.body = raw;
  } else if (body !== undefined) {
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
    if (event && event.preventDefault && event.type === "submit") event.preventDefault();
    try { return await fn(event); } catch (error) { toast(error.message, "error"); return undefined; }
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

// -- times: local, relative, the exact instant on hover -----------------------------------------

const RTF = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const FULL = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const SHORT = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });

function relative(ms, now) {
  const diff = (ms - (now || Date.now())) / 1000;
  const abs = Math.abs(diff);
  for (const [unit, size] of [["second", 1], ["minute", 60], ["hour", 3600], ["day", 86400], ["month", 2592000], ["year", 31536000]].reverse()) {
    if (abs >= size || unit === "second") return RTF.format(Math.round(diff / size), unit);
  }
  return "";
}

function timeEl(ms, style) {
  if (!ms) return el("span", { class: "muted" }, "—");
  const date = new Date(ms);
  const text = style === "clock" ? CLOCK.format(date) : style === "short" ? SHORT.format(date) : relative(ms);
  return el("time", { datetime: date.toISOString(), title: FULL.format(date), "data-ms": ms, "data-style": style || "relative" }, text);
}

function duration(ms) {
  if (ms === null || ms === undefined || ms < 0) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}

setInterval(() => {
  for (const t of document.querySelectorAll("time[data-style=relative]")) t.textContent = relative(Number(t.dataset.ms));
}, 30000);

// -- highlights: the search service gives the snippet as plain text and where it holds a query
// word ([start, end) in code points), so brackets in stored text ([tool.ruff]) stay text.

function highlighted(text, marks) {
  const chars = Array.from(text || ""); // code points, as the server counts them
  const out = [];
  let last = 0;
  for (const [start, end] of (marks || []).slice().sort((x, y) => x[0] - y[0])) {
    if (start < last || end <= start || end > chars.length) continue;
    if (start > last) out.push(chars.slice(last, start).join(""));
    out.push(el("mark", {}, chars.slice(start, end).join("")));
    last = end;
  }
  if (last < chars.length) out.push(chars.slice(last).join(""));
  return out;
}

// -- projects: readable names, the path on hover ------------------------------------------------

function projectName(key) {
  const p = state.projects.find((x) => x.key === key);
  if (p) return p.name;
  const parts = String(key || "").split("/").filter(Boolean);
  return parts.length ? parts[parts.length - 1] : key;
}

function projectTag(key) {
  return el("span", { class: "project", title: key }, projectName(key));
}

async function loadProjects() {
  const data = await api("GET", "/v1/projects");
  state.projects = data.items;
  const select = $("project-switch");
  select.replaceChildren(el("option", { value: "" }, "All projects"),
    ...data.items.map((p) => el("option", { value: p.key, title: p.key }, `${p.name} · ${p.memories}`)));
  select.value = state.project;
  $("projects").replaceChildren(...data.items.map((p) => el("option", { value: p.key }, p.name)));
  $("note-project-pick").replaceChildren(el("option", { value: "" }, "choose…"),
    ...data.items.map((p) => el("option", { value: p.key, title: p.key }, p.name)));
  showProjectPath();
}

function showProjectPath() {
  const path = $("project-path");
  path.textContent = state.project || "";
  path.title = state.project || "";
}

// -- the URL holds the view: #/view?key=value&open=ID --------------------------------------------

function readHash() {
  const raw = window.location.hash.replace(/^#\/?/, "");
  const [view, qs] = raw.split("?");
  return { view: VIEWS.includes(view) ? view : "feed", params: new URLSearchParams(qs || "") };
}

function writeHash(view, params, replace) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== "" && v !== null && v !== undefined) qs.set(k, v);
  if (state.project && !qs.has("p")) qs.set("p", state.project);
  const text = qs.toString();
  const hash = `#/${view}${text ? `?${text}` : ""}`;
  if (hash === window.location.hash) return;
  if (replace) history.replaceState(null, "", hash);
  else history.pushState(null, "", hash);
}

function currentParams() { return Object.fromEntries(readHash().params.entries()); }

function setParam(key, value) {
  const { view } = readHash();
  const params = currentParams();
  if (value) params[key] = value; else delete params[key];
  writeHash(view, params, true);
}

const loaders = {};

function showTab(name, params) {
  writeHash(name, params || {});
  route();
}

async function route() {
  const { view, params } = readHash();
  const p = params.get("p") || "";
  if (p !== state.project) { state.project = p; $("project-switch").value = p; showProjectPath(); }
  state.view = view;
  for (const button of document.querySelectorAll("#tabs button")) {
    const on = button.dataset.tab === view;
    button.classList.toggle("active", on);
    if (on) {
      button.setAttribute("aria-current", "page");
      button.scrollIntoView({ block: "nearest", inline: "nearest" }); // the narrow nav scrolls
    } else button.removeAttribute("aria-current");
  }
  for (const section of document.querySelectorAll("main > section")) section.hidden = section.id !== `tab-${view}`;
  if (loaders[view]) await guarded(() => loaders[view](params))();
  const open = params.get("open");
  if (open && (!state.detail || state.detail.id !== open)) await guarded(() => openById(open))();
  if (!open && !$("detail").hidden) hideDetail(false);
}

// -- the live feed (server-sent events) ----------------------------------------------------------

function memoryLine(m, opts) {
  const id = m.id;
  return el("li", { class: `line kind-${m.kind}`, "data-id": id },
    el("button", { class: "link", onclick: guarded(() => openById(id)) },
      el("span", { class: `kind k-${m.kind}` }, m.kind.replace("_", " ")), " ",
      el("span", { class: "title" }, m.title || "(untitled)")),
    el("span", { class: "meta" }, timeEl(m.created_at), opts && opts.project === false ? null : [" · ", projectTag(m.project)],
      m.tool ? ` · ${m.tool}` : ""));
}

function sessionLine(s) {
  return el("li", { class: "line", "data-session": s.id },
    el("button", { class: "link", onclick: () => showTab("sessions", { session: s.id }) },
      el("span", { class: "title" }, s.first_request || "(no prompt)")),
    el("span", { class: "meta" }, timeEl(s.last_event_at), " · ", projectTag(s.project),
      ` · ${s.tool || "?"} · ${s.event_count} events · `, jobBadge(s.job_state)));
}

function jobBadge(stateName) {
  const label = { done: "compressed", dead: "failed", pending: "queued", running: "compressing", retry_wait: "retrying" }[stateName] || "open";
  return el("span", { class: `badge s-${stateName || "open"}` }, label);
}

async function loadFeed() {
  const [mems, sessions] = await Promise.all([
    api("GET", `/v1/memories${query({ project: state.project, limit: 30 })}`),
    api("GET", `/v1/sessions${query({ project: state.project, limit: 12 })}`),
  ]);
  const list = $("feed-memories");
  list.replaceChildren(...mems.items.map((m) => memoryLine(m)));
  if (!mems.items.length) list.append(el("li", { class: "empty" }, "Nothing captured yet. Run `aletheia install claude-code`, then use your agent: its prompts and tool events show up here as they happen."));
  $("feed-sessions").replaceChildren(...sessions.items.map(sessionLine));
  if (!sessions.items.length) $("feed-sessions").append(el("li", { class: "empty" }, "no sessions yet"));
  connectFeed();
}

function connectFeed() {
  const want = state.project;
  if (state.feed && state.feed.project === want) return;
  if (state.feed) state.feed.source.close();
  const source = new EventSource(`/v1/feed${query({ project: want })}`);
  state.feed = { source, project: want };
  const status = $("feed-status");
  source.addEventListener("ready", () => { status.textContent = "live"; status.className = "badge live"; });
  source.addEventListener("error", () => { status.textContent = "reconnecting…"; status.className = "badge"; });
  source.addEventListener("memory", (event) => {
    const m = JSON.parse(event.data);
    const list = $("feed-memories");
    const empty = list.querySelector(".empty");
    if (empty) empty.remove();
    if (list.querySelector(`[data-id="${CSS.escape(m.id)}"]`)) return;
    const line = memoryLine(m);
    line.classList.add("fresh");
    list.prepend(line);
    while (list.children.length > 60) list.lastChild.remove();
  });
  source.addEventListener("session", (event) => {
    const s = JSON.parse(event.data);
    const list = $("feed-sessions");
    const empty = list.querySelector(".empty");
    if (empty) empty.remove();
    const old = list.querySelector(`[data-session="${CSS.escape(s.id)}"]`);
    if (old) old.remove();
    list.prepend(sessionLine(s));
  });
}

// -- search: as you type, bulk select, keyboard --------------------------------------------------

function searchParams() {
  const f = formValues($("search-form"));
  return { q: f.q, project: f.project, kind: f.kind, tool: f.tool, session_id: f.session_id,
           include_dismissed: $("f-dismissed").checked ? "true" : "", limit: f.limit };
}

function scheduleSearch() {
  clearTimeout(state.searchTimer);
  state.searchTimer = setTimeout(guarded(runSearch), 180);
}

async function runSearch() {
  const params = searchParams();
  const seq = ++state.seq;
  setParam("q", params.q);
  const list = $("results");
  if (!params.q) {
    list.replaceChildren();
    state.hits = [];
    updateBulk();
    return;
  }
  const data = await api("GET", `/v1/search${query(params)}`);
  if (seq !== state.seq) return; // a newer keystroke's answer wins
  state.hits = data.items;
  state.focus = -1;
  list.replaceChildren();
  if (!data.items.length) {
    list.append(el("li", { class: "empty" }, params.project ? `No matches in ${projectName(params.project)}. ` : "No matches. ",
      params.project ? el("button", { class: "link", onclick: () => { $("f-project").value = ""; scheduleSearch(); } }, "Search every project") : null));
  }
  for (const hit of data.items) list.append(hitLine(hit));
  updateBulk();
}

function hitLine(hit) {
  const via = (hit.via || []).filter((v) => v !== "keyword" && v !== "fact");
  const box = el("input", { type: "checkbox", class: "pick", "aria-label": `select ${hit.title}`, checked: state.selected.has(hit.id),
    onchange: (event) => { if (event.target.checked) state.selected.add(hit.id); else state.selected.delete(hit.id); updateBulk(); } });
  return el("li", { class: `hit ${hit.type}${via.includes("neighbour") ? " neighbour" : ""}`, "data-id": hit.id },
    box,
    el("div", { class: "body" },
      el("button", { class: "link", onclick: guarded(() => openItem(hit)) },
        el("span", { class: `kind k-${hit.kind}` }, hit.type === "fact" ? `fact · ${hit.kind}` : hit.kind.replace("_", " ")), " ",
        el("span", { class: "title" }, hit.title || "(untitled)")),
      el("span", { class: "meta" }, timeEl(hit.created_at), " · ", projectTag(hit.project),
        via.map((v) => el("span", { class: `badge via-${v}`, title: v === "neighbour" ? "session neighbour of a match; holds no query word" : `found by ${v} search` }, v === "neighbour" ? "session neighbour" : v))),
      el("p", { class: "snippet" }, highlighted(hit.snippet, hit.marks))));
}

function updateBulk() {
  const n = state.selected.size;
  $("bulk").hidden = n === 0;
  $("bulk-count").textContent = `${n} selected`;
}

async function bulk(action) {
  const chosen = [...state.selected];
  if (!chosen.length) return;
  if (action === "erase") {
    if (!(await confirmDialog(`Erase ${chosen.length} item(s) for good? This cannot be undone; you get a signed receipt.`))) return;
    const receipt = await api("POST", "/v1/erase", { ids: chosen });
    toast(`erased ${receipt.body.counts.memories} memories, ${receipt.body.counts.facts} facts; receipt ${receipt.id}`);
  } else {
    let done = 0;
    for (const id of chosen) {
      const hit = state.hits.find((h) => h.id === id);
      if (action === "pin" && hit && hit.type === "fact") continue;
      if (action === "pin") await api("POST", "/v1/pins", { id });
      else await api("POST", "/v1/dismiss", { id });
      done += 1;
    }
    toast(`${action === "pin" ? "pinned" : "dismissed"} ${done} item(s)`);
  }
  state.selected.clear();
  await runSearch();
}

function confirmDialog(text) {
  const dialog = $("confirm");
  $("confirm-text").textContent = text;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.showModal();
  });
}

function moveFocus(step) {
  const items = [...document.querySelectorAll("#results li.hit")];
  if (!items.length) return;
  state.focus = Math.max(0, Math.min(items.length - 1, state.focus + step));
  items[state.focus].querySelector("button.link").focus();
}

// -- detail: a memory, a fact; close button and Escape --------------------------------------------

async function openById(id) {
  try {
    const memory = await api("GET", `/v1/memories/${encodeURIComponent(id)}`);
    showMemory(memory);
  } catch (error) {
    if (error.status !== 404) throw error;
    const facts = await api("GET", `/v1/facts${query({ status: "any", limit: 500 })}`);
    for (const f of facts.items) state.facts.set(f.id, f);
    const fact = facts.items.find((f) => f.id === id);
    if (!fact) throw error;
    showFact(fact);
  }
}

async function openItem(hit) {
  if (hit.type === "fact") {
    const facts = await api("GET", `/v1/facts${query({ project: hit.project, status: "any", limit: 500 })}`);
    return showFact(facts.items.find((f) => f.id === hit.id) || { id: hit.id, text: hit.title, project: hit.project, kind: hit.kind, source_ids: hit.source_ids || [], status: "active", created_at: hit.created_at });
  }
  return openById(hit.id);
}

function openDetail(children, id) {
  const box = $("detail");
  // Redrawn after an action inside it: focus goes back to what opened it, not to a removed button.
  if (!box.contains(document.activeElement)) state.returnFocus = document.activeElement;
  box.hidden = false;
  document.body.classList.add("detail-open");
  box.replaceChildren(el("div", { class: "detail-head" },
    el("button", { id: "detail-close", class: "close", "aria-label": "Close detail (Escape)", title: "Close (Esc)", onclick: () => hideDetail(true) }, "×")),
    ...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  if (id) setParam("open", id);
  box.focus();
}

function hideDetail(updateUrl) {
  const box = $("detail");
  box.hidden = true;
  document.body.classList.remove("detail-open");
  state.detail = null;
  if (updateUrl) setParam("open", "");
  if (state.returnFocus && state.returnFocus.focus) state.returnFocus.focus();
}

function showFact(f) {
  state.detail = f;
  state.facts.set(f.id, f);
  const sources = (f.source_ids || []).map((id) => el("li", {}, el("button", { class: "link", onclick: guarded(() => openById(id)) }, id)));
  const dismissed = f.status === "dismissed";
  const global = f.scope === "global";
  // After a change: the detail shows the fact as the server now has it, and the list behind it
  // is read again (a dismissed fact leaves the active list and the search results).
  const changed = async (next, message) => {
    toast(message);
    showFact(next);
    if (state.view === "facts") await loadFacts(null, false);
    else if (state.view === "search") await runSearch();
    else if (state.view === "knowledge") await loadKnowledge();
  };
  openDetail([
    el("h2", { id: "detail-title" }, f.text),
    el("p", { class: "meta" }, `fact · ${f.kind} · `, projectTag(f.project), " · ", timeEl(f.created_at),
      el("span", { class: "fact-status" }, ` · ${f.status}`), global ? el("span", { class: "badge" }, "global") : null,
      f.confidence !== undefined ? ` · confidence ${Number(f.confidence).toFixed(2)}` : ""),
    evidenceLine(f),
    supersedeLinks(f),
    el("h3", {}, "Sources"), sources.length ? el("ol", { class: "timeline" }, sources) : el("p", { class: "muted" }, "no source memories recorded"),
    el("div", { class: "actions" },
      // A superseded fact is history: the server refuses to dismiss it, so no button offers to.
      f.status === "superseded" ? null : el("button", { id: "fact-dismiss", onclick: guarded(async () => {
        const next = await api("POST", "/v1/dismiss", { id: f.id, undo: dismissed });
        await changed(next, next.status === "dismissed" ? "fact dismissed (hidden from search and context)" : "fact restored");
      }) }, dismissed ? "Restore" : "Dismiss"),
      el("button", { id: "fact-promote", onclick: guarded(async () => {
        const next = await api("POST", "/v1/promote", { id: f.id, scope: global ? "project" : "global" });
        await changed(next, next.scope === "global" ? "fact promoted: every project's search and context sees it" : "fact back to its project");
      }) }, global ? "Back to project" : "Promote to global")),
  ], f.id);
}

// Evidence as project knowledge records it (sessions, a passing command, the user's words).
function evidenceParts(f) {
  const parts = [];
  if (f.subject) parts.push(f.value ? `${f.subject} = ${f.value}` : f.subject);
  if (Array.isArray(f.session_ids) && f.session_ids.length) parts.push(`${f.session_ids.length} session${f.session_ids.length === 1 ? "" : "s"}`);
  if (f.confirmed) parts.push("confirmed (a passing command, the project's files or an answer naming it)");
  if (f.stated) parts.push("stated by the user");
  if (f.evidence && typeof f.evidence === "object") {
    for (const [k, v] of Object.entries(f.evidence)) parts.push(`${k.replace(/_/g, " ")}: ${Array.isArray(v) ? v.length : v}`);
  }
  return parts;
}

function evidenceLine(f) {
  const parts = evidenceParts(f);
  return parts.length ? el("p", { class: "meta" }, `evidence — ${parts.join(" · ")}`) : null;
}

function supersedeLinks(f) {
  const out = [];
  if (f.superseded_by) out.push(el("p", { class: "meta" }, "superseded by ", el("button", { class: "link", onclick: guarded(() => openById(f.superseded_by)) }, factLabel(f.superseded_by))));
  const older = [].concat(f.supersedes || [], [...state.facts.values()].filter((x) => x.superseded_by === f.id).map((x) => x.id));
  if (older.length) {
    out.push(el("p", { class: "meta" }, "supersedes ", ...[...new Set(older)].map((id) => el("button", { class: "link", onclick: guarded(() => openById(id)) }, factLabel(id)))));
  }
  return out;
}

function factLabel(id) {
  const f = state.facts.get(id);
  return f ? `“${f.text.slice(0, 80)}”` : id;
}

// -- tool events: command, exit status, output, a diff for edits --------------------------------

function parseJSON(text) {
  if (typeof text !== "string") return text;
  const t = text.trim();
  if (!t || !"{[".includes(t[0])) return null;
  try { return JSON.parse(t); } catch (_) { return null; }
}

function splitToolNarrative(narrative) {
  const text = narrative || "";
  if (!text.startsWith("input: ")) return null;
  const cut = text.indexOf("\n\noutput:\n");
  const input = cut >= 0 ? text.slice(7, cut) : text.slice(7);
  const output = cut >= 0 ? text.slice(cut + 10) : "";
  return { inputText: input, input: parseJSON(input), outputText: output, output: parseJSON(output) };
}

function lineDiff(before, after) {
  const a = (before || "").split("\n");
  const b = (after || "").split("\n");
  if (a.length * b.length > 250000) return [...a.map((l) => ["-", l]), ...b.map((l) => ["+", l])];
  const n = a.length;
  const m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) for (let j = m - 1; j >= 0; j -= 1) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { out.push([" ", a[i]]); i += 1; j += 1; } else if (lcs[i + 1][j] >= lcs[i][j + 1]) { out.push(["-", a[i]]); i += 1; } else { out.push(["+", b[j]]); j += 1; }
  }
  while (i < n) { out.push(["-", a[i]]); i += 1; }
  while (j < m) { out.push(["+", b[j]]); j += 1; }
  return out;
}

function diffView(before, after, label) {
  const rows = lineDiff(before, after);
  return el("figure", { class: "diff" }, el("figcaption", {}, label || "change"),
    el("pre", {}, rows.map(([sign, text]) => el("span", { class: sign === "+" ? "add" : sign === "-" ? "del" : "ctx" }, `${sign} ${text}\n`))));
}

function exitStatus(out) {
  if (!out || typeof out !== "object") return null;
  for (const key of ["exit_code", "exitCode", "returncode", "return_code", "status"]) {
    if (typeof out[key] === "number") return out[key];
  }
  const said = /^Exit code (\d+)/.exec(typeof out.stdout === "string" ? out.stdout : "");
  return said ? Number(said[1]) : null;
}

// The hook keeps a tool's output as text: stdout, then "[stderr] …" / "[error] …" parts, then
// the result's other fields as one JSON line (exit code, interrupted …).
function textOutput(text) {
  const lines = text.split("\n");
  let meta = {};
  const last = parseJSON(lines[lines.length - 1]);
  if (lines.length > 1 && last && typeof last === "object" && !Array.isArray(last)) { meta = last; lines.pop(); }
  const body = lines.join("\n");
  const cut = body.search(/^\[(stderr|error)\] /m);
  const out = { ...meta };
  out.stdout = cut >= 0 ? body.slice(0, cut).replace(/\n$/, "") : body;
  if (cut >= 0) {
    const rest = body.slice(cut);
    const key = rest.startsWith("[error]") ? "error" : "stderr";
    out[key] = rest.replace(/^\[(stderr|error)\] /gm, "");
  }
  return out;
}

function toolView(m) {
  const parts = splitToolNarrative(m.narrative);
  if (!parts) return null;
  const input = parts.input && typeof parts.input === "object" ? parts.input : null;
  const out = [];
  const command = input && (input.command || input.cmd);
  if (command) out.push(el("pre", { class: "cmd" }, `$ ${Array.isArray(command) ? command.join(" ") : command}`));
  if (input && typeof input.old_string === "string" && typeof input.new_string === "string") {
    out.push(diffView(input.old_string, input.new_string, input.file_path || "edit"));
  } else if (input && Array.isArray(input.edits)) {
    for (const e of input.edits) if (e && typeof e.old_string === "string") out.push(diffView(e.old_string, e.new_string || "", input.file_path || "edit"));
  } else if (input && typeof input.content === "string" && (input.file_path || input.path)) {
    out.push(diffView("", input.content, `${input.file_path || input.path} (new content)`));
  } else if (input && !command) {
    out.push(el("dl", { class: "kv" }, Object.entries(input).map(([k, v]) => [el("dt", {}, k), el("dd", {}, typeof v === "string" ? v : JSON.stringify(v))])));
  } else if (!input) {
    out.push(el("pre", { class: "cmd" }, parts.inputText));
  }
  let o = parts.output;
  if (!o && parts.outputText) o = textOutput(parts.outputText);
  if (o && typeof o === "object" && !Array.isArray(o)) {
    const code = exitStatus(o);
    const failed = (code !== null && code !== 0) || o.interrupted === true || o.is_error === true || /\(failed\)$/.test(m.title || "");
    out.push(el("p", { class: `exit ${failed ? "bad" : "ok"}` }, code !== null ? `exit status ${code}` : failed ? "failed" : "completed",
      o.interrupted ? " · interrupted" : ""));
    const shown = new Set(["interrupted", "isImage", "is_error", "exit_code", "exitCode", "returncode", "return_code", "status", "noOutputExpected"]);
    for (const key of ["stdout", "output", "result", "content", "stderr", "error"]) {
      const v = o[key];
      shown.add(key);
      if (v === undefined || v === null || v === "") continue;
      out.push(el("figure", { class: `out ${key === "stderr" || key === "error" ? "err" : ""}` }, el("figcaption", {}, key),
        el("pre", {}, typeof v === "string" ? v : JSON.stringify(v, null, 2))));
    }
    const rest = Object.entries(o).filter(([k]) => !shown.has(k));
    if (rest.length) out.push(el("dl", { class: "kv" }, rest.map(([k, v]) => [el("dt", {}, k), el("dd", {}, typeof v === "string" ? v : JSON.stringify(v))])));
  } else if (parts.outputText) {
    out.push(el("figure", { class: "out" }, el("figcaption", {}, "output"), el("pre", {}, parts.outputText)));
  }
  return el("div", { class: "tool" }, out);
}

function showMemory(m) {
  state.detail = m;
  const flags = [m.scope === "global" ? "global" : null, m.pinned ? "pinned" : null, m.dismissed_at ? "dismissed" : null].filter(Boolean);
  const refresh = async (next) => { showMemory(next); };
  const actions = el("div", { class: "actions" },
    el("button", { id: "act-pin", onclick: guarded(async () => {
      const next = m.pinned ? await api("DELETE", `/v1/pins/${encodeURIComponent(m.id)}`) : await api("POST", "/v1/pins", { id: m.id });
      toast(next.pinned ? "pinned" : "unpinned"); await refresh(next);
    }) }, m.pinned ? "Unpin" : "Pin"),
    el("button", { id: "act-dismiss", onclick: guarded(async () => {
      const next = await api("POST", "/v1/dismiss", { id: m.id, undo: Boolean(m.dismissed_at) });
      toast(next.dismissed_at ? "dismissed (hidden from search and context)" : "restored");
      await refresh(next);
      if (state.view === "search") await runSearch().catch(() => {});
    }) }, m.dismissed_at ? "Undismiss" : "Dismiss"),
    el("button", { id: "act-promote", onclick: guarded(async () => {
      const next = await api("POST", "/v1/promote", { id: m.id, scope: m.scope === "global" ? "project" : "global" });
      toast(`scope: ${next.scope}`); await refresh(next);
    }) }, m.scope === "global" ? "Back to project" : "Promote to global"),
    el("button", { id: "act-edit", onclick: () => editMemory(m) }, "Edit"),
    el("button", { id: "act-timeline", onclick: guarded(() => showTimeline(m)) }, "Timeline"),
    m.session_id ? el("button", { id: "act-session", onclick: () => showTab("sessions", { session: m.session_id }) }, "Session") : null,
    el("button", { id: "act-erase", class: "danger", onclick: guarded(async () => {
      if (!(await confirmDialog("Erase this memory for good? This cannot be undone; you get a signed receipt."))) return;
      const receipt = await api("POST", "/v1/erase", { ids: [m.id] });
      toast(`erased; receipt ${receipt.id}`);
      openDetail([el("h2", {}, "Erased"), receiptView(receipt)]);
      if (state.view === "search") await runSearch().catch(() => {});
    }) }, "Erase…"));
  const tool = m.kind === "tool_event" ? toolView(m) : null;
  openDetail([
    el("h2", { id: "detail-title" }, m.title || "(untitled)"),
    el("p", { class: "meta" }, el("span", { class: `kind k-${m.kind}` }, m.kind.replace("_", " ")), " · ", projectTag(m.project), " · ",
      timeEl(m.created_at), " (", timeEl(m.created_at, "short"), ")", m.tool ? ` · ${m.tool}` : "", ` · from ${m.source}`,
      flags.map((f) => el("span", { class: "badge" }, f))),
    m.subtitle && !tool ? el("p", { class: "subtitle" }, m.subtitle) : null,
    tool || el("pre", { id: "detail-narrative", class: "narrative" }, m.narrative),
    m.files && m.files.length ? el("p", { class: "meta" }, `files: ${m.files.join(", ")}`) : null,
    m.concepts && m.concepts.length ? el("p", { class: "meta" }, `concepts: ${m.concepts.join(", ")}`) : null,
    el("p", { class: "meta id" }, m.id),
    actions, el("div", { id: "detail-extra" })], m.id);
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
      el("button", { class: "link", onclick: guarded(() => openById(r.id)) },
        timeEl(r.created_at, "clock"), " ", el("span", { class: `kind k-${r.kind}` }, r.kind.replace("_", " ")), " ", r.title)))));
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
    el("button", { class: "link", onclick: () => showMemory(stored) }, `open ${stored.id}`));
  $("note-text").value = "";
  $("note-title").value = "";
  toast("note saved");
}

// -- sessions as timelines ----------------------------------------------------------------------

async function loadSessions(params, more) {
  const form = $("sessions-form");
  const single = params && params.get && params.get("session");
  if (!more && !form.project.value && state.project) form.project.value = state.project;
  if (single) await showSession(single); else $("session-view").hidden = true;
  const f = formValues(form);
  const data = await api("GET", `/v1/sessions${query({ project: f.project, limit: 50, cursor: more ? state.sessionsCursor : "" })}`);
  const body = $("sessions-body");
  if (!more) body.replaceChildren();
  for (const s of data.items) {
    body.append(el("tr", {},
      el("td", {}, timeEl(s.started_at, "short")), el("td", {}, s.tool || ""), el("td", {}, projectTag(s.project)),
      el("td", { class: "num" }, `${s.event_count} · ${duration(s.last_event_at - s.started_at)}`), el("td", {}, jobBadge(s.job_state)),
      el("td", {}, el("button", { class: "link", onclick: () => showTab("sessions", { session: s.id }) }, s.first_request || "(no prompt)"))));
  }
  if (!body.children.length) body.append(el("tr", {}, el("td", { colspan: 6, class: "empty" }, "no sessions")));
  state.sessionsCursor = data.next_cursor;
  $("sessions-more").hidden = !data.next_cursor;
}

const PHASE = { prompt: "prompt", tool_event: "tool", response: "outcome", summary: "summary", project_summary: "summary" };

async function showSession(id) {
  const [s, data] = await Promise.all([
    api("GET", `/v1/sessions/${encodeURIComponent(id)}`),
    api("GET", `/v1/memories${query({ session_id: id, limit: 500 })}`),
  ]);
  const items = data.items.slice().reverse();
  const steps = [];
  let group = null;
  for (const m of items) {
    const phase = PHASE[m.kind] || "note";
    if (phase === "prompt" || !group) { group = { prompt: phase === "prompt" ? m : null, rest: [] }; steps.push(group); if (phase === "prompt") continue; }
    group.rest.push(m);
  }
  const view = $("session-view");
  view.hidden = false;
  const took = s.last_event_at - s.started_at;
  view.replaceChildren(
    el("div", { class: "section-head" }, el("h2", {}, s.first_request || `Session ${s.id}`),
      el("button", { class: "close", "aria-label": "Close session", onclick: () => showTab("sessions", {}) }, "×")),
    el("p", { class: "meta" }, projectTag(s.project), ` · ${s.tool || "?"} · started `, timeEl(s.started_at, "short"), ` · ${duration(took)} · ${s.event_count} events · `, jobBadge(s.job_state)),
    el("ol", { class: "session-timeline" }, steps.map((g) => el("li", { class: "step" },
      g.prompt ? el("button", { class: "link prompt", onclick: guarded(() => openById(g.prompt.id)) }, timeEl(g.prompt.created_at, "clock"), " ", el("span", { class: "kind k-prompt" }, "prompt"), " ", g.prompt.title) : null,
      el("ol", { class: "events" }, g.rest.map((m) => el("li", { class: `ev phase-${PHASE[m.kind] || "note"}${/\(failed\)$/.test(m.title) ? " failed" : ""}` },
        el("button", { class: "link", onclick: guarded(() => openById(m.id)) }, timeEl(m.created_at, "clock"), " ",
          el("span", { class: `kind k-${m.kind}` }, (PHASE[m.kind] || m.kind).replace("_", " ")), " ", m.title))))))),
    ...(items.length ? [] : [el("p", { class: "empty" }, "no memories in this session")]));
}

// -- facts, knowledge, jobs ----------------------------------------------------------------------

async function loadFacts(params, more) {
  const form = $("facts-form");
  if (!more && !form.project.value && state.project) form.project.value = state.project;
  const f = formValues(form);
  const data = await api("GET", `/v1/facts${query({ project: f.project, status: f.status, limit: 50, cursor: more ? state.factsCursor : "" })}`);
  const body = $("facts-body");
  if (!more) body.replaceChildren();
  for (const fact of data.items) state.facts.set(fact.id, fact);
  for (const fact of data.items) {
    const dismissed = fact.status === "dismissed";
    const sources = (fact.source_ids || []).slice(0, 3).map((id) => el("button", { class: "link small", title: `source memory ${id}`, onclick: guarded(() => openById(id)) }, `#${id.slice(-6)}`));
    body.append(el("tr", { "data-id": fact.id },
      el("td", {}, el("button", { class: "link", onclick: () => showFact(fact) }, fact.text), supersedeLinks(fact)),
      el("td", {}, fact.scope === "global" ? "global" : projectTag(fact.project)),
      el("td", {}, evidenceParts(fact).filter((p) => p !== fact.subject && !p.startsWith(`${fact.subject} =`)).join(" · ") || `${fact.extractor} ${Number(fact.confidence).toFixed(2)}`, " ", sources),
      el("td", {}, fact.status),
      el("td", {}, fact.status === "superseded" ? "" : el("button", { onclick: guarded(async () => {
        await api("POST", "/v1/dismiss", { id: fact.id, undo: dismissed }); await loadFacts(null, false);
      }) }, dismissed ? "Restore" : "Dismiss"))));
  }
  if (!body.children.length) body.append(el("tr", {}, el("td", { colspan: 5, class: "empty" }, "no facts")));
  state.factsCursor = data.next_cursor;
  $("facts-more").hidden = !data.next_cursor;
}

async function loadKnowledge() {
  const project = state.project || (state.projects[0] && state.projects[0].key) || "";
  $("knowledge-project").textContent = project ? projectName(project) : "a project";
  $("knowledge-project").title = project;
  if (!project) {
    $("knowledge-block").textContent = "Choose a project above: nothing is stored yet.";
    $("knowledge-facts").replaceChildren();
    return;
  }
  const [ctx, facts] = await Promise.all([
    api("GET", `/v1/context${query({ project })}`),
    api("GET", `/v1/facts${query({ project, limit: 200 })}`),
  ]);
  $("knowledge-block").textContent = ctx.block || "(nothing yet: this project has no memories)";
  $("knowledge-cost").textContent = `${ctx.chars} characters ≈ ${Math.ceil(ctx.chars / 4)} tokens`;
  const byKind = {};
  for (const f of facts.items) (byKind[f.kind] = byKind[f.kind] || []).push(f);
  const box = $("knowledge-facts");
  box.replaceChildren();
  for (const [kind, list] of Object.entries(byKind)) {
    box.append(el("h3", {}, kind.replace("_", " ")), el("ul", { class: "lines" }, list.map((f) =>
      el("li", { class: "line" }, el("button", { class: "link", onclick: () => showFact(f) }, f.text),
        el("span", { class: "meta" }, `${f.extractor} · ${(f.source_ids || []).length} source(s) · `, timeEl(f.created_at))))));
  }
  if (!facts.items.length) box.append(el("p", { class: "muted" }, "No facts yet: the worker extracts them when a session ends (aletheia up runs it)."));
}

function jobResult(job) {
  const r = job.result;
  if (job.state === "dead" || job.state === "retry_wait") return el("span", { class: "error-text" }, (job.last_error || "").split("\n").filter(Boolean).pop() || "");
  if (!r) return job.state === "done" ? "done" : "";
  const facts = r.facts && typeof r.facts === "object" ? r.facts.added : r.facts;
  return [r.memories !== undefined ? `${r.memories} memories` : null, facts !== undefined ? `${facts} facts` : null].filter(Boolean).join(" → ") || JSON.stringify(r);
}

async function loadJobs(params, more) {
  const f = formValues($("jobs-form"));
  const data = await api("GET", `/v1/jobs${query({ state: f.state, limit: 50, cursor: more ? state.jobsCursor : "" })}`);
  const body = $("jobs-body");
  if (!more) body.replaceChildren();
  for (const job of data.items) {
    const retryable = job.state === "dead";
    const took = job.finished_at && (job.started_at || job.created_at) ? job.finished_at - (job.started_at || job.created_at) : null;
    body.append(el("tr", { class: `job ${job.state}` },
      el("td", { class: "num" }, `#${job.id}`), el("td", {}, el("span", { class: `badge s-${job.state}` }, job.state), ` ${job.attempts}/${job.max_attempts}`),
      el("td", {}, el("button", { class: "link", onclick: () => showTab("sessions", { session: job.session_id }) }, job.session_id.slice(0, 18))),
      el("td", {}, timeEl(job.created_at)), el("td", {}, duration(took)), el("td", {}, jobResult(job)),
      el("td", {}, retryable ? el("button", { onclick: guarded(async () => {
        await api("POST", `/v1/jobs/${job.id}/retry`); toast(`job ${job.id} queued again`); await loadJobs(null, false);
      }) }, "Retry") : "")));
  }
  if (!body.children.length) body.append(el("tr", {}, el("td", { colspan: 7, class: "empty" }, "no jobs")));
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
      el("td", {}, rule.text), el("td", {}, rule.project ? projectTag(rule.project) : "every project"), el("td", {}, hosts),
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

// -- settings and the context preview -----------------------------------------------------------

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
  const project = $("context-project");
  if (!project.value) project.value = state.project || (state.projects[0] && state.projects[0].key) || "";
  if (project.value) await previewContext();
}

// Previews can overlap (the settings tab loads one while the user submits another); only the
// newest request may write the block, or a slower older answer would show another project's block.
let previewSeq = 0;

async function previewContext() {
  const project = $("context-project").value.trim();
  const seq = ++previewSeq;
  if (!project) { $("context-block").textContent = "Name a project to preview its block."; return; }
  $("context-block").textContent = `Building the block for ${project}…`;
  const data = await api("GET", `/v1/context${query({ project, host: $("context-host").value })}`);
  if (seq !== previewSeq) return;
  $("context-block").textContent = data.block || `(no memories for ${project} yet: the block is empty)`;
}

// -- export, import, receipts ---------------------------------------------------------------------

function receiptView(r) {
  const body = r.body || {};
  const counts = body.counts || r.counts || {};
  const selector = body.selector || r.selector || {};
  const out = el("div", { class: "receipt", "data-id": r.id },
    el("dl", { class: "kv" },
      el("dt", {}, "receipt"), el("dd", { class: "id" }, r.id),
      el("dt", {}, "when"), el("dd", {}, timeEl(body.erased_at || r.created_at, "short")),
      el("dt", {}, "what"), el("dd", {}, Object.entries(selector).map(([k, v]) => `${k}: ${Array.isArray(v) ? `${v.length} id(s)` : v}`).join(", ")),
      el("dt", {}, "erased"), el("dd", {}, Object.entries(counts).filter(([, n]) => n).map(([k, n]) => `${n} ${k}`).join(", ") || "nothing"),
      r.signature ? [el("dt", {}, "signature"), el("dd", { class: "id" }, `${r.alg || ""} ${String(r.signature).slice(0, 24)}…`)] : null),
    el("button", { class: "verify", onclick: guarded(async () => {
      const full = r.signature ? r : await api("GET", `/v1/receipts/${encodeURIComponent(r.id)}`);
      const v = await api("POST", "/v1/receipts/verify", { id: full.id, alg: full.alg, body: full.body, signature: full.signature });
      out.querySelector(".verdict").replaceChildren(el("span", { class: `badge ${v.valid ? "live" : "s-dead"}` }, v.valid ? "valid" : "NOT valid"),
        ` signature ${v.signature ? "ok" : "wrong"}; ${v.still_erased === false ? "something came back" : "erased items still gone"}`, v.problems.length ? ` — ${v.problems.join("; ")}` : "");
    }) }, "Verify"),
    el("p", { class: "verdict", role: "status" }));
  return out;
}

async function loadData() {
  $("export-link").href = `/v1/bundles/export${query({ project: state.project })}`;
  $("export-link").textContent = state.project ? `Download ${projectName(state.project)} bundle` : "Download bundle (every project)";
  const data = await api("GET", "/v1/receipts?limit=50");
  $("receipts").replaceChildren(...data.items.map((r) => el("li", { class: "line" },
    el("button", { class: "link", onclick: () => $("receipt-view").replaceChildren(receiptView(r)) }, `${Object.entries(r.counts).filter(([, n]) => n).map(([k, n]) => `${n} ${k}`).join(", ") || "nothing"} erased`),
    el("span", { class: "meta" }, timeEl(r.created_at), ` · ${r.id}`))));
  if (!data.items.length) $("receipts").append(el("li", { class: "empty" }, "no erasures yet"));
}

async function importBundle() {
  const file = $("import-file").files[0];
  if (!file) return;
  const report = await api("POST", "/v1/bundles/import", undefined, await file.text());
  const added = Object.entries(report.added).map(([k, n]) => `${n} ${k}`).join(", ");
  $("import-result").textContent = `Imported: ${added || "nothing new"}; ${Object.values(report.skipped).reduce((a, b) => a + b, 0)} already present.`;
  await loadProjects();
}

// -- stats and charts (inline SVG) -----------------------------------------------------------------

function barChart(items, valueKey, labelKey, title, w) {
  const h = 180;
  const pad = 28;
  const max = Math.max(1, ...items.map((i) => i[valueKey] || 0));
  const bw = items.length ? Math.min(40, (w - pad * 2) / items.length) : 0;
  const svg = el("svg", { viewBox: `0 0 ${w} ${h + 30}`, role: "img", "aria-label": title, class: "bars" },
    el("title", {}, title),
    el("line", { x1: pad, y1: h, x2: w - pad, y2: h, class: "axis" }),
    el("text", { x: 2, y: 12, class: "tick" }, String(max)),
    items.map((item, i) => {
      const v = item[valueKey] || 0;
      const bh = Math.round((v / max) * (h - 20));
      return el("g", {},
        el("rect", { x: pad + i * bw + 1, y: h - bh, width: Math.max(1, bw - 2), height: bh, class: "bar" },
          el("title", {}, `${item[labelKey]}: ${v}`)),
        i % Math.ceil(items.length / Math.max(2, Math.floor(w / 70))) === 0 ? el("text", { x: pad + i * bw, y: h + 16, class: "tick" }, String(item[labelKey]).slice(5)) : null);
    }));
  return svg;
}

// Context economics: tokens injected per session (block, per-prompt, per-file) and the detail
// fetches that followed, from /v1/stats/context (blocks.economics in the core).
const SEGMENTS = [["block", "block"], ["prompt", "per-prompt"], ["file", "per-file"]];
const NUM = new Intl.NumberFormat();
const MINUTE = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });

function legend(fetches) {
  return el("ul", { class: "legend" },
    SEGMENTS.map(([key, label]) => el("li", {}, el("span", { class: `swatch seg-${key}`, "aria-hidden": "true" }), label)),
    fetches ? el("li", {}, el("span", { class: "swatch fetch", "aria-hidden": "true" }), "detail fetches after") : null);
}

// Charts are drawn at the width they are shown at (320–640 units), so their text stays legible
// on a phone.
function chartWidth(id) {
  return Math.round(Math.max(320, Math.min(640, $(id).clientWidth || 640)));
}

function projectsChart(rows, w) {
  const rowH = 64;
  const h = rows.length * rowH + 4;
  const max = Math.max(1, ...rows.map(([, r]) => r.tokens_per_session.total));
  const title = "Tokens injected per session, by project";
  return el("svg", { viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": title, class: "bars economics-projects" },
    el("title", {}, title),
    rows.map(([key, r], i) => {
      const y = 2 + i * rowH;
      let x = 0;
      const segs = SEGMENTS.map(([kind, label]) => {
        const v = r.tokens_per_session[kind] || 0;
        const bw = (v / max) * w;
        const rect = el("rect", { x, y: y + 20, width: Math.max(0, bw), height: 18, class: `seg-${kind}`, "data-kind": kind, "data-value": v },
          el("title", {}, `${projectName(key)}: ${label} ${NUM.format(v)} tokens per session`));
        x += bw;
        return rect;
      });
      const rate = `followed by a detail fetch: ${r.followed_by_fetch} of ${r.sessions} session${r.sessions === 1 ? "" : "s"} (${Math.round(r.fetch_rate * 100)} %), ${r.fetches} fetch${r.fetches === 1 ? "" : "es"}`;
      return el("g", { class: "project-row", "data-project": key, "data-total": r.tokens_per_session.total, "data-fetches": r.fetches },
        el("text", { x: 0, y: y + 13, class: "label" }, `${projectName(key).slice(0, 28)} · ${NUM.format(r.tokens_per_session.total)} tokens per session`),
        segs,
        el("text", { x: 0, y: y + 52, class: "tick" }, rate));
    }));
}

function sessionsChart(items, w) {
  const h = 190;
  const pad = 34;
  const top = 42; // room for a fetch dot and its count above the tallest bar
  const max = Math.max(1, ...items.map((x) => x.tokens.total));
  const bw = items.length ? Math.min(40, (w - pad * 2) / items.length) : 0;
  const every = Math.ceil(items.length / Math.max(1, Math.floor((w - pad) / 110)));
  const title = "Tokens injected per session and detail fetches after, oldest to newest";
  return el("svg", { viewBox: `0 0 ${w} ${h + 30}`, role: "img", "aria-label": title, class: "bars economics-sessions" },
    el("title", {}, title),
    el("line", { x1: pad, y1: h, x2: w - pad, y2: h, class: "axis" }),
    el("text", { x: 2, y: top, class: "tick" }, NUM.format(max)),
    items.map((x, i) => {
      let y = h;
      const segs = SEGMENTS.map(([kind, label]) => {
        const v = x.tokens[kind] || 0;
        const bh = (v / max) * (h - top);
        y -= bh;
        return el("rect", { x: pad + i * bw + 1, y, width: Math.max(1, bw - 2), height: bh, class: `seg-${kind}`, "data-kind": kind, "data-value": v },
          el("title", {}, `${x.session}: ${label} ${NUM.format(v)} tokens (${x.injections[kind]} injection${x.injections[kind] === 1 ? "" : "s"})`));
      });
      const cx = pad + i * bw + bw / 2;
      return el("g", { class: "session-bar", "data-session": x.session, "data-total": x.tokens.total, "data-fetches": x.fetches },
        segs,
        x.fetches ? el("g", { class: "fetch-mark" },
          el("circle", { cx, cy: y - 9, r: 7, class: "fetch" }, el("title", {}, `${x.session}: ${x.fetches} detail fetch${x.fetches === 1 ? "" : "es"} after`)),
          el("text", { x: cx, y: y - 20, class: "tick", "text-anchor": "middle" }, String(x.fetches))) : null,
        i % every === 0 ? el("text", { x: pad + i * bw, y: h + 16, class: "tick" }, MINUTE.format(new Date(x.first_at))) : null);
    }));
}

async function loadEconomics() {
  const data = await api("GET", `/v1/stats/context${query({ project: state.project, days: 30, recent: 30 })}`);
  $("economics-days").textContent = String(data.days);
  const rows = Object.entries(data.projects).sort((a, b) => b[1].sessions - a[1].sessions);
  const where = state.project ? ` in ${projectName(state.project)}` : "";
  const status = $("stats-economics");
  if (!rows.length) {
    status.textContent = `No context injected${where} in the last ${data.days} days. Sessions record it when a host's SessionStart, UserPromptSubmit or PreToolUse hook runs aletheia.`;
    for (const id of ["chart-economics-projects", "chart-economics-sessions", "economics-projects-body", "economics-sessions-body"]) $(id).replaceChildren();
    return data;
  }
  const sessions = rows.reduce((a, [, r]) => a + r.sessions, 0);
  const followed = rows.reduce((a, [, r]) => a + r.followed_by_fetch, 0);
  const tokens = rows.reduce((a, [, r]) => a + r.tokens.block + r.tokens.prompt + r.tokens.file, 0);
  status.textContent = `${sessions} session${sessions === 1 ? "" : "s"}${where}: ${NUM.format(tokens)} tokens injected, ${followed} followed by a detail fetch.`;
  $("chart-economics-projects").replaceChildren(legend(false), projectsChart(rows, chartWidth("chart-economics-projects")),
    el("figcaption", {}, "average tokens injected per session (block, per-prompt, per-file); sessions followed by a detail fetch"));
  const per = [["block", "block"], ["prompt", "per-prompt"], ["file", "per-file"], ["total", "total"]];
  $("economics-projects-body").replaceChildren(...rows.map(([key, r]) => el("tr", { "data-project": key },
    el("td", {}, projectTag(key)), el("td", { class: "num", "data-label": "sessions" }, r.sessions),
    ...per.map(([k, label]) => el("td", { class: "num", "data-label": `${label} tokens per session` }, NUM.format(r.tokens_per_session[k]))),
    el("td", { class: "num", "data-label": "followed by a fetch" }, `${r.followed_by_fetch}/${r.sessions} (${Math.round(r.fetch_rate * 100)} %)`),
    el("td", { class: "num", "data-label": "fetches" }, r.fetches))));
  const recent = data.sessions.slice().reverse();
  $("chart-economics-sessions").replaceChildren(legend(true), sessionsChart(recent, chartWidth("chart-economics-sessions")),
    el("figcaption", {}, `tokens injected into each of the last ${recent.length} sessions; a dot counts the detail fetches after it`));
  $("economics-sessions-body").replaceChildren(...data.sessions.map((x) => el("tr", { "data-session": x.session },
    el("td", { class: "id" }, x.session), el("td", {}, projectTag(x.project)), el("td", { "data-label": "started" }, timeEl(x.first_at, "short")),
    ...per.map(([k, label]) => el("td", { class: "num", "data-label": `${label} tokens` }, NUM.format(x.tokens[k]))),
    el("td", { class: "num", "data-label": "fetches" }, x.fetches))));
  return data;
}

// -- health: what `aletheia doctor` says, so a problem is seen here too --------------------------

const HEALTH_ORDER = { problem: 0, warn: 1, ok: 2 };

function healthStatus(check) {
  const s = String(check.status || "").toLowerCase();
  return s === "ok" ? "ok" : s.startsWith("warn") ? "warn" : "problem";
}

async function loadHealth() {
  const report = await api("GET", "/v1/doctor?integrity=false");
  const checks = [...report.checks].sort((a, b) => HEALTH_ORDER[healthStatus(a)] - HEALTH_ORDER[healthStatus(b)]);
  $("health").replaceChildren(...checks.map((c) => {
    const status = healthStatus(c);
    return el("li", { class: `health-${status}`, "data-check": c.name },
      el("span", { class: `badge h-${status}` }, status), " ", el("strong", {}, c.name), " ", c.summary,
      c.hint ? el("p", { class: "hint" }, c.hint) : null);
  }));
  showHealthBanner(report);
  return report;
}

function showHealthBanner(report) {
  const problems = report.checks.filter((c) => healthStatus(c) === "problem");
  $("health-banner").hidden = problems.length === 0;
  $("health-banner-text").textContent = problems.length === 0 ? "" :
    `${problems.length} problem${problems.length === 1 ? "" : "s"} need${problems.length === 1 ? "s" : ""} you: ${problems.map((c) => c.name).join(", ")}.`;
}

async function loadStats() {
  const tz = -new Date().getTimezoneOffset();
  await loadHealth();
  const [s, days] = await Promise.all([
    api("GET", "/v1/stats"),
    api("GET", `/v1/stats/daily${query({ project: state.project, days: 30, tz_offset_min: tz })}`),
    loadEconomics(),
  ]);
  const figures = $("stats-figures");
  figures.replaceChildren();
  for (const [label, value] of [["memories", s.memories], ["projects", s.projects], ["sessions", s.sessions],
    ["active facts", s.facts], ["pinned", s.pinned], ["dismissed", s.dismissed], ["stop queue", s.stop_queue],
    ["jobs", Object.entries(s.jobs).map(([k, v]) => `${v} ${k}`).join(", ") || "none"]]) {
    figures.append(el("div", {}, el("dt", {}, label), el("dd", {}, value)));
  }
  $("chart-days").replaceChildren(barChart(days.items, "memories", "day", "Memories captured per day, last 30 days", chartWidth("chart-days")),
    el("figcaption", {}, `${days.items.reduce((a, d) => a + d.memories, 0)} memories in 30 days${state.project ? ` in ${projectName(state.project)}` : ""}`));
  $("stats-kinds").replaceChildren(...Object.entries(s.by_kind).map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", { class: "num", "data-label": "memories" }, v))));
  $("stats-projects").replaceChildren(...Object.entries(s.by_project).map(([k, v]) => el("tr", {}, el("td", {}, projectTag(k)), el("td", { class: "num", "data-label": "memories" }, v))));
  return s;
}

async function fillChoices() {
  await loadProjects();
  const s = await api("GET", "/v1/stats");
  const kind = $("f-kind");
  for (const k of Object.keys(s.by_kind)) kind.append(el("option", { value: k }, k));
  for (const select of [$("f-tool"), $("context-host")]) {
    for (const h of HOSTS) select.append(el("option", { value: h }, h));
  }
  const remembered = state.project || localStorage.getItem("aletheia.project") || (state.projects[0] && state.projects[0].key) || "";
  $("note-project").value = remembered;
}

// -- wiring -----------------------------------------------------------------------------------

Object.assign(loaders, {
  feed: loadFeed,
  search: (params) => {
    const q = params.get("q") || "";
    if (q && $("q").value !== q) { $("q").value = q; return runSearch(); }
    if (!$("f-project").value && state.project && !$("q").value) $("f-project").value = state.project;
    return undefined;
  },
  sessions: (params) => loadSessions(params, false), facts: (params) => loadFacts(params, false),
  jobs: (params) => loadJobs(params, false), knowledge: loadKnowledge,
  rules: loadRules, settings: loadSettings, stats: loadStats, data: loadData,
});

function onKey(event) {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(event.target.tagName) || event.target.isContentEditable;
  if (event.key === "Escape" && !$("detail").hidden && !$("confirm").open) { hideDetail(true); event.preventDefault(); return; }
  if (typing || event.metaKey || event.ctrlKey || event.altKey) return;
  if (event.key === "/") { event.preventDefault(); if (state.view !== "search") showTab("search"); $("q").focus(); }
  else if (state.view === "search" && (event.key === "j" || event.key === "ArrowDown")) { event.preventDefault(); moveFocus(1); }
  else if (state.view === "search" && (event.key === "k" || event.key === "ArrowUp")) { event.preventDefault(); moveFocus(-1); }
  else if (state.view === "search" && event.key === "x" && state.focus >= 0) {
    const box = document.querySelectorAll("#results li.hit")[state.focus].querySelector("input.pick");
    box.click();
  }
}

document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("#tabs button")) {
    button.addEventListener("click", () => showTab(button.dataset.tab, button.dataset.tab === "search" && $("q").value ? { q: $("q").value } : {}));
  }
  $("project-switch").addEventListener("change", (event) => {
    state.project = event.target.value;
    showProjectPath();
    const { view } = readHash();
    const params = currentParams();
    delete params.open;
    if (state.project) params.p = state.project; else delete params.p;
    $("f-project").value = state.project;
    $("context-project").value = state.project;
    for (const form of [$("sessions-form"), $("facts-form")]) form.project.value = state.project;
    writeHash(view, params);
    route();
  });
  $("search-form").addEventListener("submit", guarded(runSearch));
  $("q").addEventListener("input", scheduleSearch);
  for (const id of ["f-project", "f-kind", "f-tool", "f-session", "f-dismissed", "f-limit"]) $(id).addEventListener("change", scheduleSearch);
  $("bulk-pin").addEventListener("click", guarded(() => bulk("pin")));
  $("bulk-dismiss").addEventListener("click", guarded(() => bulk("dismiss")));
  $("bulk-erase").addEventListener("click", guarded(() => bulk("erase")));
  $("bulk-clear").addEventListener("click", () => { state.selected.clear(); for (const b of document.querySelectorAll("input.pick")) b.checked = false; updateBulk(); });
  $("note-form").addEventListener("submit", guarded(saveNote));
  $("note-project-pick").addEventListener("change", (event) => { if (event.target.value) $("note-project").value = event.target.value; });
  $("sessions-form").addEventListener("submit", guarded(() => loadSessions(null, false)));
  $("sessions-more").addEventListener("click", guarded(() => loadSessions(null, true)));
  $("facts-form").addEventListener("submit", guarded(() => loadFacts(null, false)));
  $("facts-more").addEventListener("click", guarded(() => loadFacts(null, true)));
  $("jobs-form").addEventListener("submit", guarded(() => loadJobs(null, false)));
  $("jobs-more").addEventListener("click", guarded(() => loadJobs(null, true)));
  $("rule-form").addEventListener("submit", guarded(addRule));
  $("context-form").addEventListener("submit", guarded(previewContext));
  $("import-form").addEventListener("submit", guarded(importBundle));
  $("rule-hosts").append(...hostBoxes("new", []));
  document.addEventListener("keydown", onKey);
  window.addEventListener("popstate", () => guarded(route)());
  const initial = readHash();
  state.project = initial.params.get("p") || "";
  guarded(async () => { await fillChoices(); await route(); })();
  // A problem (a quarantined spool line, no worker with sessions waiting, a full disk) is shown
  // wherever the user is, not only on the stats page.
  guarded(async () => { if (state.view !== "stats") showHealthBanner(await api("GET", "/v1/doctor?integrity=false")); })();
});
