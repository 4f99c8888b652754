// One job: its header (name, id, state, times, cancel), Flink's tabs (`#/job/<kind>/<jid>/
// overview|exceptions|checkpoints|configuration`) and the overview tab: the job graph
// (graph.js) from `/jobs/:jid/plan`, coloured from `/jobs/:jid` and each vertex's
// `/backpressure`, the vertex table, and the subtasks of the vertex in the route
// (`…/overview/<vid>`): `/jobs/:jid/vertices/:vid`, `/watermarks`, `/backpressure` and the
// output watermarks from `/metrics?get=<i>.currentOutputWatermark`. The other tabs are in
// job_tabs.js.
"use strict";

const JOB_TABS = [["overview", "Overview"], ["exceptions", "Exceptions"], ["checkpoints", "Checkpoints"], ["configuration", "Configuration"]];

class JobView {
  constructor(jid) { this.jid = jid; this.plan = null; }
  mount(main) {
    main.innerHTML = `<div class="job-head" id="job-head"></div><nav class="tabs" id="job-tabs"></nav><div id="job-body"></div>`;
  }
  async update(current) {
    const { jid, kind, tab, vid } = this.params;
    $("job-tabs").innerHTML = JOB_TABS.map(([t, label]) =>
      `<a href="#/job/${esc(kind)}/${esc(jid)}/${t}" class="${t === tab ? "active" : ""}" data-tab="${t}">${label}</a>`).join("");
    const detail = await api(`/jobs/${jid}`);
    if (!current()) return;
    if (!detail.ok) {
      $("job-head").innerHTML = `<span class="name">Job ${esc(jid)}</span>`;
      $("job-body").innerHTML = `<div class="error">${esc(errorText(detail))}</div>`;
      return;
    }
    const d = detail.body;
    const cancel = isRunning(d) ? `<button class="danger" onclick="cancelJob('${esc(jid)}')">Cancel Job</button>` : "";
    $("job-head").innerHTML = `<span class="name">${esc(d.name)}</span>${badge(d.state)}<span class="muted">${esc(d.jid)}</span>
      <span>Start: ${date(d["start-time"])}</span><span>Duration: ${ms(d.duration)}</span>${cancel}`;
    if (tab === "exceptions") return showExceptions(jid, current);
    if (tab === "checkpoints") return showCheckpoints(jid, current);
    if (tab === "configuration") return showJobConfig(jid, current);
    return this.showOverview(d, kind, vid, current);
  }
  async showOverview(d, kind, vid, current) {
    if (!this.plan) {
      const plan = await api(`/jobs/${d.jid}/plan`);
      if (!plan.ok) { $("job-body").innerHTML = `<div class="error">${esc(errorText(plan))}</div>`; return; }
      this.plan = plan.body.plan;
    }
    // Only running vertices are coloured by pressure, as in Flink.
    const pressures = await Promise.all(d.vertices.map((v) => api(`/jobs/${d.jid}/vertices/${v.id}/backpressure`)));
    if (!current()) return;
    const vertices = new Map(d.vertices.map((v) => [v.id, v]));
    const pressure = new Map();
    d.vertices.forEach((v, i) => {
      if (v.status === "RUNNING" && pressures[i].ok) pressure.set(v.id, vertexPressure(pressures[i].body));
    });
    const layout = layoutGraph(this.plan.nodes, new Map(d.vertices.map((v) => [v.id, v.name])));
    if (!$("job-graph")) {
      $("job-body").innerHTML = `<div class="graph" id="job-graph"></div><div class="legend">Box colour:
        <span style="background:hsl(210,80%,88%)"></span>idle<span style="background:hsl(0,80%,70%)"></span>busy
        <span style="background:hsl(0,0%,40%)"></span>back-pressured; left stripe: status. Click a box for its subtasks.</div>
        <div id="job-vertex"></div><h3>Vertices</h3><table><thead><tr><th>Name</th><th>Status</th><th>Parallelism</th>
        <th>Records received</th><th>Bytes received</th><th>Records sent</th><th>Bytes sent</th><th>Duration</th><th>Tasks</th></tr></thead>
        <tbody id="job-vertices"></tbody></table>`;
    }
    $("job-graph").innerHTML = renderGraph(layout, vertices, pressure, vid, d.jid, kind);
    $("job-vertices").innerHTML = d.vertices.map((v) => `<tr class="link" onclick="go('#/job/${esc(kind)}/${esc(d.jid)}/overview/${esc(v.id)}')">
      <td>${esc(v.name)}</td><td>${badge(v.status)}</td><td>${v.parallelism}</td><td>${esc(v.metrics["read-records"])}</td>
      <td>${bytes(v.metrics["read-bytes"])}</td><td>${esc(v.metrics["write-records"])}</td><td>${bytes(v.metrics["write-bytes"])}</td>
      <td>${ms(v.duration)}</td><td>${esc(Object.entries(v.tasks || {}).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`).join(", "))}</td></tr>`).join("");
    await this.showSubtasks(d, vid, current);
  }
  async showSubtasks(d, vid, current) {
    if (!vid) { $("job-vertex").innerHTML = ""; return; }
    const v = d.vertices.find((x) => x.id === vid);
    const base = `/jobs/${d.jid}/vertices/${vid}`;
    const outputIds = v ? Array.from({ length: v.parallelism }, (_, i) => `${i}.currentOutputWatermark`).join(",") : "";
    const [detail, inputs, outputs, bp] = await Promise.all([api(base), api(base + "/watermarks"),
      api(`${base}/metrics?get=${outputIds}`), api(base + "/backpressure")]);
    if (!current()) return;
    if (!detail.ok) { $("job-vertex").innerHTML = `<div class="error">${esc(errorText(detail))}</div>`; return; }
    const byIndex = (res, name) => new Map((res.ok && Array.isArray(res.body) ? res.body : [])
      .map((m) => [m.id, m.value]).filter(([id]) => id.endsWith("." + name)).map(([id, value]) => [Number(id.split(".")[0]), value]));
    const input = byIndex(inputs, "currentInputWatermark"), output = byIndex(outputs, "currentOutputWatermark");
    const levels = new Map((bp.ok ? bp.body.subtasks || [] : []).map((s) => [s.subtask, s]));
    const rows = detail.body.subtasks.map((s) => {
      const p = levels.get(s.subtask), level = p ? p.backpressureLevel : "";
      return `<tr data-subtask="${s.subtask}"><td>${s.subtask}</td><td>${badge(s.status)}</td><td>${s.attempt}</td>
        <td title="TaskManager ${esc(s["taskmanager-id"])}">${esc(s.endpoint)}</td><td>${ms(s.duration)}</td>
        <td>${esc(s.metrics["read-records"])}</td><td>${bytes(s.metrics["read-bytes"])}</td><td>${esc(s.metrics["write-records"])}</td>
        <td>${bytes(s.metrics["write-bytes"])}</td><td>${watermark(input.get(s.subtask))}</td><td>${watermark(output.get(s.subtask))}</td>
        <td class="bp-${esc(level)}">${esc(level || "-")}${p ? ` (${pct(num(p.ratio))})` : ""}</td></tr>`;
    }).join("");
    $("job-vertex").innerHTML = `<h3 data-subtasks-of="${esc(vid)}">Subtasks of ${esc(detail.body.name)}</h3><table><thead><tr>
      <th>#</th><th>Status</th><th>Attempt</th><th>Host</th><th>Duration</th><th>Records received</th>
      <th>Bytes received</th><th>Records sent</th><th>Bytes sent</th><th>Input watermark</th><th>Output watermark</th>
      <th>Back pressure</th></tr></thead><tbody>${rows}</tbody></table>`;
  }
}

/** A vertex's pressure from its `/backpressure`: the worst subtask's busy and back-pressured ratios. */
function vertexPressure(body) {
  const subtasks = body.subtasks || [];
  const worst = (f) => subtasks.reduce((m, s) => (num(s[f]) >= 0 ? Math.max(m, num(s[f])) : m), -1);
  return { busy: worst("busyRatio"), backPressured: worst("ratio"), level: body.backpressureLevel || "" };
}
