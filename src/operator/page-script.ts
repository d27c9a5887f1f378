/**
 * The operator page's script (served at /admin/page.js, page.ts): fetches /v1/admin/stats from
 * its own origin (the browser sends the Basic credential again) and draws each chart as SVG, with
 * no library: bars by day, bars by kind, and each chart's figures as a table for screen readers.
 * Plain ES2017 in a string, as the house's other page scripts are; redrawn to the panel's width.
 */
export const PAGE_SCRIPT = `"use strict";
(function () {
  var NS = "http://www.w3.org/2000/svg";
  var daysSelect = document.getElementById("days");
  var status = document.getElementById("status");
  var stats = null;
  var serial = 0;

  function html(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function svg(tag, attrs, text) {
    var node = document.createElementNS(NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function money(usd) {
    if (usd === 0) return "$0";
    var text = usd.toFixed(6).replace(/0+$/, "");
    var decimals = text.length - text.indexOf(".") - 1;
    return "$" + (decimals < 2 ? usd.toFixed(2) : text);
  }
  function count(n) { return n.toLocaleString("en-US"); }
  function kindName(kind) { return kind === null ? "(no kind)" : kind; }
  function widthOf(box) { return Math.max(240, Math.floor(box.clientWidth || 320)); }

  /** An SVG chart with its accessible name, and the same figures as a table. */
  function frame(box, title, width, height) {
    box.textContent = "";
    var id = "chart-" + (serial += 1);
    var chart = svg("svg", {
      width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img", "aria-labelledby": id
    });
    chart.appendChild(svg("title", { id: id }, title));
    box.appendChild(chart);
    return chart;
  }
  function figures(box, head, rows) {
    var details = html("details", { class: "figures" });
    details.appendChild(html("summary", {}, "Figures"));
    var table = html("table");
    var tr = html("tr");
    head.forEach(function (h, i) { tr.appendChild(html("th", { scope: "col", class: i ? "n" : "" }, h)); });
    table.appendChild(html("thead")).appendChild(tr);
    var body = table.appendChild(html("tbody"));
    rows.forEach(function (row) {
      var line = html("tr");
      row.forEach(function (cell, i) {
        line.appendChild(html(i ? "td" : "th", i ? { class: "n" } : { scope: "row" }, cell));
      });
      body.appendChild(line);
    });
    details.appendChild(table);
    box.appendChild(details);
  }
  function empty(box, text) { box.textContent = ""; box.appendChild(html("p", { class: "muted" }, text)); }

  /** Vertical bars, one per day: the first and last day under the axis, the largest value above it. */
  function dayBars(box, title, days, value, format, cls) {
    var values = days.map(value);
    var max = Math.max.apply(null, values);
    if (!(max > 0)) return empty(box, "Nothing in this period.");
    var width = widthOf(box), height = 170, top = 22, bottom = 26, inner = height - top - bottom;
    var name = title + ", " + days[0].day + " to " + days[days.length - 1].day + ": largest " + format(max);
    var chart = frame(box, name, width, height);
    var step = width / days.length;
    days.forEach(function (d, i) {
      var h = values[i] > 0 ? Math.max(1, (values[i] / max) * inner) : 0;
      var bar = svg("rect", {
        class: "bar " + cls,
        x: (i * step + step * 0.1).toFixed(1),
        y: (top + inner - h).toFixed(1),
        width: Math.max(1, step * 0.8).toFixed(1),
        height: h.toFixed(1),
        "data-day": d.day,
        "data-value": values[i]
      });
      bar.appendChild(svg("title", {}, d.day + ": " + format(values[i])));
      chart.appendChild(bar);
    });
    chart.appendChild(svg("line", { class: "axis", x1: 0, x2: width, y1: top + inner + 0.5, y2: top + inner + 0.5 }));
    chart.appendChild(svg("text", { x: 0, y: 14 }, "max " + format(max)));
    chart.appendChild(svg("text", { x: 0, y: height - 8 }, days[0].day));
    chart.appendChild(svg("text", { x: width, y: height - 8, "text-anchor": "end" }, days[days.length - 1].day));
    var shown = days.filter(function (d, i) { return values[i] > 0; });
    figures(box, ["Day", title], shown.map(function (d) { return [d.day, format(value(d))]; }));
  }

  /** Horizontal bars, one row per kind, each bar stacked from parts; the total at its end. */
  function kindBars(box, title, rows, parts, format) {
    rows = rows.filter(function (r) { return parts.some(function (p) { return p.value(r) > 0; }); });
    if (!rows.length) return empty(box, "Nothing in this period.");
    var width = widthOf(box), row = 26, height = rows.length * row + 4;
    var label = Math.min(150, Math.round(width * 0.36)), valueRoom = 64, room = width - label - valueRoom;
    var totals = rows.map(function (r) { return parts.reduce(function (s, p) { return s + p.value(r); }, 0); });
    var max = Math.max.apply(null, totals);
    var chart = frame(box, title + " by kind", width, height);
    rows.forEach(function (r, i) {
      var y = i * row + 4, x = label;
      var name = { x: label - 6, y: y + 15, "text-anchor": "end", class: "kind" };
      chart.appendChild(svg("text", name, kindName(r.kind)));
      parts.forEach(function (p) {
        var w = (p.value(r) / max) * room;
        if (w <= 0) return;
        var bar = svg("rect", {
          class: "bar " + p.cls,
          x: x.toFixed(1),
          y: y + 3,
          width: Math.max(1, w).toFixed(1),
          height: row - 10,
          "data-kind": kindName(r.kind),
          "data-part": p.name,
          "data-value": p.value(r)
        });
        bar.appendChild(svg("title", {}, kindName(r.kind) + ", " + p.name + ": " + format(p.value(r))));
        chart.appendChild(bar);
        x += w;
      });
      var total = { x: x + 6, y: y + 15, class: "value", "data-kind": kindName(r.kind) };
      chart.appendChild(svg("text", total, format(totals[i])));
    });
    figures(box, ["Kind"].concat(parts.map(function (p) { return p.name; })), rows.map(function (r) {
      return [kindName(r.kind)].concat(parts.map(function (p) { return format(p.value(r)); }));
    }));
  }

  function totals(s) {
    var list = document.getElementById("totals");
    list.textContent = "";
    [["Revenue", money(s.totals.revenue_usd)], ["Payments", count(s.totals.payments)],
     ["Calls", count(s.totals.calls)], ["Refused (4xx)", count(s.totals.refused)],
     ["Errors (5xx)", count(s.totals.errors)], ["Charged", money(s.totals.charged_usd)],
     ["Public requests", count(s.totals.public_requests)], ["Active resources", count(s.totals.active_resources)],
     ["Deliveries pending", count(s.deliveries.pending)], ["Deliveries dead", count(s.deliveries.dead)]
    ].forEach(function (pair) {
      var item = html("div", { "data-figure": pair[0] });
      item.appendChild(html("dt", {}, pair[0]));
      item.appendChild(html("dd", {}, pair[1]));
      list.appendChild(item);
    });
  }

  function draw() {
    if (!stats) return;
    var s = stats;
    totals(s);
    var revenue = function (d) { return d.revenue_usd; };
    dayBars(document.getElementById("revenue"), "Revenue", s.by_day, revenue, money, "revenue");
    var calls = function (d) { return d.calls; };
    dayBars(document.getElementById("calls-by-day"), "Calls", s.by_day, calls, count, "answered");
    var answered = {
      name: "answered", cls: "answered", value: function (r) { return r.calls - r.refused - r.errors; }
    };
    var refused = { name: "refused", cls: "refused", value: function (r) { return r.refused; } };
    var errors = { name: "errors", cls: "errors", value: function (r) { return r.errors; } };
    kindBars(document.getElementById("calls"), "Calls", s.by_kind, [answered, refused, errors], count);
    var charged = { name: "charged", cls: "charged", value: function (r) { return r.charged_usd; } };
    kindBars(document.getElementById("charged"), "Charged", s.by_kind, [charged], money);
    var active = { name: "active", cls: "active", value: function (r) { return r.active_resources; } };
    kindBars(document.getElementById("active"), "Active resources", s.by_kind, [active], count);
    var dead = function (d) { return d.deliveries_dead; };
    dayBars(document.getElementById("dead"), "Deliveries dead", s.by_day, dead, count, "errors");
  }

  function load() {
    status.textContent = "Loading the figures…";
    var url = "/v1/admin/stats?days=" + encodeURIComponent(daysSelect.value);
    fetch(url, { headers: { accept: "application/json" }, cache: "no-store" })
      .then(function (res) {
        if (!res.ok) throw new Error("HTTP " + res.status);
        return res.json();
      })
      .then(function (s) {
        stats = s;
        draw();
        status.textContent = "Figures for " + s.from + " to " + s.to + " (UTC), as of " + s.generated_at.slice(11, 19) +
          ". Other isolates' counts may lag by up to " + s.flush_seconds + " s.";
        document.body.setAttribute("data-loaded", "true");
      })
      .catch(function (err) { status.textContent = "The figures could not be loaded (" + err.message + ")."; });
  }

  var pending = 0;
  window.addEventListener("resize", function () {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(draw);
  });
  daysSelect.addEventListener("change", load);
  load();
})();
`;
