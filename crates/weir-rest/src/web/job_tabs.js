// A job's tabs besides the overview: exceptions (`/jobs/:jid/exceptions`, each history
// entry with its `Caused by` chain), checkpoints (`/jobs/:jid/checkpoints` and
// `/checkpoints/config`) and configuration (`/jobs/:jid/config`). Each renders into
// `#job-body` unless `current()` says the view has changed meanwhile.
"use strict";

/** The first line of a stack trace and every `Caused by:` line after it. */
function causeChain(stacktrace) {
  const lines = String(stacktrace || "").split("\n");
  return [lines[0], ...lines.filter((l) => l.startsWith("Caused by:")).map((l) => l.slice("Caused by:".length).trim())];
}

function exceptionBlock(e, label) {
  const [root, ...causes] = causeChain(e.stacktrace);
  return `<div class="exception" data-exception="${esc(e.exceptionName)}">
    <div class="meta">${esc(label)} · ${date(e.timestamp)} · task: ${esc(e.taskName ?? "(job)")} · location: ${esc(e.endpoint ?? "-")}
      ${e.taskManagerId ? `(${esc(e.taskManagerId)})` : ""}</div>
    <div class="cause">${esc(root)}</div>${causes.map((c) => `<div class="cause">Caused by: ${esc(c)}</div>`).join("")}
    <details><summary>Stack trace</summary><pre>${esc(e.stacktrace)}</pre></details></div>`;
}

async function showExceptions(jid, current) {
  const res = await api(`/jobs/${jid}/exceptions`);
  if (!current()) return;
  if (!res.ok) { $("job-body").innerHTML = `<div class="error">${esc(errorText(res))}</div>`; return; }
  const entries = res.body.exceptionHistory.entries;
  $("job-body").innerHTML = entries.length === 0 ? `<p class="muted">No exceptions.</p>`
    : entries.map((e, i) => exceptionBlock(e, i === 0 ? "Root exception (latest)" : `Exception ${i + 1}`)
      + (e.concurrentExceptions || []).map((c) => exceptionBlock(c, "Concurrent exception")).join("")).join("")
      + (res.body.exceptionHistory.truncated ? `<p class="muted">Older exceptions are not shown.</p>` : "");
}

// Flink reports a job without periodic checkpoints with interval Long.MAX_VALUE
// (older Flink versions answer 404 instead); both mean "not enabled".
const DISABLED_INTERVAL = 9e18;

async function showCheckpoints(jid, current) {
  const [cfg, st] = await Promise.all([api(`/jobs/${jid}/checkpoints/config`), api(`/jobs/${jid}/checkpoints`)]);
  if (!current()) return;
  if (!cfg.ok || !cfg.body || !(cfg.body.interval < DISABLED_INTERVAL)) {
    $("job-body").innerHTML = `<p class="muted">Checkpointing is not enabled for this job.</p>`;
    return;
  }
  if (!st.ok || !st.body) {
    $("job-body").innerHTML = `<p class="error">Could not load checkpoint statistics: ${esc(errorText(st))}</p>`;
    return;
  }
  const s = st.body, c = s.counts, last = s.latest.completed, failed = s.latest.failed;
  const counts = cards([["Triggered", c.total], ["In progress", c.in_progress], ["Completed", c.completed], ["Failed", c.failed],
    ["Restored", c.restored]]);
  const latest = last
    ? `<table><thead><tr><th>ID</th><th>Completed at</th><th>Size</th><th>Duration</th><th>External path</th></tr></thead>
      <tbody><tr><td>${last.id}</td><td>${date(last.latest_ack_timestamp)}</td><td>${bytes(last.checkpointed_size)}</td>
      <td>${ms(last.end_to_end_duration)}</td><td>${esc(last.external_path ?? "-")}</td></tr></tbody></table>`
    : `<p class="muted">No checkpoint has completed yet.</p>`;
  const latestFailed = failed
    ? `<table><thead><tr><th>ID</th><th>Failed at</th><th>Cause</th></tr></thead><tbody><tr><td>${failed.id}</td>
      <td>${date(failed.failure_timestamp)}</td><td>${esc(failed.failure_message ?? "-")}</td></tr></tbody></table>`
    : `<p class="muted">No checkpoint has failed.</p>`;
  const history = s.history.map((h) => `<tr><td>${h.id}</td>
    <td title="${esc(h.failure_message ?? "")}">${badge(h.status)}</td><td>${esc(h.checkpoint_type)}</td>
    <td>${date(h.trigger_timestamp)}</td><td>${ms(h.end_to_end_duration)}</td><td>${bytes(h.checkpointed_size)}</td>
    <td>${h.num_acknowledged_subtasks}/${h.num_subtasks}</td></tr>`).join("")
    || `<tr><td colspan="7" class="muted">No checkpoints yet.</td></tr>`;
  const k = cfg.body, ext = k.externalization;
  const config = [["Mode", k.mode === "exactly_once" ? "Exactly once" : "At least once"], ["Interval", ms(k.interval)],
    ["Timeout", ms(k.timeout)], ["Minimum pause", ms(k.min_pause)], ["Max concurrent", k.max_concurrent],
    ["Retained checkpoints", !ext.enabled ? "Disabled" : ext.delete_on_cancellation ? "Deleted on cancellation" : "Retained on cancellation"],
    ["State backend", k.state_backend], ["Checkpoint storage", k.checkpoint_storage],
    ["Unaligned checkpoints", k.unaligned_checkpoints ? "Enabled" : "Disabled"], ["Tolerable failed checkpoints", k.tolerable_failed_checkpoints]]
    .map(([n, v]) => `<tr><th>${n}</th><td>${esc(v)}</td></tr>`).join("");
  $("job-body").innerHTML = `<div class="cards">${counts}</div><h3>Latest completed checkpoint</h3>${latest}
    <h3>Latest failed checkpoint</h3>${latestFailed}
    <h3>History</h3><table><thead><tr><th>ID</th><th>Status</th><th>Type</th><th>Triggered</th><th>Duration</th><th>Size</th>
    <th>Acknowledged</th></tr></thead><tbody>${history}</tbody></table>
    <h3>Configuration</h3><table><tbody>${config}</tbody></table>`;
}

async function showJobConfig(jid, current) {
  const res = await api(`/jobs/${jid}/config`);
  if (!current()) return;
  if (!res.ok) { $("job-body").innerHTML = `<div class="error">${esc(errorText(res))}</div>`; return; }
  const e = res.body["execution-config"] || {};
  const user = Object.entries(e["user-config"] || {});
  $("job-body").innerHTML = `<h3>Execution configuration</h3><table><tbody>
    <tr><th>Restart strategy</th><td>${esc(e["restart-strategy"])}</td></tr>
    <tr><th>Job parallelism</th><td>${esc(e["job-parallelism"])}</td></tr>
    <tr><th>Object reuse mode</th><td>${esc(e["object-reuse-mode"])}</td></tr></tbody></table>
    <h3>User configuration</h3><table><thead><tr><th>Key</th><th>Value</th></tr></thead><tbody>${
      user.map(([k, v]) => `<tr data-user-config="${esc(k)}"><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join("")
      || `<tr><td colspan="2" class="muted">No user configuration.</td></tr>`}</tbody></table>`;
}
