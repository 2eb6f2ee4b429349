"""The report's own script: sortable tables, pagers, the sessions filters and the search.

One script, run once, hashed into the page's security policy. It writes untrusted text only
through ``textContent`` (never ``innerHTML``). The message index
(``<script type="application/gzip" id="a2a-index">``, base64 of gzipped JSON, see
:func:`a2a_lab.views.report._sessions.search_index`) is inflated with the browser's
``DecompressionStream`` on first use. The search is a case-insensitive substring scan over
the index's distinct texts: exactly what a text search of the log counts. (A token index
such as lunr or MiniSearch matches words and prefixes, not phrases, so it cannot give that
count; a linear scan of the distinct texts is fast enough at 860,000 events.)
"""

from __future__ import annotations

__all__ = ["PAGE_SCRIPT"]

PAGE_SCRIPT = r"""
(function () {
  "use strict";
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  // ---- pagers: [data-pager=N] shows N items at a time (tbody rows or .pg-item children)
  function items(box) {
    var body = box.tBodies ? box.tBodies[0] : box;
    return [].slice.call(body.children).filter(function (c) {
      return box.tBodies ? true : c.classList.contains("pg-item");
    });
  }
  function paginate(box, page) {
    var size = Number(box.getAttribute("data-pager")), all = items(box);
    var kept = all.filter(function (c) { return !c.classList.contains("filtered"); });
    var pages = Math.max(1, Math.ceil(kept.length / size));
    page = Math.min(Math.max(0, page), pages - 1);
    box.setAttribute("data-page", String(page));
    all.forEach(function (c) { c.hidden = true; });
    kept.slice(page * size, (page + 1) * size).forEach(function (c) { c.hidden = false; });
    var bar = box.nextElementSibling;
    if (!bar || !bar.classList.contains("pager")) {
      bar = el("div", "pager");
      box.parentNode.insertBefore(bar, box.nextSibling);
    }
    bar.textContent = "";
    var prev = el("button", "pg-prev", "‹ previous"), next = el("button", "pg-next", "next ›");
    prev.type = next.type = "button";
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
    prev.addEventListener("click", function () { paginate(box, page - 1); });
    next.addEventListener("click", function () { paginate(box, page + 1); });
    var info = el("span", "pg-info muted",
      "page " + (page + 1) + " of " + pages + " · " + kept.length.toLocaleString("en") + " shown of " +
      all.length.toLocaleString("en"));
    bar.appendChild(prev); bar.appendChild(info); bar.appendChild(next);
    bar.hidden = kept.length <= size;
  }
  document.querySelectorAll("[data-pager]").forEach(function (b) { paginate(b, 0); });
  // ---- sortable tables: the key of a cell is its data-v (a number) or its text
  function key(cell) {
    var v = cell.getAttribute("data-v");
    return v === null ? cell.textContent : (v === "" ? null : Number(v));
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, col) {
      th.tabIndex = 0;
      function sort() {
        var desc = th.getAttribute("aria-sort") !== "descending";
        table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", desc ? "descending" : "ascending");
        var rows = [].slice.call(table.tBodies[0].rows).map(function (r, i) {
          return { r: r, k: key(r.cells[col]), i: i };
        });
        rows.sort(function (a, b) {
          if (a.k === null || b.k === null) {  // an empty cell sorts last either way
            return a.k === b.k ? a.i - b.i : (a.k === null ? 1 : -1);
          }
          var c = typeof a.k === "number" ? a.k - b.k : String(a.k).localeCompare(String(b.k));
          return (desc ? -c : c) || a.i - b.i;
        });
        rows.forEach(function (x) { table.tBodies[0].appendChild(x.r); });
        if (table.hasAttribute("data-pager")) { paginate(table, 0); }
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
    });
  });
  // ---- the message index, inflated once
  var index = null;
  function loadIndex() {
    if (index) { return index; }
    var node = document.getElementById("a2a-index");
    if (!node || typeof DecompressionStream === "undefined") {
      return Promise.reject(new Error("this browser cannot read the search index"));
    }
    var bin = atob(node.textContent.trim()), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i += 1) { bytes[i] = bin.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    index = new Response(stream).text().then(function (t) {
      var ix = JSON.parse(t);
      ix.lower = ix.texts.map(function (s) { return s.toLowerCase(); });
      return ix;
    });
    return index;
  }
  var tz = document.body.getAttribute("data-tz") || "UTC", clock;
  try {
    clock = new Intl.DateTimeFormat("sv-SE", { timeZone: tz, year: "numeric", month: "2-digit",
      day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" });
  } catch (e) { clock = new Intl.DateTimeFormat("sv-SE", { timeZone: "UTC" }); }
  function when(ix, i) {
    if (ix.t[i] === null) { return "—"; }
    try { return clock.format(new Date(ix.t0 + ix.t[i])); } catch (e) { return "—"; }  // beyond Date
  }
  function messageLine(ix, i, withSession) {
    var row = el("div", "hit");
    var meta = el("div", "meta");
    meta.appendChild(el("time", "", when(ix, i)));
    if (withSession) {
      var s = ix.s[i];
      var where = s < 0 ? "(outside every thread)" : ix.sessions[s];
      var link = el("a", "hit-session", where);
      if (s >= 0) { link.href = "#s-" + s; link.setAttribute("data-s", String(s)); }
      meta.appendChild(document.createTextNode(" "));
      meta.appendChild(link);
    }
    meta.appendChild(document.createTextNode(" "));
    meta.appendChild(el("strong", "", ix.agents[ix.from[i]] || "unknown"));
    if (ix.to[i] >= 0) {
      meta.appendChild(document.createTextNode(" → "));
      meta.appendChild(el("strong", "", ix.agents[ix.to[i]]));
    }
    row.appendChild(meta);
    row.appendChild(el("div", "body plain", ix.texts[ix.x[i]]));
    return row;
  }
  // ---- search over every message
  var box = document.getElementById("q"), out = document.getElementById("q-hits"),
      count = document.getElementById("q-count"), timer = null, shown = 100;
  function search() {
    var q = box.value.trim().toLowerCase();
    if (!q) { count.textContent = ""; out.textContent = ""; return; }
    count.textContent = "searching…";
    loadIndex().then(function (ix) {
      var hitText = ix.lower.map(function (s) { return s.indexOf(q) >= 0; });
      var hits = [], sessions = {};
      for (var i = 0; i < ix.x.length; i += 1) {
        if (hitText[ix.x[i]]) { hits.push(i); sessions[ix.s[i]] = true; }
      }
      count.setAttribute("data-hits", String(hits.length));
      count.textContent = hits.length.toLocaleString("en") + " messages in " +
        Object.keys(sessions).length.toLocaleString("en") + " sessions match" +
        (hits.length > shown ? " · the last " + shown + " shown" : "");
      out.textContent = "";
      hits.slice(-shown).reverse().forEach(function (i) { out.appendChild(messageLine(ix, i, true)); });
    }, function (err) { count.textContent = err.message; });
  }
  if (box) {
    box.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(search, 150); });
  }
  // ---- sessions: filters, and the threads of a session without embedded messages
  var list = document.getElementById("s-list");
  function expandFromIndex(det) {
    var s = Number(det.getAttribute("data-s")), body = det.querySelector(".s-body");
    body.textContent = "loading…";
    loadIndex().then(function (ix) {
      body.textContent = "";
      var threads = {}, order = [];
      for (var i = 0; i < ix.s.length; i += 1) {
        if (ix.s[i] === s) {
          var th = ix.th[i];
          if (!(th in threads)) { threads[th] = []; order.push(th); }
          threads[th].push(i);
        }
      }
      order.forEach(function (th) {
        var d = el("details", "a2a-thread"), sum = el("summary");
        sum.appendChild(el("strong", "", th < 0 ? "(no thread)" : ix.threads[th]));
        sum.appendChild(el("span", "muted", " · " + threads[th].length + " messages"));
        d.appendChild(sum);
        threads[th].forEach(function (i) { d.appendChild(messageLine(ix, i, false)); });
        body.appendChild(d);
      });
      if (!order.length) { body.textContent = "no message with a text in this session"; }
    }, function (err) { body.textContent = err.message; });
  }
  function openSession(s) {
    var det = document.getElementById("s-" + s);
    if (!det) { return; }
    [].slice.call(list.querySelectorAll(".s-item")).forEach(function (c) { c.classList.remove("filtered"); });
    var pos = items(list).indexOf(det), size = Number(list.getAttribute("data-pager"));
    paginate(list, Math.floor(pos / size));
    det.open = true;
    det.scrollIntoView();
  }
  if (list) {
    list.querySelectorAll("details.s-item").forEach(function (det) {
      det.addEventListener("toggle", function () {
        if (det.open && !det.hasAttribute("data-embedded") && !det.hasAttribute("data-loaded")) {
          det.setAttribute("data-loaded", "");
          expandFromIndex(det);
        }
      });
    });
    var bar = document.querySelector("#sessions .filters");
    var agent = bar.querySelector("#f-agent"), status = bar.querySelector("#f-status"),
        category = bar.querySelector("#f-category"), time = bar.querySelector("#f-time"),
        counter = bar.querySelector("#f-count"), end = Number(bar.getAttribute("data-end"));
    var apply = function () {
      var n = 0;
      items(list).forEach(function (s) {
        var ok = (!agent.value || JSON.parse(s.getAttribute("data-agents")).indexOf(agent.value) >= 0)
          && (!status.value || s.getAttribute("data-status") === status.value)
          && (!category.value || s.getAttribute("data-category") === category.value)
          && (!time.value || Number(s.getAttribute("data-last")) >= end - Number(time.value));
        s.classList.toggle("filtered", !ok);
        if (ok) { n += 1; }
      });
      counter.textContent = n.toLocaleString("en") + " sessions";
      paginate(list, 0);
    };
    [agent, status, category, time].forEach(function (e) {
      e.addEventListener("change", apply);
      e.addEventListener("input", apply);
    });
    document.getElementById("s-collapse").addEventListener("click", function () {
      document.querySelectorAll("#sessions details[open]").forEach(function (d) { d.open = false; });
    });
    apply();
  }
  if (out) {
    out.addEventListener("click", function (e) {
      var a = e.target.closest("a.hit-session");
      if (a && a.hasAttribute("data-s")) { e.preventDefault(); openSession(a.getAttribute("data-s")); }
    });
  }
})();
"""
