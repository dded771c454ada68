// The HTML report's script, inlined in the page and allowed by its hash. It
// reads the page's data (JSON in a `<script type="application/json">`) and
// builds every element with `createElement` and `textContent`: a case's text
// is never parsed as markup. The cases table renders only the rows in view.
// Plain ES2017, no template literals (this file is one).

/** The page's script. */
export const SCRIPT = String.raw`"use strict";
(function () {
var D = JSON.parse(document.getElementById("report-data").textContent);
var M = D.metrics, ROWS = D.rows, RH = 28;
// A matrix run: a summary per target, each unit of a case side by side.
var MATRIX = !!D.comparison, TWO = !MATRIX && D.runs.length === 2;
var NAMES = D.runs.map(function (r) { return r.label; });
var STATUSES = ["scored", "blocked", "non_evaluable", "skipped", "error"];
// The page's data leaves out what is common (status scored, validity valid,
// an example id equal to the unit id): these read it back, row by row as needed.
function stOf(s) { return s.st === undefined ? "scored" : s.st; }
function vaOf(s) { return s.va === undefined ? "valid" : s.va; }
function msOf(u) {
  var ms = u && u.t && typeof u.t === "object" ? u.t.latency_ms : undefined;
  return typeof ms === "number" && isFinite(ms) ? ms : undefined;
}
// What a text direction or an invisible character would act on is shown as its code.
var UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
function clean(s) {
  return String(s).replace(UNSAFE, function (c) {
    return "\\u{" + c.charCodeAt(0).toString(16).toUpperCase() + "}";
  });
}
function show(v) {
  if (v === undefined) return "";
  return clean(typeof v === "string" ? v : JSON.stringify(v, null, 2));
}
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = clean(text);
  return e;
}
function add(parent) {
  for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
  return parent;
}
var SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, cls) {
  var e = document.createElementNS(SVG, tag);
  for (var k in attrs) e.setAttribute(k, String(attrs[k]));
  if (cls) e.setAttribute("class", cls);
  return e;
}
function num(x, d) { return x === null || x === undefined ? "\u2013" : Number(x).toFixed(d === undefined ? 3 : d); }
function fig(x) { return typeof x === "number" && Number.isInteger(x) ? String(x) : num(x); }
function pct(x) { return x === null || x === undefined ? "\u2013" : (x * 100).toFixed(1) + "%"; }
function iv(c) { return c ? "[" + num(c[0]) + ", " + num(c[1]) + "]" : ""; }
// A diff line's metric, after its target in a line of one target of two matrix runs.
function diffName(d) { return d.target_name === undefined ? d.metric : d.target_name + ": " + d.metric; }
// A difference, as the comparison on stderr writes it: "+0.250", "-0.500".
function sg(x) { return x === null || x === undefined ? "\u2013" : (x >= 0 ? "+" : "") + Number(x).toFixed(3); }
function ivs(c) { return c ? "[" + sg(c[0]) + ", " + sg(c[1]) + "]" : ""; }
function runName(run) { return run.label ? run.noun + " " + run.label : ""; }
function table(head, rows, numeric) {
  var t = el("table", "t"), thead = el("thead"), tr = el("tr");
  head.forEach(function (h, i) {
    var th = el("th", numeric[i] ? "n" : "", h);
    th.setAttribute("scope", "col");
    tr.appendChild(th);
  });
  add(t, add(thead, tr));
  var tb = el("tbody");
  rows.forEach(function (r) {
    var row = el("tr");
    r.forEach(function (c, i) {
      var td = el("td", numeric[i] ? "n" : "");
      if (c && c.nodeType) td.appendChild(c); else td.textContent = clean(c === undefined ? "" : c);
      row.appendChild(td);
    });
    tb.appendChild(row);
  });
  t.appendChild(tb);
  return add(el("div", "wrap"), t);
}
function verdict(s) {
  if (!s) return { text: "", cls: "", key: 9 };
  var st = stOf(s), va = vaOf(s);
  if (st === "scored") {
    var inv = va === "valid" ? "" : " (" + va + ")";
    if (s.p === true) return { text: "\u2713 " + num(s.v, 2) + inv, cls: "pass", key: 1 + (s.v || 0) / 1e9 };
    if (s.p === false) return { text: "\u2717 " + num(s.v, 2) + inv, cls: "fail", key: 0 + (s.v || 0) / 1e9 };
    return { text: num(s.v, 2) + inv, cls: "", key: 2 };
  }
  var short = { blocked: "blocked", non_evaluable: "n/a", skipped: "skipped", error: "error" }[st] || st;
  var bad = st === "error" || st === "blocked";
  return { text: (bad ? "\u26a0 " : "") + short, cls: bad ? "fail" : "muted", key: st === "error" ? -2 : st === "blocked" ? -1 : 3 };
}

var app = document.getElementById("app");
var header = add(el("header"), el("h1", "", D.title));
function runId(r) {
  var id = r.facts.filter(function (f) { return f[0] === "run"; })[0];
  return id ? id[1] : "run";
}
var sub = MATRIX
  ? runId(D.runs[0]).replace(/ \(target [^]*\)$/, "") + ": targets " + NAMES.join(", ") + ", each against " + NAMES[0]
  : D.runs.map(function (r) { return (r.label ? r.label + ": " : "") + runId(r); }).join("  \u2192  ");
add(header, el("p", "muted", sub));
var main = el("main");
add(app, header, main);

// Summary, gates and facts, per run.
D.runs.forEach(function (run) {
  var sec = el("section");
  sec.setAttribute("aria-label", "Summary" + (run.label ? " " + run.label : ""));
  add(sec, el("h2", "", "Summary" + (run.label ? " \u2014 " + runName(run) : "")));
  add(sec, table(
    ["metric", "mean", "95% interval", "coverage", "failures as low\u2026high", "pass rate", "n", "scored", "invalid", "error", "blocked", "skipped", "non_evaluable"],
    run.aggregates.map(function (a) {
      // As stderr and Markdown show it: without a failure, nothing to bound.
      var bounds = a.errors + a.blocked === 0 || !a.mean_bounds ? "\u2013" : iv(a.mean_bounds);
      return [a.metric, num(a.mean), iv(a.ci95), pct(a.coverage), bounds,
        pct(a.pass_rate) + (a.pass_rate_ci95 ? " " + iv(a.pass_rate_ci95) : ""), a.n,
        a.aggregatable + a.invalid, a.invalid, a.errors, a.blocked, a.skipped, a.non_evaluable];
    }),
    [0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1]));
  // A classification metric: its figures, per label, and the confusion matrix.
  run.aggregates.forEach(function (a) {
    var c = a.classification;
    if (!c) return;
    add(sec, el("h3", "", "Classification: " + a.metric));
    add(sec, el("p", "classification", "accuracy " + num(c.accuracy) + " (" + c.correct + "/" + c.predictions +
      (c.invalid_predictions > 0 ? ", " + c.invalid_predictions + " invalid" : "") + "), macro F1 " +
      num(c.macro_f1) + ", micro F1 " + num(c.micro_f1) + ", weighted F1 " + num(c.weighted_f1)));
    add(sec, table(["label", "precision", "recall", "F1", "support"], c.per_label.map(function (l) {
      return [l.label, num(l.precision), num(l.recall), num(l.f1), l.support];
    }), [0, 1, 1, 1, 1]));
    if (c.labels.length <= 20) {
      var m = table(["true \\ predicted"].concat(c.labels, ["invalid"]), c.confusion.map(function (row, i) {
        return [c.labels[i]].concat(row, [c.invalid_by_label[i]]);
      }), [0].concat(c.labels.map(function () { return 1; }), [1]));
      m.setAttribute("aria-label", "Confusion matrix of " + a.metric + ": rows true, columns predicted");
      add(sec, m);
    }
  });
  var gh = el("h3", "", "Gates: ");
  var oc = el("span", "badge " + (run.outcome === "passed" ? "pass" : run.outcome === "failed" ? "fail" : "muted"),
    run.outcome === "none" ? "no gates" : run.outcome);
  oc.setAttribute("data-outcome", run.outcome);
  add(sec, add(gh, oc));
  if (run.gates.length > 0) {
    add(sec, table(["metric", "gate", "threshold", "actual", "outcome", "why"], run.gates.map(function (g) {
      return [g.metric, g.gate, g.threshold === null ? "\u2013" : String(g.threshold), fig(g.actual),
        el("span", g.held ? "pass" : "fail", g.held ? "held" : "failed"), g.held ? "" : g.message];
    }), [0, 0, 1, 1, 0, 0]));
  }
  add(sec, el("h3", "", "Run"));
  var dl = el("dl", "facts run");
  run.facts.forEach(function (f) { add(dl, el("dt", "", f[0]), el("dd", "", f[1])); });
  if (!run.units) add(dl, el("dt", "", "units"), el("dd", "", "not in the record: Scores only"));
  add(sec, dl);
  main.appendChild(sec);
});

// Charts: per metric the distribution of values, then the intervals.
(function () {
  var sec = el("section");
  sec.setAttribute("aria-label", "Charts");
  add(sec, el("h2", "", "Charts"));
  var box = add(el("div", "charts"));
  D.runs.forEach(function (run) {
    run.charts.forEach(function (c) {
      var W = 240, H = 110, P = 18, max = Math.max.apply(null, c.bins.concat([1]));
      var s = svg("svg", { width: W, height: H + 30, viewBox: "0 0 " + W + " " + (H + 30), role: "img" });
      var total = c.bins.reduce(function (x, y) { return x + y; }, 0);
      s.setAttribute("aria-label", "Distribution of " + c.metric + (run.label ? " in " + runName(run) : "") + ": " + total + " values");
      var bw = (W - 2 * P) / c.bins.length;
      c.bins.forEach(function (b, i) {
        var h = b / max * (H - 10);
        var r = svg("rect", { x: P + i * bw + 1, y: H - h, width: Math.max(bw - 2, 1), height: h }, "bar");
        add(r, add(svg("title", {}), document.createTextNode(b + " values")));
        s.appendChild(r);
      });
      s.appendChild(svg("line", { x1: P, y1: H, x2: W - P, y2: H }, "axis"));
      var lo = svg("text", { x: P, y: H + 12 }); lo.textContent = num(c.lo, 2); s.appendChild(lo);
      var hi = svg("text", { x: W - P, y: H + 12, "text-anchor": "end" }); hi.textContent = num(c.hi, 2); s.appendChild(hi);
      var sx = function (v) { return P + (v - c.lo) / (c.hi - c.lo || 1) * (W - 2 * P); };
      if (c.bounds) s.appendChild(svg("rect", { x: sx(c.bounds[0]), y: H + 17, width: Math.max(sx(c.bounds[1]) - sx(c.bounds[0]), 1), height: 8 }, "band"));
      if (c.ci95) s.appendChild(svg("line", { x1: sx(c.ci95[0]), y1: H + 21, x2: sx(c.ci95[1]), y2: H + 21 }, "ci"));
      if (c.mean !== null) s.appendChild(svg("circle", { cx: sx(c.mean), cy: H + 21, r: 3 }, "dot"));
      var fig = add(el("figure", "chart"), s);
      fig.style.margin = "0";
      add(fig, el("figcaption", "muted", c.metric + (run.label ? " (" + run.label + ")" : "") + ": mean " + num(c.mean) + " " + iv(c.ci95)));
      box.appendChild(fig);
    });
  });
  // The differences: B against A, or each target against the first.
  var deltas = D.diff ? D.diff.map(function (d) {
    return { metric: diffName(d), delta: d.delta, ci95: d.ci95, what: "B \u2212 A" };
  }) : [];
  (D.comparison || []).forEach(function (l) {
    l.versus.forEach(function (d) {
      deltas.push({ metric: l.metric, delta: d.delta, ci95: d.ci95, what: d.target + " \u2212 " + d.against });
    });
  });
  if (deltas.length > 0) {
    deltas.forEach(function (d) {
      var W = 240, H = 40, P = 18;
      var m = Math.max(0.05, Math.abs(d.delta || 0), d.ci95 ? Math.max(Math.abs(d.ci95[0]), Math.abs(d.ci95[1])) : 0);
      var sx = function (v) { return P + (v + m) / (2 * m) * (W - 2 * P); };
      var s = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" });
      s.setAttribute("aria-label", "Change of " + d.metric + ": delta " + num(d.delta) + " " + iv(d.ci95));
      s.appendChild(svg("line", { x1: sx(0), y1: 4, x2: sx(0), y2: 28 }, "zero"));
      if (d.ci95) s.appendChild(svg("line", { x1: sx(d.ci95[0]), y1: 16, x2: sx(d.ci95[1]), y2: 16 }, "ci"));
      if (d.delta !== null) s.appendChild(svg("circle", { cx: sx(d.delta), cy: 16, r: 4 }, "dot"));
      var t1 = svg("text", { x: P, y: 38 }); t1.textContent = num(-m, 2); s.appendChild(t1);
      var t2 = svg("text", { x: W - P, y: 38, "text-anchor": "end" }); t2.textContent = "+" + num(m, 2); s.appendChild(t2);
      var fig = add(el("figure", "chart"), s);
      fig.style.margin = "0";
      add(fig, el("figcaption", "muted", d.metric + ": " + d.what + " " + num(d.delta) + " " + iv(d.ci95)));
      box.appendChild(fig);
    });
  }
  main.appendChild(add(sec, box));
})();

// The paired diff.
if (D.diff) {
  var ds = el("section");
  ds.setAttribute("aria-label", "Diff");
  add(ds, el("h2", "", "B against A (paired by example)"));
  add(ds, table(["metric", "pairs", "mean A", "mean B", "delta", "95% interval", "improved", "regressed", "newly passing", "newly failing", "only A", "only B"],
    D.diff.map(function (d) {
      return [diffName(d), d.pairs, num(d.mean_a), num(d.mean_b), num(d.delta), iv(d.ci95), d.improved, d.regressed,
        d.newly_passing, el("span", d.newly_failing > 0 ? "fail" : "", String(d.newly_failing)), d.only_a, d.only_b];
    }), [0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1]));
  main.appendChild(ds);
}

// A matrix run: per metric each target's mean, each target against the first.
if (MATRIX) {
  var cs = el("section");
  cs.setAttribute("aria-label", "Comparison");
  add(cs, el("h2", "", "Targets against " + NAMES[0] + " (paired by example)"));
  var crows = [];
  D.comparison.forEach(function (l) {
    l.targets.forEach(function (t, i) {
      var d = i === 0 ? null : l.versus[i - 1];
      crows.push([l.metric, d ? t.target + " vs " + d.against : t.target, num(t.mean) + (t.ci95 ? " " + iv(t.ci95) : ""),
        d ? sg(d.delta) + (d.ci95 ? " " + ivs(d.ci95) : "") : "", d ? String(d.pairs) : "",
        d ? el("span", d.newly_failing > 0 ? "fail" : "", String(d.newly_failing)) : "", d ? String(d.newly_passing) : "",
        d ? String(d.improved) : "", d ? String(d.regressed) : ""]);
    });
  });
  add(cs, table(["metric", "target", "mean [95% CI]", "\u0394 vs first [95% CI]", "pairs", "pass\u2192fail", "fail\u2192pass", "improved", "regressed"],
    crows, [0, 0, 1, 1, 1, 1, 1, 1, 1]));
  main.appendChild(cs);
}

// The cases: with two runs one column per metric ("A \u2192 B" where they
// differ); in a matrix one per metric and target.
var SIDES = MATRIX ? NAMES.length : 1;
function sideOf(r, k) { return (MATRIX ? (k === 0 ? r.a : r.rest[k - 1]) : TWO ? r.b || r.a : r.a) || { s: [] }; }
function sidesOf(r) { return MATRIX ? [r.a].concat(r.rest) : TWO ? [r.a, r.b] : [r.a]; }
var cols = [{ name: "unit", w: "minmax(180px,2fr)", key: function (r) { return r.id; } }];
if (TWO || MATRIX) cols.push({ name: "change", w: "120px", key: function (r) { return r.ch; } });
M.forEach(function (m, i) {
  for (var k = 0; k < SIDES; k++) (function (k) {
    cols.push({ name: MATRIX ? m + " \u00b7 " + NAMES[k] : m, w: "minmax(110px,1fr)", metric: i, side: k,
      key: function (r) { return verdict(sideOf(r, k).s[i]).key; } });
  })(k);
});
for (var k = 0; k < SIDES; k++) (function (k) {
  cols.push({ name: MATRIX ? "latency \u00b7 " + NAMES[k] : "latency", w: "100px", numeric: true, side: k,
    key: function (r) { var ms = msOf(sideOf(r, k)); return ms === undefined ? Infinity : ms; } });
})(k);

var cases = el("section");
cases.setAttribute("aria-label", "Cases");
add(cases, el("h2", "", "Cases"));
var controls = el("div", "controls");
function labelled(text, control) { var l = el("label", "", text); l.appendChild(control); return l; }
function select(options) {
  var s = el("select");
  options.forEach(function (o) { var e = el("option", "", o[1]); e.value = o[0]; s.appendChild(e); });
  return s;
}
var fMetric = select([["", "all metrics"]].concat(M.map(function (m, i) { return [String(i), m]; })));
var fStatus = select([["", "any status"]].concat(STATUSES.map(function (s) { return [s, s]; })));
var fPass = select([["", "pass or fail"], ["pass", "passed"], ["fail", "failed"]]);
var fChange = TWO || MATRIX ? select([["", "any change"], ["-1", "newly failing"], ["1", "newly passing"], ["0", "neither"]]) : null;
var fText = el("input");
fText.type = "search";
fText.placeholder = "search input and output";
fText.setAttribute("aria-label", "Search input and output");
var count = el("span", "muted");
count.setAttribute("aria-live", "polite");
count.id = "count";
add(controls, labelled("metric ", fMetric), labelled("status ", fStatus), labelled("verdict ", fPass),
  fChange && labelled("change ", fChange), fText, count);
fMetric.id = "f-metric"; fStatus.id = "f-status"; fPass.id = "f-pass"; fText.id = "f-text";
if (fChange) fChange.id = "f-change";
add(cases, controls);

var grid = el("div", "grid");
grid.id = "grid";
grid.tabIndex = 0;
grid.setAttribute("role", "grid");
grid.setAttribute("aria-readonly", "true");
grid.setAttribute("aria-label", "Cases: arrow keys move, Enter opens a case");
grid.style.setProperty("--cols", cols.map(function (c) { return c.w; }).join(" "));
grid.style.setProperty("--width", (180 + (cols.length - 1) * 110) + "px");
var gh = el("div", "gh");
gh.setAttribute("role", "row");
var sort = { col: -1, dir: 1 };
var heads = cols.map(function (c, i) {
  var cell = el("span");
  cell.setAttribute("role", "columnheader");
  cell.setAttribute("aria-sort", "none");
  var b = el("button", "", c.name);
  b.type = "button";
  b.setAttribute("data-col", String(i));
  b.addEventListener("click", function () { sortBy(i); });
  cell.appendChild(b);
  gh.appendChild(cell);
  return cell;
});
var gb = el("div", "gb");
gb.setAttribute("role", "rowgroup");
add(grid, gh, gb);
add(cases, grid);
main.appendChild(cases);

var view = [];
var cursor = 0, hay = null, order = null;
function passOf(s) { return s ? s.p : undefined; }
function matches(r) {
  var mi = fMetric.value === "" ? -1 : Number(fMetric.value);
  var st = fStatus.value, pf = fPass.value;
  if (fChange && fChange.value !== "" && String(r.ch) !== fChange.value) return false;
  var units = sidesOf(r);
  if (st !== "" || pf !== "" || mi >= 0) {
    var any = false, failed = false, passed = false;
    for (var k = 0; k < units.length; k++) {
      var u = units[k];
      if (!u) continue;
      if (TWO && k === 0 && r.b) continue; // B's verdicts decide, A's only where B has none
      for (var i = 0; i < M.length; i++) {
        if (mi >= 0 && i !== mi) continue;
        var s = u.s[i];
        if (!s) continue;
        if (st !== "" && stOf(s) !== st) continue;
        any = true;
        if (passOf(s) === false) failed = true;
        if (passOf(s) === true) passed = true;
      }
    }
    if (!any) return false;
    if (pf === "fail" && !failed) return false;
    if (pf === "pass" && (failed || !passed)) return false;
  }
  return true;
}
function text(r) {
  var parts = [r.id];
  sidesOf(r).forEach(function (u) { if (u) parts.push(show(u.in), show(u.out), u.tc ? clean(u.tc.join("\n")) : ""); });
  return fold(parts.join("\n"));
}
// Search reads text in NFKC: an accent typed as one code point finds it
// written apart (NFD), and plain letters find full-width ones.
function fold(t) { return t.toLowerCase().normalize("NFKC"); }
function refilter() {
  var q = fold(fText.value.trim());
  if (q !== "" && hay === null) hay = ROWS.map(text);
  var active = q !== "" || fMetric.value !== "" || fStatus.value !== "" || fPass.value !== "" ||
    (fChange !== null && fChange.value !== "");
  var base = order;
  if (base === null) {
    base = new Array(ROWS.length);
    for (var i = 0; i < ROWS.length; i++) base[i] = i;
  }
  view = !active ? base.slice() : base.filter(function (i) {
    return (q === "" || hay[i].indexOf(q) >= 0) && matches(ROWS[i]);
  });
  cursor = Math.min(cursor, Math.max(view.length - 1, 0));
  count.textContent = view.length + " of " + ROWS.length + " cases";
  grid.setAttribute("aria-rowcount", String(view.length + 1));
  gb.style.height = view.length * RH + "px";
  grid.scrollTop = 0;
  draw(true);
}
function sortBy(i) {
  sort.dir = sort.col === i ? -sort.dir : 1;
  sort.col = i;
  var key = cols[i].key;
  var keys = ROWS.map(function (r) { return key(r); });
  order = ROWS.map(function (_, j) { return j; });
  var dir = sort.dir;
  order.sort(function (x, y) {
    var a = keys[x], b = keys[y];
    if (a === b) return x - y;
    if (typeof a === "string" && typeof b === "string") return (a < b ? -1 : a > b ? 1 : 0) * dir || x - y;
    return ((a > b ? 1 : -1) * dir) || x - y;
  });
  heads.forEach(function (h, j) { h.setAttribute("aria-sort", j === i ? (dir > 0 ? "ascending" : "descending") : "none"); });
  refilter();
}
var drawn = -1;
function rowEl(vi) {
  var r = ROWS[view[vi]];
  var e = el("div", "gr" + (vi === cursor ? " cur" : ""));
  e.setAttribute("role", "row");
  e.id = "row-" + vi;
  e.setAttribute("data-unit", r.id);
  e.style.top = vi * RH + "px";
  add(e, el("span", "", r.id));
  if (TWO || MATRIX) add(e, el("span", r.ch === -1 ? "fail" : r.ch === 1 ? "pass" : "muted", r.ch === -1 ? "newly failing" : r.ch === 1 ? "newly passing" : ""));
  for (var i = 0; i < M.length; i++) {
    for (var k = 0; k < SIDES; k++) {
      var vb = verdict(sideOf(r, k).s[i]);
      var txt = vb.text;
      if (TWO && r.a && r.b) {
        var va = verdict(r.a.s[i]);
        if (va.text !== vb.text) txt = va.text + " \u2192 " + vb.text;
      }
      add(e, el("span", vb.cls, txt));
    }
  }
  for (var k = 0; k < SIDES; k++) {
    var ms = msOf(sideOf(r, k));
    add(e, el("span", "n", ms === undefined ? "" : Math.round(ms) + " ms"));
  }
  e.addEventListener("click", function () { cursor = vi; draw(true); open(vi); });
  return e;
}
function draw(force) {
  var top = Math.max(0, grid.scrollTop - gh.offsetHeight);
  var first = Math.max(0, Math.floor(top / RH) - 5);
  var n = Math.ceil(grid.clientHeight / RH) + 10;
  if (!force && first === drawn) return;
  drawn = first;
  var frag = document.createDocumentFragment();
  for (var vi = first; vi < Math.min(view.length, first + n); vi++) frag.appendChild(rowEl(vi));
  gb.replaceChildren(frag);
  if (view.length > 0) grid.setAttribute("aria-activedescendant", "row-" + cursor);
  else grid.removeAttribute("aria-activedescendant");
}
var pending = false;
grid.addEventListener("scroll", function () {
  if (pending) return;
  pending = true;
  requestAnimationFrame(function () { pending = false; draw(false); });
});
function moveTo(vi) {
  if (view.length === 0) return;
  cursor = Math.max(0, Math.min(view.length - 1, vi));
  var y = cursor * RH, h = grid.clientHeight - gh.offsetHeight;
  if (y < grid.scrollTop) grid.scrollTop = y;
  else if (y + RH > grid.scrollTop + h) grid.scrollTop = y + RH - h;
  draw(true);
}
grid.addEventListener("keydown", function (ev) {
  var page = Math.max(1, Math.floor(grid.clientHeight / RH) - 2);
  var k = ev.key;
  if (k === "ArrowDown") moveTo(cursor + 1);
  else if (k === "ArrowUp") moveTo(cursor - 1);
  else if (k === "PageDown") moveTo(cursor + page);
  else if (k === "PageUp") moveTo(cursor - page);
  else if (k === "Home") moveTo(0);
  else if (k === "End") moveTo(view.length - 1);
  else if (k === "Enter" || k === " ") { if (view.length > 0) open(cursor); }
  else return;
  ev.preventDefault();
});
var timer = 0;
fText.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(refilter, 120); });
[fMetric, fStatus, fPass, fChange].forEach(function (s) { if (s) s.addEventListener("change", refilter); });

// A case's detail.
var detail = el("section");
detail.id = "detail";
detail.hidden = true;
detail.tabIndex = -1;
detail.setAttribute("role", "dialog");
detail.setAttribute("aria-label", "Case detail");
document.body.appendChild(detail);
function block(parent, title, value) {
  if (value === undefined) return;
  add(parent, el("h3", "", title), el("pre", "v", show(value)));
}
function scoreEl(s, metric) {
  var box = el("div", "score");
  var v = verdict(s);
  add(box, add(el("p"), el("strong", "", metric + " "), el("span", v.cls, v.text)));
  add(box, el("p", "muted", "status " + stOf(s) + ", validity " + vaOf(s) + ", value " + (s.v === null ? "null" : String(s.v)) +
    (s.p === undefined ? "" : ", passed " + s.p) + ", " + D.evaluators[s.ev]));
  if (s.r !== undefined) add(box, el("p", "", s.r));
  if (s.d && s.d.length > 0) {
    var ul = el("ul");
    s.d.forEach(function (d) {
      add(ul, el("li", d.severity === "error" ? "fail" : d.severity === "warning" ? "warn" : "",
        d.severity + " " + d.code + ": " + d.message + (d.location ? " (" + d.location + ")" : "")));
    });
    add(box, ul);
  }
  return box;
}
function side(u, label) {
  var col = el("div");
  if (label) add(col, el("h3", "", label));
  if (!u) { add(col, el("p", "muted", "not in this run")); return col; }
  block(col, "Output", u.out);
  if (u.tc) {
    add(col, el("h3", "", "Tool calls (" + u.tc.length + ")"));
    var ol = el("ol", "calls");
    u.tc.forEach(function (c) { add(ol, add(el("li"), el("pre", "v", c))); });
    add(col, ol);
  }
  add(col, el("h3", "", "Scores"));
  var any = false;
  for (var i = 0; i < M.length; i++) if (u.s[i]) { any = true; add(col, scoreEl(u.s[i], M[i])); }
  if (!any) add(col, el("p", "muted", "no Scores"));
  if (u.t !== undefined) {
    add(col, el("h3", "", "Target"));
    var dl = el("dl", "facts");
    if (u.t && typeof u.t === "object") {
      Object.keys(u.t).forEach(function (k) {
        var v = u.t[k];
        add(dl, el("dt", "", k), el("dd", "", typeof v === "string" ? v : JSON.stringify(v)));
      });
    }
    add(col, dl);
  }
  return col;
}
var opener = null;
function open(vi) {
  var r = ROWS[view[vi]];
  opener = document.activeElement;
  detail.replaceChildren();
  var close = el("button", "", "Close");
  close.type = "button";
  close.id = "close";
  close.addEventListener("click", shut);
  var h = el("h2", "", r.id);
  h.id = "detail-title";
  detail.setAttribute("aria-labelledby", "detail-title");
  add(detail, add(el("div", "dh"), add(el("div"), h, el("p", "muted", "example " + (r.ex === undefined ? r.id : r.ex) + (r.ep !== undefined ? ", epoch " + r.ep : "") +
    (TWO || MATRIX ? (r.ch === -1 ? ", newly failing" : r.ch === 1 ? ", newly passing" : "") : ""))), close));
  var u = MATRIX ? sidesOf(r).filter(function (x) { return x; })[0] || { s: [] } : (TWO ? r.b || r.a : r.a) || { s: [] };
  block(detail, "Input", u.in);
  if (Array.isArray(u.ctx)) {
    add(detail, el("h3", "", "Context"));
    u.ctx.forEach(function (c) { add(detail, el("pre", "v", show(c))); });
  } else block(detail, "Context", u.ctx);
  block(detail, "Expected", u.exp);
  block(detail, "Metadata", u.meta);
  if (u.in === undefined && u.out === undefined) add(detail, el("p", "muted", "The record holds no inputs or outputs: Scores only."));
  var sides = el("div", "side");
  if (TWO) { sides.style.setProperty("--sides", "2"); add(sides, side(r.a, "Run A"), side(r.b, "Run B")); }
  else if (MATRIX) {
    sides.style.setProperty("--sides", String(Math.min(SIDES, 3)));
    sidesOf(r).forEach(function (x, k) { add(sides, side(x, "Target " + NAMES[k])); });
  } else add(sides, side(r.a, ""));
  add(detail, sides);
  detail.hidden = false;
  detail.focus();
}
function shut() {
  detail.hidden = true;
  detail.replaceChildren();
  (opener && opener !== document.body && opener.focus ? opener : grid).focus();
}
document.addEventListener("keydown", function (ev) {
  if (ev.key === "Escape" && !detail.hidden) { ev.preventDefault(); shut(); }
});

refilter();
document.documentElement.setAttribute("data-ready", "1");
})();
`;
