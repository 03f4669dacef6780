// The Usage page's charts, drawn with Chart.js from the numbers the server embedded.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("usage-data").textContent);
  var styles = getComputedStyle(document.documentElement);
  var text = styles.getPropertyValue("--text").trim() || "#222";
  var accent = styles.getPropertyValue("--accent").trim() || "#4f6bed";
  var palette = [accent, "#e8833a", "#3aa675", "#c0487c", "#8e6bd8", "#d4b13a", "#3a9ec0", "#8a8a8a"];
  Chart.defaults.color = text;
  Chart.defaults.maintainAspectRatio = false;
  window.usageCharts = {};

  function money(value) { return "$" + Number(value).toFixed(4); }

  function draw(id, config) {
    var canvas = document.getElementById(id);
    window.usageCharts[id] = new Chart(canvas, config);
  }

  function bars(id, rows, label) {
    draw(id, {
      type: "bar",
      data: {
        labels: rows.map(function (r) { return r.name; }),
        datasets: [{ label: label, data: rows.map(function (r) { return r.spend; }), backgroundColor: palette }],
      },
      options: {
        indexAxis: "y",
        plugins: { legend: { display: false }, tooltip: { callbacks: { label: function (c) { return money(c.raw); } } } },
        scales: { x: { ticks: { callback: function (v) { return money(v); } } } },
      },
    });
  }

  draw("chart-daily", {
    data: {
      labels: data.daily.map(function (d) { return d.day; }),
      datasets: [
        { type: "bar", label: "Spend (USD)", data: data.daily.map(function (d) { return d.spend; }),
          backgroundColor: accent, yAxisID: "spend" },
        { type: "line", label: "Requests", data: data.daily.map(function (d) { return d.requests; }),
          borderColor: "#e8833a", backgroundColor: "#e8833a", yAxisID: "requests", tension: 0.2 },
      ],
    },
    options: {
      interaction: { mode: "index", intersect: false },
      scales: {
        spend: { position: "left", beginAtZero: true, ticks: { callback: function (v) { return money(v); } } },
        requests: { position: "right", beginAtZero: true, grid: { drawOnChartArea: false } },
      },
    },
  });
  bars("chart-models", data.models, "Spend per model");
  bars("chart-keys", data.keys, "Spend per key");
  bars("chart-teams", data.teams, "Spend per team");
  draw("chart-upstreams", {
    data: {
      labels: data.upstreams.map(function (u) { return u.name; }),
      datasets: [
        { type: "bar", label: "p50 ms", data: data.upstreams.map(function (u) { return u.p50_ms; }),
          backgroundColor: accent, yAxisID: "ms" },
        { type: "bar", label: "p95 ms", data: data.upstreams.map(function (u) { return u.p95_ms; }),
          backgroundColor: "#8e6bd8", yAxisID: "ms" },
        { type: "line", label: "Error rate %", data: data.upstreams.map(function (u) { return u.error_rate * 100; }),
          borderColor: "#c0487c", backgroundColor: "#c0487c", yAxisID: "errors" },
      ],
    },
    options: {
      scales: {
        ms: { position: "left", beginAtZero: true },
        errors: { position: "right", beginAtZero: true, suggestedMax: 100, grid: { drawOnChartArea: false } },
      },
    },
  });
})();
