// The dashboard's core: REST fetching, formatting, hash routes (Flink's dashboard's
// routes), the live refresh every 2 s, and the cluster-level views (overview with job
// lists and submission, TaskManagers, JobManager configuration). A view is an object
// with `mount(main)` (builds its static parts once, so forms keep their input) and
// `update()` (fills the data parts); a refresh calls `update()` of the view shown.
"use strict";

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
/** A URI component that is also safe inside a single-quoted JS string in an attribute. */
const uri = (s) => encodeURIComponent(String(s ?? "")).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
const num = (v) => (typeof v === "number" && isFinite(v) ? v : Number(v));
const bytes = (b) => (!(num(b) >= 0) ? "-" : b < 1024 ? b + " B" : b < 1048576 ? (b / 1024).toFixed(1) + " KiB"
  : b < 1073741824 ? (b / 1048576).toFixed(1) + " MiB" : (b / 1073741824).toFixed(2) + " GiB");
const ms = (d) => (!(num(d) >= 0) ? "-" : d < 1000 ? d + " ms" : d < 60000 ? (d / 1000).toFixed(1) + " s"
  : d < 3600000 ? Math.floor(d / 60000) + "m " + Math.floor((d % 60000) / 1000) + "s" : (d / 3600000).toFixed(1) + " h");
const date = (t) => (num(t) > 0 ? new Date(t).toLocaleString() : "-");
const badge = (state) => `<span class="state ${esc(state)}">${esc(state)}</span>`;
const pct = (r) => (num(r) >= 0 ? Math.round(r * 100) + "%" : "-");
// Flink reports "no watermark yet" as Long.MIN_VALUE.
const watermark = (w) => (w === undefined || w === null || num(w) <= -9e18 ? "No Watermark" : date(num(w)));

/** GET (or another method) of a REST path: {ok, status, body}; never throws. */
async function api(path, opts) {
  try {
    const r = await fetch(path, opts);
    const text = await r.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch (e) { body = text; }
    return { ok: r.ok, status: r.status, body };
  } catch (e) {
    return { ok: false, status: 0, body: { errors: [String(e)] } };
  }
}
const errorText = (res) => (res.body && res.body.errors ? res.body.errors.join("\n") : `HTTP ${res.status}`);

