// ctxprobe view: filter, sort and select runs; live progress (polling /api/runs); filter cases.
// Every value from the store is set as text (textContent), never as markup.
(function () {
  "use strict";
  var body = document.body;

  function text(el, value) { if (el) { el.textContent = value; } }

  function runsTable() {
    var table = document.getElementById("runs");
    if (!table) { return; }
    var tbody = table.tBodies[0];
    var filter = document.getElementById("filter");
    function applyFilter() {
      var q = (filter && filter.value || "").toLowerCase();
      Array.prototype.forEach.call(tbody.rows, function (tr) {
        tr.hidden = q !== "" && tr.textContent.toLowerCase().indexOf(q) < 0;
      });
    }
    if (filter) { filter.addEventListener("input", applyFilter); }
    Array.prototype.forEach.call(table.tHead.querySelectorAll("th[data-sort]"), function (th) {
      th.addEventListener("click", function () {
        var key = th.getAttribute("data-sort");
        var numeric = th.getAttribute("data-numeric") === "yes";
        var dir = th.getAttribute("data-dir") === "asc" ? "desc" : "asc";
        th.setAttribute("data-dir", dir);
        var rows = Array.prototype.slice.call(tbody.rows);
        rows.sort(function (a, b) {
          var x = a.getAttribute("data-" + key) || "";
          var y = b.getAttribute("data-" + key) || "";
          if (x === "" || y === "") { return (x === "") - (y === ""); }  // no value: last either way
          var c;
          if (numeric) { c = Number(x) - Number(y); } else { c = x < y ? -1 : x > y ? 1 : 0; }
          return dir === "asc" ? c : -c;
        });
        rows.forEach(function (r) { tbody.appendChild(r); });
      });
    });
    var compare = document.getElementById("compare");
    var decide = document.getElementById("decide");
    var form = document.getElementById("decide-form");
    var order = [];  // runs in the order they were ticked: the first is compare's reference (A)
    function picked() {
      var on = Array.prototype.map.call(table.querySelectorAll("input.pick:checked"), function (b) { return b.value; });
      order = order.filter(function (id) { return on.indexOf(id) >= 0; });
      on.forEach(function (id) { if (order.indexOf(id) < 0) { order.push(id); } });
      return order.slice();
    }
    function onPick() {
      var n = picked().length;
      if (compare) { compare.disabled = n !== 2; }
      if (decide) { decide.disabled = n < 2; }
    }
    table.addEventListener("change", function (e) { if (e.target.classList.contains("pick")) { onPick(); } });
    if (compare) {
      compare.addEventListener("click", function () {
        var p = picked();
        if (p.length === 2) {
          window.location.href = body.getAttribute("data-compare") + encodeURIComponent(p[0]) + "/" + encodeURIComponent(p[1]);
        }
      });
    }
    if (form) {
      form.addEventListener("submit", function () {
        Array.prototype.forEach.call(form.querySelectorAll("input[name=run]"), function (i) { i.remove(); });
        picked().forEach(function (id) {
          var i = document.createElement("input");
          i.type = "hidden"; i.name = "run"; i.value = id;
          form.appendChild(i);
        });
      });
    }
    var api = body.getAttribute("data-api");
    if (!api) { return; }
    function fill(tr, r) {
      tr.setAttribute("data-status", r.status);
      tr.setAttribute("data-cost", r.usd === null ? "" : String(r.usd));
      tr.setAttribute("data-eff", r.eff_key === null ? "" : String(r.eff_key));
      var state = tr.querySelector(".state");
      if (state) { state.className = "state " + r.status; text(state, r.status); }
      var bar = tr.querySelector("progress");
      if (bar) { bar.max = r.planned || 1; bar.value = r.answered; }
      text(tr.querySelector(".progress"), r.progress);
      text(tr.querySelector(".batch"), r.batch);
      text(tr.querySelector(".cost"), r.cost);
      var eff = tr.querySelector(".eff");
      if (eff) {
        eff.textContent = "";
        r.lengths.forEach(function (f) {
          var div = document.createElement("div");
          var b = document.createElement("b");
          b.textContent = f.family;
          div.appendChild(b);
          div.appendChild(document.createTextNode(": " + f.line));
          eff.appendChild(div);
        });
      }
    }
    function addRow(r) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-run", r.run_id);
      tr.setAttribute("data-model", r.model);
      tr.setAttribute("data-created", r.created);
      tr.setAttribute("data-families", r.families.join(", "));
      var cells = ["pick", "run", "model", "families", "status", "eff", "cost", "when"];
      cells.forEach(function (name) {
        var td = document.createElement("td");
        if (name === "pick") {
          var box = document.createElement("input");
          box.type = "checkbox"; box.className = "pick"; box.value = r.run_id;
          td.appendChild(box);
        } else if (name === "run") {
          var a = document.createElement("a");
          a.href = "/run/" + encodeURIComponent(r.run_id);
          a.textContent = r.short;
          td.className = "mono";
          td.appendChild(a);
        } else if (name === "model") {
          td.textContent = r.model;
          if (r.source) {
            var tag = document.createElement("span");
            tag.className = "tag";
            tag.textContent = "imported: " + r.source;
            td.appendChild(document.createTextNode(" "));
            td.appendChild(tag);
          }
        }
        else if (name === "families") { td.textContent = r.families.join(", "); }
        else if (name === "status") {
          td.className = "status";
          var s = document.createElement("span"); s.className = "state";
          var p = document.createElement("progress");
          var t = document.createElement("span"); t.className = "progress";
          var w = document.createElement("span"); w.className = "batch sub";
          td.appendChild(s); td.appendChild(document.createTextNode(" "));
          td.appendChild(p); td.appendChild(document.createTextNode(" ")); td.appendChild(t);
          td.appendChild(document.createTextNode(" ")); td.appendChild(w);
        } else if (name === "when") { td.textContent = r.created; td.className = "when"; }
        else { td.className = name; }
        tr.appendChild(td);
      });
      tbody.insertBefore(tr, tbody.firstChild);
      return tr;
    }
    var failures = 0;
    function poll() {
      fetch(api, {cache: "no-store"}).then(function (res) {
        if (!res.ok) { throw new Error("HTTP " + res.status); }
        return res.json();
      }).then(function (data) {
        failures = 0;
        var live = false;
        data.runs.slice().reverse().forEach(function (r) {
          var tr = tbody.querySelector('tr[data-run="' + CSS.escape(r.run_id) + '"]');
          fill(tr || addRow(r), r);
          live = live || r.live;
        });
        applyFilter();
        body.setAttribute("data-polls", String(Number(body.getAttribute("data-polls") || "0") + 1));
        window.setTimeout(poll, live ? 1000 : 5000);
      }).catch(function () {
        failures += 1;  // the server stopped: try again, less often
        if (failures < 20) { window.setTimeout(poll, 5000); }
      });
    }
    window.setTimeout(poll, 1000);
  }

  function casesTable() {
    var select = document.getElementById("outcome");
    var table = document.getElementById("cases");
    if (!select || !table) { return; }
    var shown = document.getElementById("shown");
    function apply() {
      var want = select.value;
      var n = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (tr) {
        var o = tr.getAttribute("data-outcome");
        var ok = want === "" || (want === "!correct" ? o !== "correct" : o === want);
        tr.hidden = !ok;
        if (ok) { n += 1; }
      });
      text(shown, n + " shown");
    }
    var initial = select.getAttribute("data-initial") || decodeURIComponent(window.location.hash.slice(1));
    if (initial) {
      Array.prototype.forEach.call(select.options, function (o) { if (o.value === initial) { select.value = initial; } });
    }
    select.addEventListener("change", apply);
    apply();
  }

  runsTable();
  casesTable();
}());
