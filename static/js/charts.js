// Small bar charts drawn as SVG (no library, no inline script: CSP-safe). A container
// <div data-charts-url="/api/…/partition-charts/"> holds <figure data-chart="name">: the JSON's entry "name"
// ({title, x_label, labels, series: {name: [numbers]}, truncated}) is drawn in it, one bar per label.
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
    var name = Object.keys(chart.series)[0];
    var values = chart.series[name] || [];
    var max = Math.max.apply(null, values.concat([1]));
    var plotWidth = WIDTH - LEFT - 8, plotHeight = HEIGHT - TOP - BOTTOM;
    var step = values.length ? plotWidth / values.length : plotWidth;
    var svg = el("svg", {viewBox: "0 0 " + WIDTH + " " + HEIGHT, role: "img", class: "bar-chart",
                         "aria-label": chart.title + ": " + values.length + " bars"});
    svg.appendChild(el("line", {x1: LEFT, y1: TOP + plotHeight, x2: WIDTH - 8, y2: TOP + plotHeight, class: "axis"}));
    svg.appendChild(el("text", {x: LEFT - 6, y: TOP + 10, "text-anchor": "end", class: "tick"}, human(max, unit)));
    svg.appendChild(el("text", {x: LEFT - 6, y: TOP + plotHeight, "text-anchor": "end", class: "tick"}, "0"));
    values.forEach(function (value, i) {
      var height = Math.round((value / max) * plotHeight);
      var bar = el("rect", {x: LEFT + i * step + (step > 3 ? 1 : 0), y: TOP + plotHeight - height,
                            width: Math.max(step - (step > 3 ? 2 : 0), 0.5), height: height, class: "bar"});
      bar.appendChild(el("title", {}, chart.labels[i] + ": " + human(value, unit)));
      svg.appendChild(bar);
    });
    var first = chart.labels[0] || "", last = chart.labels[chart.labels.length - 1] || "";
    if (values.length <= 8) {
      chart.labels.forEach(function (label, i) {
        svg.appendChild(el("text", {x: LEFT + (i + 0.5) * step, y: HEIGHT - 18, "text-anchor": "middle", class: "tick"}, label));
      });
    } else {
      svg.appendChild(el("text", {x: LEFT, y: HEIGHT - 18, class: "tick"}, first));
      svg.appendChild(el("text", {x: WIDTH - 8, y: HEIGHT - 18, "text-anchor": "end", class: "tick"}, last));
    }
    svg.appendChild(el("text", {x: LEFT + plotWidth / 2, y: HEIGHT - 4, "text-anchor": "middle", class: "axis-label"},
                       chart.x_label + (chart.truncated ? " (the last " + values.length + ")" : "")));
    figure.appendChild(svg);
    figure.setAttribute("data-bars", String(values.length));
  }

  function load(container) {
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
