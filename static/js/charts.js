// Small bar charts drawn as SVG (no library, no inline script: CSP-safe). A container
// <div data-charts-url="/api/…/partition-charts/"> holds <figure data-chart="name">: the JSON's entry "name"
// ({title, x_label, labels, series: {name: [numbers]}, truncated}) is drawn in it, one bar per label.
// With "stacked": true every series is stacked in each bar (a legend names them); "threshold": {value, label} draws a
// dashed line at that value; "subset" says which bars a truncated chart shows.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var WIDTH = 560, HEIGHT = 180, LEFT = 64, BOTTOM = 36, TOP = 10;

  function el(name, attributes, text) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attributes).forEach(function (key) { node.setAttribute(key, attributes[key]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function human(value, unit) {
    if (unit !== "bytes") return value >= 10000 ? value.toLocaleString("en") : String(value);
    var units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"], i = 0;
    while (value >= 1024 && i < units.length - 1) { value /= 1024; i += 1; }
    return (i === 0 ? value : value.toFixed(1)) + " " + units[i];
  }

  function draw(figure, chart) {
    var unit = figure.getAttribute("data-unit") || "";
    var names = Object.keys(chart.series);
    if (!chart.stacked) names = names.slice(0, 1);
    var count = names.length ? (chart.series[names[0]] || []).length : 0;
    var totals = [];
    for (var t = 0; t < count; t += 1) {
      totals.push(names.reduce(function (sum, name) { return sum + (chart.series[name][t] || 0); }, 0));
    }
    var threshold = chart.threshold || null;
    var max = Math.max.apply(null, totals.concat([1, threshold ? threshold.value : 0]));
    var top = chart.stacked ? TOP + 16 : TOP;  // a stacked chart keeps a row for its legend
    var plotWidth = WIDTH - LEFT - 8, plotHeight = HEIGHT - top - BOTTOM;
    var step = count ? plotWidth / count : plotWidth;
    var svg = el("svg", {viewBox: "0 0 " + WIDTH + " " + HEIGHT, role: "img", class: "bar-chart",
                         "aria-label": chart.title + ": " + count + " bars"});
    svg.appendChild(el("line", {x1: LEFT, y1: top + plotHeight, x2: WIDTH - 8, y2: top + plotHeight, class: "axis"}));
    svg.appendChild(el("text", {x: LEFT - 6, y: top + 10, "text-anchor": "end", class: "tick"}, human(max, unit)));
    svg.appendChild(el("text", {x: LEFT - 6, y: top + plotHeight, "text-anchor": "end", class: "tick"}, "0"));
    totals.forEach(function (total, i) {
      var below = 0;
      names.forEach(function (name, k) {
        var value = chart.series[name][i] || 0;
        var upper = Math.round(((below + value) / max) * plotHeight), lower = Math.round((below / max) * plotHeight);
        var bar = el("rect", {x: LEFT + i * step + (step > 3 ? 1 : 0), y: top + plotHeight - upper,
                              width: Math.max(step - (step > 3 ? 2 : 0), 0.5), height: upper - lower,
                              class: "bar" + (chart.stacked ? " series-" + k : ""), "data-series": name});
        bar.appendChild(el("title", {}, chart.labels[i] + ": " + human(value, unit) + (chart.stacked ? " " + name : "")));
        svg.appendChild(bar);
        below += value;
      });
    });
    if (threshold) {
      var y = top + plotHeight - Math.round((threshold.value / max) * plotHeight);
      svg.appendChild(el("line", {x1: LEFT, y1: y, x2: WIDTH - 8, y2: y, class: "threshold",
                                  "data-value": String(threshold.value)}));
      svg.appendChild(el("text", {x: WIDTH - 8, y: y - 3, "text-anchor": "end", class: "tick threshold-label"},
                         threshold.label));
    }
    if (chart.stacked) {
      names.forEach(function (name, k) {
        var x = LEFT + k * 110;
        svg.appendChild(el("rect", {x: x, y: TOP, width: 9, height: 9, class: "legend series-" + k}));
        svg.appendChild(el("text", {x: x + 13, y: TOP + 8, class: "tick"}, name));
      });
    }
    var first = chart.labels[0] || "", last = chart.labels[chart.labels.length - 1] || "";
    if (count <= 8) {
      chart.labels.forEach(function (label, i) {
        svg.appendChild(el("text", {x: LEFT + (i + 0.5) * step, y: HEIGHT - 18, "text-anchor": "middle", class: "tick"}, label));
      });
    } else {
      svg.appendChild(el("text", {x: LEFT, y: HEIGHT - 18, class: "tick"}, first));
      svg.appendChild(el("text", {x: WIDTH - 8, y: HEIGHT - 18, "text-anchor": "end", class: "tick"}, last));
    }
    var bounded = chart.subset ? " (" + chart.subset + ")" : " (the last " + count + ")";
    svg.appendChild(el("text", {x: LEFT + plotWidth / 2, y: HEIGHT - 4, "text-anchor": "middle", class: "axis-label"},
                       chart.x_label + (chart.truncated ? bounded : "")));
    figure.appendChild(svg);
    figure.setAttribute("data-bars", String(count));
  }

  function load(container) {
    if (container.hasAttribute("data-charts-started")) return;  // charts.js may be included twice on a page
    container.setAttribute("data-charts-started", "true");
    fetch(container.getAttribute("data-charts-url"), {credentials: "same-origin", headers: {Accept: "application/json"}})
      .then(function (response) {
        if (!response.ok) throw new Error(response.status + " " + response.statusText);
        return response.json();
      })
      .then(function (charts) {
        container.querySelectorAll("figure[data-chart]").forEach(function (figure) {
          var chart = charts[figure.getAttribute("data-chart")];
          if (chart) draw(figure, chart);
        });
        container.setAttribute("data-loaded", "true");
      })
      .catch(function (error) {
        var note = document.createElement("p");
        note.className = "muted small";
        note.textContent = "The charts could not be loaded: " + error.message;
        container.appendChild(note);
      });
  }

  function start() { document.querySelectorAll("[data-charts-url]").forEach(load); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
