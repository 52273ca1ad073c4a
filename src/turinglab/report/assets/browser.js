// Record browser for turinglab reports. Vanilla JS, no network. Untrusted text is only ever
// placed with textContent (never innerHTML), so record contents cannot inject markup.
(function () {
  "use strict";

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function fmt(value) {
    if (value === null || value === undefined) return "–";
    if (value === true) return "yes";
    if (value === false) return "no";
    if (Array.isArray(value) && value.every(function (v) { return typeof v !== "object"; })) {
      return value.join(", ");
    }
    if (typeof value === "object") return JSON.stringify(value, null, 1);
    return String(value);
  }

  function fieldsPanel(record, panel) {
    var dl = el("dl");
    panel.keys.forEach(function (key) {
      dl.appendChild(el("dt", null, key));
      dl.appendChild(el("dd", null, fmt(record[key])));
    });
    return dl;
  }

  function conversationsPanel(record, panel) {
    var views = record[panel.key] || {};
    var grid = el("div", { class: "convs" });
    Object.keys(views).forEach(function (seat) {
      var box = el("div", { class: "conv", "data-seat": seat });
      box.appendChild(el("h4", null, seat + " — its own view (" + views[seat].length + " messages)"));
      views[seat].forEach(function (m) {
        var role = String(m.role || "");
        var msg = el("div", { class: "msg " + (role === "assistant" ? "assistant" : "user") });
        msg.appendChild(el("span", { class: "role" }, role === "assistant" ? seat + " (wrote)" : "received"));
        msg.appendChild(document.createTextNode(String(m.content === undefined ? "" : m.content)));
        box.appendChild(msg);
      });
      grid.appendChild(box);
    });
    if (!Object.keys(views).length) grid.appendChild(el("p", { class: "note" }, "No histories stored."));
    return grid;
  }

  function logPanel(record, panel) {
    var rows = record[panel.key] || [];
    var table = el("table", { class: "data log" });
    var head = el("tr");
    panel.keys.forEach(function (k) { head.appendChild(el("th", null, k)); });
    table.appendChild(el("thead")).appendChild(head);
    var body = table.appendChild(el("tbody"));
    rows.forEach(function (row) {
      var tr = el("tr");
      panel.keys.forEach(function (k) {
        tr.appendChild(el("td", k === "text" ? { class: "text" } : null, fmt(row[k])));
      });
      body.appendChild(tr);
    });
    var wrap = el("div", { class: "table-wrap" });
    wrap.appendChild(table);
    return wrap;
  }

  var PANELS = { fields: fieldsPanel, conversations: conversationsPanel, log: logPanel };

  // Lazy fields arrive as gzip + base64 blocks (see report/html.py); the browser's own
  // DecompressionStream inflates them, so the page needs no library and no network.
  function inflate(b64) {
    if (typeof DecompressionStream === "undefined") {
      return Promise.reject(new Error("this browser has no DecompressionStream " +
        "(Chrome 80+, Firefox 113+, Safari 16.4+ have it)"));
    }
    var bin = atob(b64);
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  function Browser(root, data) {
    var spec = data.spec;
    var records = data.records;
    var lazy = spec.lazy || [];
    var chunkSize = data.chunkSize || 1;
    var nChunks = data.chunks || 0;
    var chunks = {};  // chunk number -> promise of its records' lazy fields, merged in place
    var allLoaded = !lazy.length;
    var haystack = records.map(function (r) { return JSON.stringify(r).toLowerCase(); });

    function loadChunk(c) {
      if (!chunks[c]) {
        var node = document.getElementById(root.id + "-chunk-" + c);
        chunks[c] = inflate(node.textContent).then(function (rows) {
          rows.forEach(function (extra, j) {
            var i = c * chunkSize + j;
            Object.keys(extra).forEach(function (k) { records[i][k] = extra[k]; });
            haystack[i] = JSON.stringify(records[i]).toLowerCase();
          });
        });
      }
      return chunks[c];
    }

    function loadAll() {
      var all = [];
      for (var c = 0; c < nChunks; c++) all.push(loadChunk(c));
      return Promise.all(all).then(function () { allLoaded = true; });
    }
    var controls = root.appendChild(el("div", { class: "controls" }));
    var selects = spec.filters.map(function (f) {
      var label = controls.appendChild(el("label", null, f.label));
      var select = label.appendChild(el("select", { "data-filter": f.key }));
      select.appendChild(el("option", { value: "" }, "all"));
      var values = {};
      records.forEach(function (r) { values[fmt(r[f.key])] = true; });
      Object.keys(values).sort().forEach(function (v) {
        select.appendChild(el("option", { value: v }, v));
      });
      select.addEventListener("change", update);
      return { key: f.key, select: select };
    });
    var search = null;
    if (spec.search) {
      var label = controls.appendChild(el("label", null, "search text"));
      search = label.appendChild(el("input", { type: "search", placeholder: "words in any message" }));
      search.addEventListener("input", update);
    }
    var count = controls.appendChild(el("span", { class: "count" }));
    var list = root.appendChild(el("div", { class: "list" }));
    var table = list.appendChild(el("table", { class: "data" }));
    var head = el("tr");
    spec.columns.forEach(function (c) { head.appendChild(el("th", null, c.label)); });
    table.appendChild(el("thead")).appendChild(head);
    var body = table.appendChild(el("tbody"));
    var detail = root.appendChild(el("div", { class: "detail" }));

    function matches(i) {
      var r = records[i];
      for (var k = 0; k < selects.length; k++) {
        var want = selects[k].select.value;
        if (want !== "" && fmt(r[selects[k].key]) !== want) return false;
      }
      var q = search ? search.value.trim().toLowerCase() : "";
      return !q || haystack[i].indexOf(q) >= 0;
    }

    function render(i) {
      detail.textContent = "";
      spec.panels.forEach(function (p) {
        detail.appendChild(el("h3", null, p.title));
        detail.appendChild(PANELS[p.kind](records[i], p));
      });
      detail.setAttribute("data-shown", String(i));
    }

    function show(i, tr) {
      Array.prototype.forEach.call(body.children, function (row) { row.classList.remove("selected"); });
      if (tr) tr.classList.add("selected");
      detail.removeAttribute("data-shown");
      if (!lazy.length) return render(i);
      detail.textContent = "";
      detail.appendChild(el("p", { class: "note" }, "Decompressing this trial…"));
      loadChunk(Math.floor(i / chunkSize)).then(function () { render(i); }, function (err) {
        detail.textContent = "";
        detail.appendChild(el("p", { class: "note" }, "Cannot show this trial: " + err.message));
      });
    }

    function update() {
      var q = search ? search.value.trim() : "";
      if (q && !allLoaded) {
        // Searching message text needs every chunk: inflate them all once, then filter.
        count.textContent = "decompressing transcripts to search them…";
        loadAll().then(update, function (err) {
          count.textContent = "cannot search transcripts: " + err.message;
        });
        return;
      }
      body.textContent = "";
      var shown = 0, total = 0;
      for (var i = 0; i < records.length; i++) {
        if (!matches(i)) continue;
        total++;
        if (shown >= spec.pageSize) continue;
        shown++;
        var tr = el("tr", { "data-index": String(i) });
        spec.columns.forEach(function (c) { tr.appendChild(el("td", null, fmt(records[i][c.key]))); });
        tr.addEventListener("click", (function (j, row) { return function () { show(j, row); }; })(i, tr));
        body.appendChild(tr);
      }
      count.textContent = total + " of " + records.length + " records" +
        (total > shown ? " (first " + shown + " listed; narrow the filters)" : "");
    }
    update();
  }

  document.querySelectorAll(".browser").forEach(function (root) {
    var blob = document.getElementById(root.id + "-data");
    if (!blob) return;
    var data = JSON.parse(blob.textContent);
    if (typeof data.records !== "string") return Browser(root, data);
    // A compressed list (browsers with lazy fields): inflate it, then build the browser.
    var wait = root.appendChild(el("p", { class: "note" }, "Decompressing the records…"));
    inflate(data.records).then(function (records) {
      root.removeChild(wait);
      data.records = records;
      Browser(root, data);
    }, function (err) {
      wait.textContent = "Cannot show the records: " + err.message;
    });
  });
})();
