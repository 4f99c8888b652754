// The job graph as Flink's dashboard draws it: one box per JobGraph vertex (the nodes of
// `/jobs/:jid/plan`), placed left to right by topological depth (a source at depth 0,
// every other vertex one column right of its deepest input), edges from each input
// labelled with its ship strategy. `layoutGraph` is pure (plan → positions); `renderGraph`
// turns a layout plus the vertices' status and pressure into SVG markup. Every box carries
// `data-vertex-id`, `data-vertex-name`, `data-parallelism` and `data-status`; every edge
// `data-source`, `data-target` and `data-ship-strategy`.
"use strict";

const GRAPH = { boxWidth: 240, lineHeight: 15, gapX: 110, gapY: 36, margin: 24, maxNameLines: 4, lineChars: 34 };

/** The name as lines of at most `lineChars`, split at chaining arrows first. */
function nameLines(name) {
  const lines = [];
  String(name).split(/\s*->\s*/).forEach((part, i, all) => {
    let rest = part + (i < all.length - 1 ? " ->" : "");
    while (rest.length > GRAPH.lineChars) {
      lines.push(rest.slice(0, GRAPH.lineChars));
      rest = rest.slice(GRAPH.lineChars);
    }
    lines.push(rest);
  });
  if (lines.length > GRAPH.maxNameLines) {
    lines.length = GRAPH.maxNameLines;
    lines[GRAPH.maxNameLines - 1] += "…";
  }
  return lines;
}

/** Depth of every node: 0 without inputs, else 1 + its deepest input's (a cycle stops at 0). */
function depths(nodes) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const depth = new Map();
  const visiting = new Set();
  const visit = (n) => {
    if (depth.has(n.id)) return depth.get(n.id);
    if (visiting.has(n.id)) return 0;
    visiting.add(n.id);
    const inputs = (n.inputs || []).map((i) => byId.get(i.id)).filter((x) => x);
    const d = inputs.length === 0 ? 0 : 1 + Math.max(...inputs.map(visit));
    visiting.delete(n.id);
    depth.set(n.id, d);
    return d;
  };
  nodes.forEach(visit);
  return depth;
}

/** Positions of boxes and edges for `plan.nodes`, names from `names` (vertex id → name). */
function layoutGraph(nodes, names) {
  const depth = depths(nodes);
  const columns = [];
  nodes.forEach((n) => {
    const d = depth.get(n.id);
    (columns[d] = columns[d] || []).push(n);
  });
  const boxes = new Map();
  const heights = columns.map((col) => col.reduce((h, n) => {
    const lines = nameLines(names.get(n.id) || n.description || n.id);
    const height = (lines.length + 3) * GRAPH.lineHeight + 16;
    boxes.set(n.id, { node: n, lines, height });
    return h + height + GRAPH.gapY;
  }, -GRAPH.gapY));
  const tallest = Math.max(0, ...heights);
  columns.forEach((col, d) => {
    let y = GRAPH.margin + (tallest - heights[d]) / 2;
    col.forEach((n) => {
      const b = boxes.get(n.id);
      b.x = GRAPH.margin + d * (GRAPH.boxWidth + GRAPH.gapX);
      b.y = y;
      y += b.height + GRAPH.gapY;
    });
  });
  const edges = [];
  nodes.forEach((n) => (n.inputs || []).forEach((input) => {
    const from = boxes.get(input.id), to = boxes.get(n.id);
    if (from && to) edges.push({ from, to, source: input.id, target: n.id, strategy: input.ship_strategy || "" });
  }));
  return { boxes, edges, width: GRAPH.margin * 2 + columns.length * (GRAPH.boxWidth + GRAPH.gapX) - GRAPH.gapX,
    height: GRAPH.margin * 2 + tallest };
}

const STATUS_COLOURS = { RUNNING: "#52c41a", FINISHED: "#1890ff", FAILED: "#f5222d", CANCELED: "#fa8c16", CANCELING: "#fa8c16",
  DEPLOYING: "#13c2c2", INITIALIZING: "#13c2c2", CREATED: "#8c8c8c", SCHEDULED: "#8c8c8c", RECONCILING: "#8c8c8c" };

