// golden-gate's report page. Every string from the report is set with textContent (the page's
// policy requires Trusted Types, so an HTML sink given a string would throw, not render).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("gg-data").textContent);
  var items = data.items;
  var PAGE = 100;
  var RANK = { regressed: 0, errored: 1, "failing-both": 2, failing: 3, unstable: 4, improved: 5, "new": 6, removed: 7 };
  var LABEL = {
    regressed: "regressed", improved: "improved", errored: "errors", "failing-both": "failing in both",
    failing: "failing", unstable: "unstable", "new": "new", removed: "only in the baseline"
  };
  var SVG = "http://www.w3.org/2000/svg";
  var state = { status: "", tag: "", evaluator: "", q: "", sort: "status", page: 0, open: "" };
  var shown = [];
  var haystacks = null; // lower-cased searchable text, made on the first search

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function $(id) { return document.getElementById(id); }

  function statusOf(item) {
    var best = null;
    for (var i = 0; i < item.f.length; i++) {
      var f = item.f[i];
      if (RANK[f] !== undefined && (best === null || RANK[f] < RANK[best])) best = f;
    }
    return best || "passing";
  }
  function score(side) { return side && side.r ? side.p / side.r : null; }
  function delta(item) {
    var a = score(item), b = score(item.b);
    return a === null || b === null ? 0 : a - b;
  }
  function outcome(side) {
    if (!side || side.rm) return "—";
    if (!side.r) return "no verdict";
    return (side.p * 2 > side.r ? "pass" : "fail") + " " + side.p + "/" + side.r;
  }

  // --- the header -------------------------------------------------------------------------
  function header() {
    var verdict = $("verdict");
    verdict.textContent = data.verdict;
    verdict.classList.add(data.verdict);
    $("headline").textContent = data.headline;
    var figures = $("figures");
    data.figures.forEach(function (pair) {
      figures.appendChild(el("dt", "", pair[0]));
      figures.appendChild(el("dd", "", pair[1]));
    });
    data.notes.forEach(function (note) { $("notes").appendChild(el("li", "", note)); });
    var body = document.querySelector("#tags tbody");
    var tagSelect = $("f-tag");
    function meterCell(n, k) {
      var td = el("td");
      if (!n) { td.textContent = "—"; return td; }  // no counted item: no rate
      var rate = n ? k / n : 0;
      var meter = el("meter");
      // Coloured by rate: green at or above the floor (0.8 when it is off), amber within 20
      // points below it, red further down; never green for a low rate.
      var good = data.floor > 0 ? data.floor : 0.8;
      meter.min = 0; meter.max = 1; meter.optimum = 1;
      meter.high = good; meter.low = Math.max(0, good - 0.2);
      meter.value = rate;
      td.appendChild(meter);
      td.appendChild(document.createTextNode(" " + (rate * 100).toFixed(1) + "%"));
      return td;
    }
    data.tags.forEach(function (t) {
      var tr = el("tr");
      tr.appendChild(el("td", "", t[0]));
      tr.appendChild(el("td", "", t[1]));
      tr.appendChild(el("td", "", t[2]));
      tr.appendChild(meterCell(t[1], t[2]));
      if (data.baseline) {
        tr.appendChild(meterCell(t[3], t[4]));
        tr.appendChild(el("td", t[5] ? "st-regressed" : "", t[5]));
        tr.appendChild(el("td", t[6] ? "st-improved" : "", t[6]));
      }
      body.appendChild(tr);
      var option = el("option", "", t[0]);
      option.value = t[0];
      tagSelect.appendChild(option);
    });
    if (!data.baseline) {
      document.querySelectorAll("#tags .base-col").forEach(function (th) { th.remove(); });
    }
    if (data.trend) trend(data.trend);
    if (data.retrieval) retrievalBox(data.retrieval);
    data.evaluators.forEach(function (name) {
      var option = el("option", "", name);
      option.value = name;
      $("f-evaluator").appendChild(option);
    });
    if (!data.baseline) {
      ["changed", "regressed", "improved", "failing-both", "new", "removed"].forEach(function (value) {
        var option = document.querySelector('#f-status option[value="' + value + '"]');
        if (option) option.disabled = true;
      });
    }
    if (!data.retrieval || !data.retrieval.test) {
      document.querySelector('#f-status option[value="retrieval-fell"]').disabled = true;
    }
  }

  // The retrieval layer: hit@k, MRR and recall@k beside the baseline's, and what it decided.
  function pct(v) { return v === null || v === undefined ? "—" : (v * 100).toFixed(1) + "%"; }
  function retrievalBox(r) {
    var box = $("retrieval-box");
    var figures = $("retrieval");
    function row(name, now, base) {
      figures.appendChild(el("dt", "", name));
      figures.appendChild(el("dd", "", now + (data.baseline ? " (baseline " + base + ")" : "")));
    }
    var now = r.now, base = r.base;
    if (now) {
      row("hit@" + r.k, pct(now[0]), base ? pct(base[0]) : "—");
      row("MRR", now[1].toFixed(3), base ? base[1].toFixed(3) : "—");
      row("recall@" + r.k, pct(now[2]), base ? pct(base[2]) : "—");
      row("items measured", String(now[3]), base ? String(base[3]) : "—");
    }
    if (r.bound !== null && r.bound !== undefined) {
      figures.appendChild(el("dt", "", "hit@" + r.k + " lower bound"));
      figures.appendChild(el("dd", "", r.bound.toFixed(4) + (r.floor ? " (floor " + r.floor.toFixed(2) + ")" : " (no floor)")));
    }
    if (r.test) {
      figures.appendChild(el("dt", "", "vs baseline"));
      figures.appendChild(el("dd", "", "hit@" + r.k + " fell for " + r.test[0] + ", rose for " + r.test[1] +
        " of " + r.test[2] + " shared; p = " + Number(r.test[3].toPrecision(4))));
    }
    if (r.without) {
      figures.appendChild(el("dt", "", "without sources"));
      figures.appendChild(el("dd", "", r.without + " item(s) with expected pages returned no sources"));
    }
    r.reasons.forEach(function (reason) { $("retrieval-notes").appendChild(el("li", "st-fail", reason)); });
    r.notes.forEach(function (note) { $("retrieval-notes").appendChild(el("li", "muted", note)); });
    box.hidden = false;
  }

  // The trend as an SVG line chart (drawn with DOM calls: no markup is parsed), and a table
  // of the same numbers for who cannot read the chart.
  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    return node;
  }
  function trend(t) {
    var W = 640, H = 220, L = 40, R = 36, T = 10, B = 40;
    var n = t.points.length;
    var x = function (i) { return L + (n > 1 ? i * (W - L - R) / (n - 1) : (W - L - R) / 2); };
    var y = function (v) { return T + (1 - Math.max(0, Math.min(1, v))) * (H - T - B); };
    var chart = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "pass rate over time" });
    [0, 0.25, 0.5, 0.75, 1].forEach(function (v) {
      chart.appendChild(svg("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), "class": "axis" }));
      var label = svg("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end" });
      label.textContent = (v * 100) + "%";
      chart.appendChild(label);
    });
    chart.appendChild(svg("line", { x1: L, x2: W - R, y1: y(t.floor), y2: y(t.floor), stroke: "#cf222e", "stroke-dasharray": "4 3" }));
    [[1, "#0969da"], [2, "#8c959f"]].forEach(function (series) {
      var d = t.points.map(function (p, i) { return (i ? "L" : "M") + x(i).toFixed(1) + " " + y(p[series[0]]).toFixed(1); }).join(" ");
      chart.appendChild(svg("path", { d: d, fill: "none", stroke: series[1], "stroke-width": 2 }));
      t.points.forEach(function (p, i) {
        var dot = svg("circle", { cx: x(i), cy: y(p[series[0]]), r: 3, fill: series[1] });
        var tip = svg("title", {});
        tip.textContent = p[0] + ": " + (p[series[0]] * 100).toFixed(1) + "%";
        dot.appendChild(tip);
        chart.appendChild(dot);
      });
    });
    t.points.forEach(function (p, i) {
      var label = svg("text", { x: x(i), y: H - B + 16, "text-anchor": "middle" });
      label.textContent = p[0];
      chart.appendChild(label);
    });
    $("trend").appendChild(chart);
    var legend = el("p", "muted");
    legend.appendChild(el("span", "legend-rate", "— pass rate "));
    legend.appendChild(el("span", "legend-bound", "— lower bound "));
    legend.appendChild(el("span", "legend-floor", "- - floor " + (t.floor * 100).toFixed(1) + "%"));
    $("trend").appendChild(legend);
    var body = document.querySelector("#trend-table tbody");
    t.points.forEach(function (p) {
      var tr = el("tr");
      tr.appendChild(el("td", "", p[0]));
      tr.appendChild(el("td", "", (p[1] * 100).toFixed(1) + "%"));
      tr.appendChild(el("td", "", (p[2] * 100).toFixed(1) + "%"));
      body.appendChild(tr);
    });
    $("trend-box").hidden = false;
  }

  // --- filtering, sorting, paging -----------------------------------------------------------
  function haystack(i) {
    if (haystacks === null) haystacks = new Array(items.length);
    var text = haystacks[i];
    if (text === undefined) {
      var item = items[i];
      text = [item.id, item.q || "", item.a || "", item.why || "", item.b ? item.b.a || "" : ""]
        .join("\n").toLowerCase();
      haystacks[i] = text;
    }
    return text;
  }

  function filter() {
    var q = state.q.toLowerCase().trim();
    var result = [];
    for (var i = 0; i < items.length; i++) {
      var item = items[i];
      if (state.status) {
        if (state.status === "changed") {
          if (item.f.indexOf("regressed") < 0 && item.f.indexOf("improved") < 0) continue;
        } else if (item.f.indexOf(state.status) < 0) continue;
      }
      if (state.tag && item.tags.indexOf(state.tag) < 0) continue;
      if (state.evaluator && (!item.ev || item.ev.indexOf(state.evaluator) < 0)) continue;
      if (q && haystack(i).indexOf(q) < 0) continue;
      result.push(i);
    }
    var key;
    if (state.sort === "id") key = null;
    else if (state.sort === "score") key = function (i) { var s = items[i].rm ? null : score(items[i]); return s === null ? (items[i].rm ? 2 : -1) : s; };
    else if (state.sort === "delta") key = function (i) { return delta(items[i]); };
    else key = function (i) { var s = statusOf(items[i]); return RANK[s] === undefined ? 99 : RANK[s]; };
    result.sort(function (x, y) {
      if (key) { var d = key(x) - key(y); if (d) return d; }
      var a = items[x].id, b = items[y].id;
      return a < b ? -1 : a > b ? 1 : 0;
    });
    shown = result;
  }

  function tagList(tags) {
    var td = el("td");
    tags.forEach(function (t) { td.appendChild(el("span", "tag", t)); });
    return td;
  }

  function draw() {
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    if (state.page < 0) state.page = 0;
    var body = document.querySelector("#items tbody");
    var rows = [];
    var start = state.page * PAGE;
    for (var n = start; n < Math.min(shown.length, start + PAGE); n++) {
      var item = items[shown[n]];
      var tr = el("tr", "row");
      tr.dataset.index = String(shown[n]);
      var idCell = el("td");
      var button = el("button", "", item.id);
      button.type = "button";
      idCell.appendChild(button);
      tr.appendChild(idCell);
      var status = statusOf(item);
      tr.appendChild(el("td", "status st-" + status, LABEL[status] || "passing"));
      tr.appendChild(el("td", "", outcome(item)));
      tr.appendChild(el("td", "", item.b ? outcome(item.b) : "—"));
      tr.appendChild(tagList(item.tags));
      tr.appendChild(el("td", "why", item.why || ""));
      rows.push(tr);
      if (state.open === item.id) {
        tr.classList.add("open");
        rows.push(detailRow(item));
      }
    }
    body.replaceChildren.apply(body, rows);
    $("count").textContent = shown.length + " of " + items.length + " items" +
      (shown.length > PAGE ? " (" + PAGE + " a page)" : "");
    $("page").textContent = "page " + (state.page + 1) + " of " + pages;
    $("prev").disabled = state.page === 0;
    $("next").disabled = state.page >= pages - 1;
  }

  // --- one item's details ----------------------------------------------------------------
  function words(text) { return (text || "").match(/\S+/g) || []; }

  // A word-level diff (longest common subsequence); null when the answers are too long.
  function wordDiff(a, b) {
    var x = words(a), y = words(b), n = x.length, m = y.length;
    if ((n + 1) * (m + 1) > 4000000) return null;
    var w = m + 1, table = new Uint32Array((n + 1) * w);
    for (var i = n - 1; i >= 0; i--) {
      for (var j = m - 1; j >= 0; j--) {
        table[i * w + j] = x[i] === y[j] ? table[(i + 1) * w + j + 1] + 1
          : Math.max(table[(i + 1) * w + j], table[i * w + j + 1]);
      }
    }
    var ops = [];
    i = 0; j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[i] === y[j]) { ops.push(["=", x[i]]); i++; j++; }
      else if (j < m && (i === n || table[i * w + j + 1] >= table[(i + 1) * w + j])) { ops.push(["+", y[j]]); j++; }
      else { ops.push(["-", x[i]]); i++; }
    }
    return ops;
  }

  function diffBlock(a, b) {
    var box = el("div", "wdiff");
    var ops = wordDiff(a, b);
    if (ops === null) { box.textContent = "(the answers are too long for a word diff)"; return box; }
    // Runs of one kind together: a deleted sentence is one <del>, not one a word.
    var k = 0;
    while (k < ops.length) {
      var kind = ops[k][0], run = [];
      while (k < ops.length && ops[k][0] === kind) { run.push(ops[k][1]); k++; }
      if (box.childNodes.length) box.appendChild(document.createTextNode(" "));
      if (kind === "=") box.appendChild(document.createTextNode(run.join(" ")));
      else box.appendChild(el(kind === "+" ? "ins" : "del", "", run.join(" ")));
    }
    return box;
  }

  function runBlock(run, number, total) {
    var box = el("div", "run");
    var title = total > 1 ? "run " + (number + 1) + ": " : "";
    box.appendChild(el("h4", "st-" + run.st, title + run.st + (run.rerun ? " (diagnostic re-run, not counted)" : "")));
    if (run.a !== undefined) box.appendChild(el("div", "answer", run.a));
    if (run.err) box.appendChild(el("p", "st-error", run.err));
    if (run.ch) {
      var checks = el("ul", "checks");
      run.ch.forEach(function (c) {
        checks.appendChild(el("li", c[1] ? "st-pass" : "st-fail",
          "check " + c[0] + ": " + (c[1] ? "passed" : "failed") + (c[2] ? " — " + c[2] : "")));
      });
      box.appendChild(checks);
    }
    if (run.v) {
      box.appendChild(el("p", "judge " + (run.v[0] ? "st-pass" : "st-fail"),
        "judge: " + (run.v[0] ? "pass" : "fail") + (run.v[1] !== null && run.v[1] !== undefined ? " (score " + run.v[1] + ")" : "") +
        (run.v[2] ? " — " + run.v[2] : "")));
    }
    if (run.ev) {
      var evals = el("ul", "evals");
      run.ev.forEach(function (e) {
        var li = el("li", "judge st-" + e[1], e[0] + ": " + e[1] + (e[3] !== null && e[3] !== undefined ? " (score " + e[3] + ")" : "") + (e[2] ? " — " + e[2] : ""));
        if (e[4] && e[4].length > 1) {
          var votes = el("ul");
          e[4].forEach(function (v) {
            votes.appendChild(el("li", "", v[0] + ": " + (v[1] === null ? "no vote (" + (v[3] || "error") + ")" : v[1] ? "pass" : "fail") + (v[2] ? " — " + v[2] : "")));
          });
          li.appendChild(votes);
        }
        evals.appendChild(li);
      });
      box.appendChild(evals);
    }
    if (run.src) {
      box.appendChild(el("h4", "", "retrieved sources, by rank"));
      var sources = el("ol", "sources");
      run.src.forEach(function (s) { sources.appendChild(el("li", "", s)); });
      box.appendChild(sources);
    }
    if (run.tc) {
      box.appendChild(el("h4", "", "tool calls"));
      box.appendChild(callList(run.tc));
    }
    if (run.tn) {
      box.appendChild(el("h4", "", "conversation, turn by turn"));
      var turns = el("ol", "turns");
      run.tn.forEach(function (t) {
        var failed = run.ft === t[0];
        var li = el("li", "turn" + (failed ? " failed-turn" : ""));
        li.value = t[0];
        li.appendChild(el("p", "st-" + t[2], "turn " + t[0] + ": " + t[2] + (failed ? " — the first turn that did not pass" : "")));
        li.appendChild(el("div", "answer question", t[1]));
        li.appendChild(el("div", "answer", t[3] === null || t[3] === undefined ? "(no answer)" : t[3]));
        if (t[4]) li.appendChild(el("p", "why", "why: " + t[4]));
        if (t[5]) li.appendChild(callList(t[5]));
        turns.appendChild(li);
      });
      box.appendChild(turns);
    }
    if (run.x) {
      box.appendChild(el("h4", "", "other recorded fields"));
      box.appendChild(el("pre", "", run.x));
    }
    return box;
  }

  function callList(calls) {
    if (!calls.length) return el("p", "muted", "no tool called");
    var list = el("ol", "calls");
    calls.forEach(function (c) {
      list.appendChild(el("li", "", c[0] + "(" + (c[1] && c[1] !== "{}" ? c[1] : "") + ")"));
    });
    return list;
  }

  function ranksText(runs) {
    if (runs === null || runs === undefined) return "—";
    if (!runs.length) return "no sources returned";
    return runs.map(function (r) { return r === null ? "not returned" : String(r); }).join(", ");
  }

  // The expected pages' ranks this run and in the baseline (one figure a run that returned
  // sources), and the expected tool calls: what the item asked for beside what it got.
  function expectations(item) {
    var box = el("div", "expected");
    var k = data.retrieval ? data.retrieval.k : "k";
    if (item.rt) {
      box.appendChild(el("h3", "", "Retrieval: expected pages by rank" +
        (item.f.indexOf("retrieval-fell") >= 0 ? " (hit@" + k + " fell)" : "")));
      var table = el("table", "ranks");
      var head = el("tr");
      ["expected page", "rank this run", "rank in the baseline"].forEach(function (h) { head.appendChild(el("th", "", h)); });
      table.appendChild(head);
      item.rt.e.forEach(function (page) {
        var tr = el("tr");
        tr.appendChild(el("td", "url", page[0]));
        tr.appendChild(el("td", "", ranksText(page[1])));
        tr.appendChild(el("td", "", data.baseline ? ranksText(page[2]) : "—"));
        table.appendChild(tr);
      });
      box.appendChild(table);
      box.appendChild(el("p", "muted", "hit@" + k + ": " + pct(item.rt.h[0]) +
        (data.baseline ? " (baseline " + pct(item.rt.h[1]) + ")" : "") + "; each run's sources are listed below, in rank order"));
    }
    if (item.xt) {
      box.appendChild(el("h3", "", "Expected tool calls"));
      if (!item.xt.length) box.appendChild(el("p", "muted", "none"));
      else {
        var list = el("ol", "calls");
        item.xt.forEach(function (c) { list.appendChild(el("li", "", c)); });
        box.appendChild(list);
      }
    }
    return box;
  }

  function sideBlock(title, side, missing) {
    var col = el("section", "side");
    col.appendChild(el("h3", "", title + ": " + outcome(side)));
    if (!side) { col.appendChild(el("p", "muted", missing)); return col; }
    col.appendChild(el("div", "answer", side.a === null || side.a === undefined ? "(no answer)" : side.a));
    if (side.why) col.appendChild(el("p", "why", "why: " + side.why));
    side.runs.forEach(function (run, k) { col.appendChild(runBlock(run, k, side.runs.length)); });
    return col;
  }

  function detailRow(item) {
    var tr = el("tr", "detail-row");
    var td = el("td", "detail");
    td.colSpan = 6;
    td.appendChild(el("h3", "", "Question"));
    td.appendChild(el("div", "answer question", item.q || "(not recorded)"));
    if (item.rt || item.xt) td.appendChild(expectations(item));
    var pair = el("div", "pair");
    if (data.baseline) pair.appendChild(sideBlock("Baseline", item.b, "not in the baseline"));
    pair.appendChild(sideBlock("This run", item.rm ? null : item, "not in this run: the item is only in the baseline"));
    td.appendChild(pair);
    if (item.b && !item.rm) {
      td.appendChild(el("h3", "", "Word-level diff, baseline → this run"));
      td.appendChild(diffBlock(item.b.a, item.a));
    }
    tr.appendChild(td);
    return tr;
  }

  // --- state in the URL's fragment, so a view can be linked and reloaded ------------------
  function readHash() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    state.status = params.get("status") || "";
    state.tag = params.get("tag") || "";
    state.evaluator = params.get("evaluator") || "";
    state.q = params.get("q") || "";
    state.sort = params.get("sort") || "status";
    state.page = Math.max(0, (parseInt(params.get("page") || "1", 10) || 1) - 1);
    state.open = params.get("open") || "";
    $("f-status").value = state.status;
    $("f-tag").value = state.tag;
    $("f-evaluator").value = state.evaluator;
    $("f-search").value = state.q;
    $("f-sort").value = state.sort;
  }
  function writeHash() {
    var params = new URLSearchParams();
    ["status", "tag", "evaluator", "q", "open"].forEach(function (k) { if (state[k]) params.set(k, state[k]); });
    if (state.sort !== "status") params.set("sort", state.sort);
    if (state.page) params.set("page", String(state.page + 1));
    var hash = params.toString();
    history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
  }
  // With `open` set and no page given, the page that holds the open item.
  function pageOfOpen() {
    if (!state.open) return;
    for (var n = 0; n < shown.length; n++) {
      if (items[shown[n]].id === state.open) { state.page = Math.floor(n / PAGE); return; }
    }
  }

  function refresh(keepPage) {
    filter();
    if (!keepPage) state.page = 0;
    draw();
    writeHash();
  }

  function bind() {
    [["f-status", "status"], ["f-tag", "tag"], ["f-evaluator", "evaluator"], ["f-sort", "sort"]].forEach(function (pair) {
      $(pair[0]).addEventListener("change", function (event) { state[pair[1]] = event.target.value; refresh(false); });
    });
    var timer = null;
    $("f-search").addEventListener("input", function (event) {
      clearTimeout(timer);
      timer = setTimeout(function () { state.q = event.target.value; refresh(false); }, 150);
    });
    $("filters").addEventListener("submit", function (event) { event.preventDefault(); });
    $("prev").addEventListener("click", function () { state.page--; draw(); writeHash(); });
    $("next").addEventListener("click", function () { state.page++; draw(); writeHash(); });
    document.querySelector("#items tbody").addEventListener("click", function (event) {
      var tr = event.target.closest("tr.row");
      if (!tr) return;
      var id = items[Number(tr.dataset.index)].id;
      state.open = state.open === id ? "" : id;
      draw();
      writeHash();
    });
    window.addEventListener("hashchange", function () { readHash(); filter(); pageOfOpen(); draw(); });
  }

  // The search text of every item, made in slices while the reader looks at the first page,
  // so the first search over a large report does not stall the page.
  function warm(from) {
    var end = Math.min(items.length, from + 5000);
    for (var i = from; i < end; i++) haystack(i);
    if (end < items.length) setTimeout(function () { warm(end); }, 0);
    else document.body.dataset.searchReady = "1";
  }

  header();
  readHash();
  var pageGiven = /(^|[#&])page=/.test(location.hash);
  filter();
  if (!pageGiven) pageOfOpen();
  draw();
  bind();
  document.body.dataset.ready = "1";
  setTimeout(function () { warm(0); }, 0);
})();
