// draguard ui: draws the panels the server computes (/api/<panel>), and sends the paste box to
// /api/check.  The server follows the cluster by watch; the page asks it twice a second whether a
// panel changed (/api/summary: a read of the server's memory, never a request to the cluster; its
// generation moves when a panel changed) and fetches the panels only then.  A poll rather than
// server-sent events: it costs nothing, it also notices the ui server itself going away, and no
// open stream holds the server's shutdown.
// Every text from the cluster goes through textContent: a name is never markup.
"use strict";

const PANELS = ["capacity", "devices", "claims", "pending", "findings"];
const POLL_MS = 500;
let shown = -1;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k === "class") node.className = v; else if (k === "text") node.textContent = v; else node.setAttribute(k, v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function pct(fraction) { return Math.round((fraction || 0) * 100) + "%"; }

function bar(fraction, title) {
  const fill = el("span");
  fill.style.width = Math.min(100, Math.max(0, (fraction || 0) * 100)) + "%";
  return el("div", { class: "bar", title: title, role: "img", "aria-label": title }, fill);
}

// one row of a .bars grid: where, what it measures, the bar, the figures
function barRow(label, what, fraction, figures) {
  return [el("span", { class: "label", text: label }), el("span", { class: "what", text: what }),
    bar(fraction, what + ": " + figures), el("span", { class: "figures", "data-testid": "figures", text: figures })];
}

function devicesLine(r) {
  return `${r.devices} devices: ${r.free} free, ${r.shared} shared, ${r.dedicated} dedicated`;
}

function drawCapacity(doc) {
  const out = [];
  for (const cls of doc.classes) {
    const rows = [];
    const inUse = cls.devices - cls.free;
    rows.push(...barRow("all nodes", "devices in use", cls.devices ? inUse / cls.devices : 0,
      `${inUse} of ${cls.devices} (${pct(cls.devices ? inUse / cls.devices : 0)})`));
    for (const [name, use] of Object.entries(cls.capacity)) {
      rows.push(...barRow("", name + " used", use.fraction, `${use.used} of ${use.total} (${pct(use.fraction)})`));
    }
    for (const p of cls.pools) {
      const where = p.node + (p.pool && p.pool !== p.node ? ` (pool ${p.pool})` : "");
      const caps = Object.entries(p.capacity);
      if (!caps.length) {
        const used = p.devices - p.free;
        rows.push(...barRow(where, "devices in use", p.devices ? used / p.devices : 0, `${used} of ${p.devices}`));
      }
      caps.forEach(([name, use], i) => rows.push(...barRow(i ? "" : where, name + " used", use.fraction,
        `${use.used} of ${use.total} (${pct(use.fraction)})`)));
    }
    out.push(el("div", { class: "card", "data-testid": "class", "data-class": cls.class },
      el("h3", {}, "class ", el("code", { text: cls.class }), ": ",
        el("span", { "data-testid": "class-devices", text: devicesLine(cls) })),
      el("div", { class: "bars" }, rows)));
  }
  const s = doc.summary;
  out.push(el("p", { "data-testid": "allocated" }, `allocated claims: ${s.allocated_claims}` +
    (s.unknown_results ? ` (${s.unknown_results} results name devices not in the inventory)` : "")));
  if (!doc.classes.length) out.unshift(el("p", { class: "empty", text: "no DeviceClass in the inventory" }));
  return out;
}

function holdersText(h) {
  const parts = [...h.named];
  if (h.others) parts.push(`${h.others} claim${h.others > 1 ? "s" : ""} in other namespaces`);
  return parts.length ? "held by " + parts.join(", ") : "";
}

function drawDevices(doc) {
  if (!doc.pools.length) return [el("p", { class: "empty", text: "no devices" })];
  return doc.pools.map((pool) => {
    const counters = pool.counters.length ? el("div", { class: "bars" }, pool.counters.map((c) =>
      barRow(`counter set ${c.set}`, c.counter + " consumed", c.fraction, `${c.text} (${pct(c.fraction)})`)).flat()) : null;
    return el("div", { class: "card", "data-testid": "pool", "data-pool": pool.pool },
      el("h3", {}, "pool ", el("code", { text: pool.pool }), " ", el("span", { class: "what", text: `(driver ${pool.driver})` })),
      counters,
      pool.nodes.map((n) => [el("div", { class: "what", text: "node " + n.node }),
        el("div", { class: "devices-grid" }, n.devices.map((d) => el("div",
          { class: "device " + d.state, "data-testid": "device", "data-device": `${pool.pool}/${d.name}`, "data-state": d.state },
          el("div", {}, el("span", { class: "name", text: d.name }), " ",
            el("span", { class: "state " + d.state, text: d.state + (d.shareable ? " · shareable" : "") })),
          d.capacity.length ? el("div", { class: "bars" }, d.capacity.map((c) =>
            barRow("", c.name, c.fraction, `${c.text} (${pct(c.fraction)})`)).flat()) : null,
          el("div", { class: "holders", "data-testid": "holders", text: holdersText(d.holders) }))))]));
  });
}

function verdict(v) {
  const word = v === true ? "yes" : v === false ? "no" : "unknown";
  return el("span", { class: "verdict " + word, text: word });
}

function findingsList(items) {
  return items.map((f) => el("li", {}, el("span", { class: "sev-" + f.severity, text: f.severity }),
    `: ${f.reason}: ` + (f.field ? `${f.field}: ` : "") + f.message));
}

function classTable(rows) {
  if (!rows || !rows.length) return null;
  return el("table", {}, el("tr", {}, ["nodes", "ever", "now", "first reason"].map((h) => el("th", { text: h }))),
    rows.map((r) => el("tr", {}, el("td", { text: r.label }), el("td", {}, verdict(r.ever)), el("td", {}, verdict(r.now)),
      el("td", { text: r.reason + (r.held ? ` (${r.held})` : "") }))));
}

function explanation(e, testid) {
  return el("div", { class: "card", "data-testid": testid, "data-name": `${e.namespace}/${e.name}` },
    el("h3", {}, `${e.kind} `, el("code", { text: `${e.namespace}/${e.name}` }), e.state ? `: ${e.state}` : ""),
    el("div", {}, "could ever run (every device free): ", el("span", { "data-testid": "ever" }, verdict(e.ever)),
      " · fits now (today's allocations): ", el("span", { "data-testid": "now" }, verdict(e.now))),
    e.rejected && e.rejected.length ? el("ul", {}, findingsList(e.rejected)) : null,
    el("ul", {}, findingsList(e.findings || [])),
    classTable(e.classes),
    (e.claims || []).map((c) => el("div", {}, el("div", { class: "what", text: c.origin + (c.state ? `: ${c.state}` : "") }),
      el("ul", {}, findingsList(c.findings || [])), classTable(c.classes))),
    (e.gaps || []).map((g) => el("div", { class: "what", text: "note: " + g })));
}

function drawClaims(doc) {
  const out = [];
  if (doc.scope !== "all") {
    out.push(el("p", { class: "help", text: `You may list claims of namespace ${doc.namespace} only: other namespaces' claims are not shown.` }));
  }
  if (!doc.claims.length) return [...out, el("p", { class: "empty", text: "no claims" })];
  out.push(el("table", {}, el("tr", {}, ["claim", "state", "devices (share, consumed capacity)", "reserved for"].map((h) => el("th", { text: h }))),
    doc.claims.map((c) => el("tr", { "data-testid": "claim", "data-name": `${c.namespace}/${c.name}` },
      el("td", {}, el("code", { text: `${c.namespace}/${c.name}` })),
      el("td", { text: c.deleting ? "deleting" : c.allocated ? "allocated" : "not allocated yet" }),
      el("td", { "data-testid": "claim-devices" }, c.devices.map((d) => el("div", {},
        el("code", { text: `${d.pool}/${d.device}` }), ` (request ${d.request}` + (d.shareID ? `, share ${d.shareID}` : "") +
        (Object.keys(d.consumedCapacity).length ? ", consumed " + Object.entries(d.consumedCapacity).map(([k, v]) => `${k} ${v}`).join(", ") : "") +
        (d.adminAccess ? ", admin access" : "") + ")"))),
      el("td", { text: c.reservedFor.join(", ") })))));
  return out;
}

function drawPending(pending, claims) {
  const out = [];
  for (const p of pending.pods) out.push(explanation(p, "pending-pod"));
  for (const c of claims.claims) if (c.explain) out.push(explanation(c.explain, "pending-claim"));
  if (pending.not_explained) out.push(el("p", { class: "what", text: `${pending.not_explained} more pending pods not explained` }));
  return out.length ? out : [el("p", { class: "empty", text: "nothing pending" })];
}

function drawFindings(doc) {
  if (!doc.available) return [el("p", { class: "empty", text: doc.note || "no PolicyReports" })];
  if (!doc.results.length) return [el("p", { class: "empty", text: "the audit reports no findings" })];
  return [el("table", {}, el("tr", {}, ["result", "object", "rule", "field", "message"].map((h) => el("th", { text: h }))),
    doc.results.map((r) => el("tr", { "data-testid": "finding" }, el("td", { class: r.result === "fail" ? "sev-error" : "sev-warning", text: r.result }),
      el("td", { text: `${r.kind} ${r.namespace ? r.namespace + "/" : ""}${r.name}` }), el("td", { text: r.rule }),
      el("td", { text: r.field }), el("td", { text: r.message }))))];
}

function replace(id, nodes) {
  const node = document.getElementById(id);
  node.replaceChildren(...nodes.flat().filter(Boolean));
}

async function getJSON(path) {
  const resp = await fetch(path, { cache: "no-store" });
  if (!resp.ok) throw new Error(`${path}: HTTP ${resp.status}`);
  return resp.json();
}

async function refresh() {
  const live = document.getElementById("live");
  let summary;
  try {
    summary = await getJSON("/api/summary");
  } catch (err) {
    live.className = "live stale";
    live.textContent = "the draguard ui server does not answer";
    return;
  }
  const stale = summary.gaps.some((g) => g.startsWith("stale:"));
  live.className = "live " + (stale ? "stale" : "ok");
  live.textContent = (stale ? "stale since " : "updated ") + new Date(summary.changed_at * 1000).toLocaleTimeString();
  live.dataset.generation = summary.generation;
  if (summary.generation === shown) return;
  const docs = {};
  for (const p of PANELS) docs[p] = await getJSON("/api/" + p);
  document.getElementById("source").textContent = `${summary.where} · namespace ${summary.namespace}` +
    (summary.scope === "all" ? " · claims of every namespace" : summary.scope === "namespace" ? " · claims of your namespace only" : " · claims not readable");
  replace("gaps", summary.gaps.map((g) => el("li", { text: g })));
  replace("capacity-body", drawCapacity(docs.capacity));
  replace("devices-body", drawDevices(docs.devices));
  replace("claims-body", drawClaims(docs.claims));
  replace("pending-body", drawPending(docs.pending, docs.claims));
  replace("findings-body", drawFindings(docs.findings));
  shown = summary.generation;
  document.body.dataset.generation = String(shown);
}

function count(a) {
  if (!a || a.fit === null || a.fit === undefined) return "unknown";
  return a.bound && a.bound !== "exact" ? `${a.bound} ${a.fit}` : String(a.fit);
}

async function check() {
  const out = document.getElementById("check-body");
  out.replaceChildren(el("p", { class: "what", text: "checking…" }));
  let resp, doc;
  try {
    resp = await fetch("/api/check", { method: "POST", body: document.getElementById("paste").value,
      headers: { "Content-Type": "application/yaml" } });
    doc = await resp.json();
  } catch (err) {
    out.replaceChildren(el("p", { class: "error", "data-testid": "check-error", text: String(err) }));
    return;
  }
  if (!resp.ok) {
    out.replaceChildren(el("p", { class: "error", "data-testid": "check-error", text: doc.error || `HTTP ${resp.status}` }));
    return;
  }
  const findings = doc.lint.findings;
  const nodes = [el("h3", { text: findings.length ? `${findings.length} finding${findings.length > 1 ? "s" : ""}` : "no findings" })];
  if (findings.length) {
    nodes.push(el("table", {}, el("tr", {}, ["severity", "reason", "object", "field", "line", "message"].map((h) => el("th", { text: h }))),
      findings.map((f) => el("tr", { "data-testid": "check-finding" }, el("td", { class: "sev-" + f.severity, text: f.severity }),
        el("td", { text: f.reason }), el("td", { text: `${f.kind} ${f.namespace ? f.namespace + "/" : ""}${f.name}` }),
        el("td", { "data-testid": "check-field", text: f.field }), el("td", { text: f.line || "" }), el("td", { text: f.message })))));
  }
  if (doc.fit) {
    nodes.push(el("p", { "data-testid": "check-fit" }, `${doc.fit.object}: `,
      el("b", { "data-testid": "fit-now", text: count(doc.fit.now) }), " more fit now; ",
      el("b", { "data-testid": "fit-ever", text: count(doc.fit.ever) }), " with every device free" +
      (doc.fit.replicas !== null && doc.fit.replicas !== undefined ? ` (it asks for ${doc.fit.replicas} replicas)` : "")));
    if (doc.fit.assumes) nodes.push(el("p", { class: "what", text: "assumes " + doc.fit.assumes }));
    for (const n of doc.fit.notes || []) nodes.push(el("p", { class: "what", text: n }));
  } else {
    nodes.push(el("p", { class: "what", text: doc.fit_note }));
  }
  out.replaceChildren(...nodes);
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("check-button").addEventListener("click", check);
  // one refresh at a time: the next is asked for once this one is drawn (or failed)
  const loop = () => refresh().catch(() => {}).finally(() => setTimeout(loop, POLL_MS));
  loop();
});