/** A route: which view the hash names. */
function parseRoute(hash) {
  const parts = hash.replace(/^#\/?/, "").split("/").filter((p) => p.length > 0).map(decodeURIComponent);
  if (parts[0] === "job" && parts.length >= 3) {
    return { key: `job/${parts[2]}/${parts[3] || "overview"}`, view: "job", kind: parts[1], jid: parts[2],
      tab: parts[3] || "overview", vid: parts[4] || null };
  }
  if (parts[0] === "job") return { key: `jobs/${parts[1] || "running"}`, view: "jobs", kind: parts[1] || "running" };
  if (parts[0] === "task-manager" && parts.length >= 2) {
    return { key: `tm/${parts[1]}/${parts[2] || "metrics"}`, view: "taskmanager", id: parts[1], tab: parts[2] || "metrics" };
  }
  if (parts[0] === "task-manager") return { key: "tms", view: "taskmanagers" };
  if (parts[0] === "job-manager") return { key: "jm", view: "jobmanager" };
  return { key: "overview", view: "overview" };
}

/** The sidebar entry a route belongs to. */
function navOf(r) {
  if (r.view === "job" || r.view === "jobs") return r.kind === "completed" ? "job/completed" : "job/running";
  if (r.view === "taskmanagers" || r.view === "taskmanager") return "task-manager";
  return r.view === "jobmanager" ? "job-manager" : "overview";
}

let shown = null; // { key, view }
let generation = 0; // bumped on every mount; an update of an older view is dropped
let refreshing = false;

function go(hash) { location.hash = hash; }

async function route() {
  const r = parseRoute(location.hash);
  const nav = navOf(r);
  document.querySelectorAll("#sidebar nav a").forEach((a) => a.classList.toggle("active", a.getAttribute("data-nav") === nav));
  if (shown && shown.key === r.key) {
    shown.view.params = r;
  } else {
    generation += 1;
    const view = makeView(r);
    view.params = r;
    shown = { key: r.key, view };
    view.mount($("view"));
  }
  await refresh();
}

function makeView(r) {
  switch (r.view) {
    case "job": return new JobView(r.jid);
    case "jobs": return new JobListView();
    case "taskmanagers": return new TaskManagersView();
    case "taskmanager": return new TaskManagerView(r.id);
    case "jobmanager": return new JobManagerView();
    default: return new OverviewView();
  }
}

async function refresh() {
  if (refreshing || !shown) return;
  refreshing = true;
  const g = generation;
  try {
    await shown.view.update(() => g === generation);
    $("refreshed").textContent = "Refreshed " + new Date().toLocaleTimeString();
  } finally {
    refreshing = false;
  }
}

async function cancelJob(jid, event) {
  if (event) event.stopPropagation();
  const res = await api(`/jobs/${jid}?mode=cancel`, { method: "PATCH" });
  if (!res.ok) alert("Cancel refused: " + errorText(res));
  refresh();
}

/** Rows of a jobs table (`/jobs/overview` entries). */
function jobRows(jobs, kind) {
  if (jobs.length === 0) return `<tr><td colspan="7" class="muted">No ${kind} jobs.</td></tr>`;
  return jobs.map((j) => {
    const counts = Object.entries(j.tasks || {}).filter(([k, v]) => k !== "total" && v > 0)
      .map(([k, v]) => `${v} ${k}`).join(", ");
    const cancel = j.state === "RUNNING" ? `<button class="danger" onclick="cancelJob('${esc(j.jid)}', event)">Cancel</button>` : "";
    return `<tr class="link" data-job-row="${esc(j.jid)}" data-job-state="${esc(j.state)}" onclick="go('#/job/${kind}/${esc(j.jid)}/overview')">
      <td>${esc(j.name)}<div class="muted">${esc(j.jid)}</div></td><td>${date(j["start-time"])}</td>
      <td>${ms(j.duration)}</td><td>${date(j["end-time"])}</td><td>${esc(counts)} (${j.tasks ? j.tasks.total : 0} total)</td>
      <td>${badge(j.state)}</td><td>${cancel}</td></tr>`;
  }).join("");
}
const JOB_TABLE_HEAD = `<thead><tr><th>Job</th><th>Start time</th><th>Duration</th><th>End time</th><th>Tasks</th><th>Status</th><th></th></tr></thead>`;
const isRunning = (j) => !["FINISHED", "FAILED", "CANCELED", "SUSPENDED"].includes(j.state);

function cards(list) {
  return list.map(([k, v]) => `<div class="card">${esc(k)}<b>${esc(v)}</b></div>`).join("");
}

class OverviewView {
  mount(main) {
    main.innerHTML = `<h2>Overview</h2><div class="cards" id="ov-cards"></div>
      <h3>Running Jobs</h3><table>${JOB_TABLE_HEAD}<tbody id="ov-running"></tbody></table>
      <h3>Completed Jobs</h3><table>${JOB_TABLE_HEAD}<tbody id="ov-completed"></tbody></table>
      <h3>Submit a job</h3>
      <form class="submit" id="submit-form" onsubmit="submitJob(event)">
        <label for="submit-program">Program</label><input id="submit-program" required placeholder="keyed-sum">
        <label for="submit-args">Arguments (k=v lines)</label><textarea id="submit-args" placeholder="records=1000000"></textarea>
        <label for="submit-parallelism">Parallelism</label><input id="submit-parallelism" type="number" min="1" placeholder="default">
        <span></span><div><button class="primary" type="submit">Submit</button></div>
        <span></span><div id="submit-result"></div>
      </form>`;
  }
  async update(current) {
    const [o, jobs] = await Promise.all([api("/overview"), api("/jobs/overview")]);
    if (!current()) return;
    if (o.ok) {
      const b = o.body;
      $("ov-cards").innerHTML = cards([["Available Task Slots", b["slots-available"]], ["Total Task Slots", b["slots-total"]],
        ["Task Managers", b.taskmanagers], ["Running Jobs", b["jobs-running"]], ["Finished", b["jobs-finished"]],
        ["Cancelled", b["jobs-cancelled"]], ["Failed", b["jobs-failed"]]]);
    }
    if (jobs.ok) {
      const all = jobs.body.jobs;
      $("ov-running").innerHTML = jobRows(all.filter(isRunning), "running");
      $("ov-completed").innerHTML = jobRows(all.filter((j) => !isRunning(j)), "completed");
    }
  }
}

/** `k=v` lines as an object; throws on a line without `=`. */
function parseArgs(text) {
  const args = {};
  text.split("\n").map((l) => l.trim()).forEach((line, i) => {
    if (line.length === 0) return;
    const at = line.indexOf("=");
    if (at <= 0) throw new Error(`argument line ${i + 1} is not key=value: ${line}`);
    args[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  });
  return args;
}

async function submitJob(event) {
  event.preventDefault();
  const out = $("submit-result");
  const body = { program: $("submit-program").value.trim() };
  try { body.args = parseArgs($("submit-args").value); } catch (e) { out.innerHTML = `<div class="error">${esc(e.message)}</div>`; return; }
  const p = $("submit-parallelism").value.trim();
  if (p !== "") body.parallelism = Number(p);
  const res = await api("/jobs", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  if (res.ok && res.body && res.body.jobid) {
    go(`#/job/running/${res.body.jobid}/overview`);
  } else {
    out.innerHTML = `<div class="error">Submission refused (HTTP ${res.status}):\n${esc(errorText(res))}</div>`;
  }
}

class JobListView {
  mount(main) { main.innerHTML = `<h2 id="jl-title"></h2><table>${JOB_TABLE_HEAD}<tbody id="jl-rows"></tbody></table>`; }
  async update(current) {
    const kind = this.params.kind === "completed" ? "completed" : "running";
    const jobs = await api("/jobs/overview");
    if (!current() || !jobs.ok) return;
    $("jl-title").textContent = kind === "running" ? "Running Jobs" : "Completed Jobs";
    $("jl-rows").innerHTML = jobRows(jobs.body.jobs.filter((j) => isRunning(j) === (kind === "running")), kind);
  }
}

class TaskManagersView {
  mount(main) {
    main.innerHTML = `<h2>Task Managers</h2><table><thead><tr><th>ID</th><th>Address</th><th>Data port</th><th>Last heartbeat</th>
      <th>Slots</th><th>Free slots</th><th>Task heap</th><th>Managed memory</th><th>Network memory</th></tr></thead>
      <tbody id="tm-rows"></tbody></table>`;
  }
  async update(current) {
    const res = await api("/taskmanagers");
    if (!current() || !res.ok) return;
    const tms = res.body.taskmanagers;
    $("tm-rows").innerHTML = tms.length === 0 ? `<tr><td colspan="9" class="muted">No TaskManagers registered.</td></tr>`
      : tms.map((t) => `<tr class="link" data-taskmanager="${esc(t.id)}" onclick="go('#/task-manager/${uri(t.id)}/metrics')">
        <td>${esc(t.id)}</td><td>${esc(t.path)}</td><td>${esc(t.dataPort)}</td><td>${date(t.timeSinceLastHeartbeat)}</td>
        <td>${t.slotsNumber}</td><td>${t.freeSlots}</td><td>${bytes(t.memoryConfiguration.taskHeap)}</td>
        <td>${bytes(t.memoryConfiguration.managedMemory)}</td><td>${bytes(t.memoryConfiguration.networkMemory)}</td></tr>`).join("");
  }
}

// The TaskManager memory model, in Flink's order, with a colour each.
const MEMORY_MODEL = [["frameworkHeap", "Framework heap", "#69c0ff"], ["taskHeap", "Task heap", "#1890ff"],
  ["frameworkOffHeap", "Framework off-heap", "#95de64"], ["taskOffHeap", "Task off-heap", "#52c41a"],
  ["networkMemory", "Network", "#ffc53d"], ["managedMemory", "Managed", "#fa8c16"],
  ["jvmMetaspace", "JVM metaspace", "#b37feb"], ["jvmOverhead", "JVM overhead", "#bfbfbf"]];
const PROCESS_METRICS = ["Status.JVM.CPU.Load", "Status.ProcessTree.Memory.RSS", "Status.JVM.Threads.Count",
  "Status.Shuffle.Netty.AvailableMemory", "Status.Shuffle.Netty.UsedMemory", "Status.Shuffle.Netty.TotalMemory"];

class TaskManagerView {
  constructor(id) { this.id = id; }
  mount(main) {
    const base = `#/task-manager/${encodeURIComponent(this.id)}`;
    main.innerHTML = `<h2>Task Manager <span class="muted">${esc(this.id)}</span></h2>
      <nav class="tabs"><a id="tm-tab-metrics" href="${base}/metrics">Metrics</a><a id="tm-tab-logs" href="${base}/logs">Logs</a></nav>
      <div id="tm-body"></div>`;
  }
  async update(current) {
    const tab = this.params.tab === "logs" ? "logs" : "metrics";
    $("tm-tab-metrics").classList.toggle("active", tab === "metrics");
    $("tm-tab-logs").classList.toggle("active", tab === "logs");
    const path = `/taskmanagers/${encodeURIComponent(this.id)}`;
    if (tab === "logs") {
      const logs = await api(path + "/logs");
      if (!current()) return;
      $("tm-body").innerHTML = !logs.ok ? `<div class="error">${esc(errorText(logs))}</div>`
        : `<table><thead><tr><th>Log file</th><th>Size</th><th>Last modified</th></tr></thead><tbody>${
          logs.body.logs.map((l) => `<tr><td><a target="_blank" href="${esc(path + "/logs/" + encodeURIComponent(l.name))}">${esc(l.name)}</a></td><td>${bytes(l.size)}</td><td>${date(l.mtime)}</td></tr>`).join("")
          || `<tr><td colspan="3" class="muted">No log files.</td></tr>`}</tbody></table>`;
      return;
    }
    const [d, m] = await Promise.all([api(path), api(`${path}/metrics?get=${PROCESS_METRICS.join(",")}`)]);
    if (!current()) return;
    if (!d.ok) { $("tm-body").innerHTML = `<div class="error">${esc(errorText(d))}</div>`; return; }
    const t = d.body, mem = t.memoryConfiguration, total = MEMORY_MODEL.reduce((s, [k]) => s + (mem[k] || 0), 0) || 1;
    const values = Object.fromEntries((m.ok ? m.body : []).map((x) => [x.id, x.value]));
    $("tm-body").innerHTML = `<div class="cards">${cards([["Slots", t.slotsNumber], ["Free slots", t.freeSlots],
      ["CPU cores", t.hardware.cpuCores], ["Physical memory", bytes(t.hardware.physicalMemory)],
      ["Last heartbeat", new Date(t.timeSinceLastHeartbeat).toLocaleTimeString()]])}</div>
      <h3>Process metrics</h3><table><thead><tr><th>Metric</th><th>Value</th></tr></thead><tbody>
      <tr data-metric="Status.JVM.CPU.Load"><td>CPU load</td><td>${values["Status.JVM.CPU.Load"] === undefined ? "-" : pct(num(values["Status.JVM.CPU.Load"]))}</td></tr>
      <tr data-metric="Status.ProcessTree.Memory.RSS"><td>Resident memory (RSS)</td><td>${values["Status.ProcessTree.Memory.RSS"] === undefined ? "-" : bytes(num(values["Status.ProcessTree.Memory.RSS"]))}</td></tr>
      <tr data-metric="Status.JVM.Threads.Count"><td>Threads</td><td>${esc(values["Status.JVM.Threads.Count"] ?? "-")}</td></tr></tbody></table>
      <h3>Memory model <span class="muted">(total process memory ${bytes(mem.totalProcessMemory)}, total Flink memory ${bytes(mem.totalFlinkMemory)})</span></h3>
      <div class="bar">${MEMORY_MODEL.map(([k, label, c]) => `<div title="${label}" style="width:${(100 * (mem[k] || 0)) / total}%;background:${c}"></div>`).join("")}</div>
      <table><thead><tr><th>Component</th><th>Configured</th></tr></thead><tbody>${MEMORY_MODEL.map(([k, label, c]) =>
        `<tr data-memory="${k}"><td><span style="display:inline-block;width:10px;height:10px;background:${c}"></span> ${label}</td><td>${bytes(mem[k])}</td></tr>`).join("")}</tbody></table>
      <h3>Network buffers</h3><table><tbody><tr>${[["Available", "AvailableMemory"], ["Used", "UsedMemory"], ["Total", "TotalMemory"]]
        .map(([label, k]) => `<th>${label}</th><td>${bytes(num(values["Status.Shuffle.Netty." + k]))}</td>`).join("")}</tr></tbody></table>`;
  }
}

class JobManagerView {
  mount(main) { main.innerHTML = `<h2>Job Manager configuration</h2><table><thead><tr><th>Key</th><th>Value</th></tr></thead><tbody id="jm-rows"></tbody></table>`; }
  async update(current) {
    const res = await api("/jobmanager/config");
    if (!current() || !res.ok) return;
    $("jm-rows").innerHTML = res.body.map((e) => `<tr><td>${esc(e.key)}</td><td>${esc(e.value)}</td></tr>`).join("");
  }
}

window.addEventListener("hashchange", route);
route();
setInterval(refresh, 2000);