/**
 * A box's fill as Flink colours them: back-pressured shades to dark grey, otherwise busy
 * goes from blue (idle) to red (fully busy). Returns [fill, text colour].
 */
function pressureFill(p) {
  if (!p) return ["#ffffff", "#1d2733"];
  const busy = num(p.busy) >= 0 ? p.busy : 0, backPressured = num(p.backPressured) >= 0 ? p.backPressured : 0;
  if (backPressured > busy) {
    const light = Math.round(92 - backPressured * 62);
    return [`hsl(0, 0%, ${light}%)`, light < 55 ? "#ffffff" : "#1d2733"];
  }
  return [`hsl(${Math.round(210 - busy * 210)}, 80%, ${Math.round(88 - busy * 18)}%)`, "#1d2733"];
}

/**
 * SVG markup of the graph: `vertices` maps vertex id → {name, parallelism, status};
 * `pressure` vertex id → {busy, backPressured, level} (ratios 0..1); `selected` a vertex id.
 */
function renderGraph(layout, vertices, pressure, selected, jid, kind) {
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${layout.width}" height="${layout.height}" data-job-graph="${esc(jid)}">
    <defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
    <path d="M 0 0 L 10 5 L 0 10 z" fill="#8c8c8c"/></marker></defs>`];
  layout.edges.forEach((e) => {
    const x1 = e.from.x + GRAPH.boxWidth, y1 = e.from.y + e.from.height / 2, x2 = e.to.x, y2 = e.to.y + e.to.height / 2;
    const mx = (x1 + x2) / 2, my = (y1 + y2) / 2, w = e.strategy.length * 7 + 12;
    parts.push(`<g class="edge" data-source="${esc(e.source)}" data-target="${esc(e.target)}" data-ship-strategy="${esc(e.strategy)}">
      <path d="M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2 - 2} ${y2}" fill="none" stroke="#8c8c8c" stroke-width="1.5" marker-end="url(#arrow)"/>
      <rect x="${mx - w / 2}" y="${my - 9}" width="${w}" height="18" rx="3" fill="#f0f2f5" stroke="#d9d9d9"/>
      <text x="${mx}" y="${my + 4}" font-size="11" text-anchor="middle" fill="#595959">${esc(e.strategy)}</text></g>`);
  });
  layout.boxes.forEach((b, id) => {
    const v = vertices.get(id) || { name: b.node.description || id, parallelism: b.node.parallelism, status: "" };
    const p = pressure.get(id);
    const [fill, ink] = pressureFill(p);
    const lh = GRAPH.lineHeight, tx = b.x + 14;
    const text = b.lines.map((line, i) => `<text x="${tx}" y="${b.y + 18 + i * lh}" font-size="12" font-weight="600" fill="${ink}">${esc(line)}</text>`);
    const y0 = b.y + 18 + b.lines.length * lh;
    text.push(`<text x="${tx}" y="${y0 + 4}" font-size="12" fill="${ink}">Parallelism: ${esc(v.parallelism)}</text>`);
    text.push(`<text x="${tx}" y="${y0 + 4 + lh}" font-size="11" fill="${ink}">${esc(v.status)}</text>`);
    const busy = p ? `Busy ${pct(p.busy)} · Backpressured ${pct(p.backPressured)}` : "";
    text.push(`<text x="${tx}" y="${y0 + 4 + 2 * lh}" font-size="11" fill="${ink}">${esc(busy)}</text>`);
    parts.push(`<g class="vertex${id === selected ? " selected" : ""}" data-vertex-id="${esc(id)}" data-vertex-name="${esc(v.name)}"
      data-parallelism="${esc(v.parallelism)}" data-status="${esc(v.status)}" data-backpressure-level="${esc(p ? p.level : "")}"
      onclick="go('#/job/${esc(kind)}/${esc(jid)}/overview/${esc(id)}')"><title>${esc(v.name)}</title>
      <rect class="box" x="${b.x}" y="${b.y}" width="${GRAPH.boxWidth}" height="${b.height}" rx="4" fill="${fill}" stroke="#595959"/>
      <rect x="${b.x}" y="${b.y}" width="6" height="${b.height}" fill="${STATUS_COLOURS[v.status] || "#8c8c8c"}"/>${text.join("")}</g>`);
  });
  parts.push("</svg>");
  return parts.join("");
}
