// Campaign dashboard charts: reads the figures from the json_script block, draws them with the
// vendored Chart.js (static/vendor/chartjs). No inline scripts, no external requests.
(function () {
  "use strict";
  const PALETTE = ["#417690", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#0072b2",
                   "#999999", "#f0e442", "#79aec8"];

  function colour(i) { return PALETTE[i % PALETTE.length]; }

  function bar(canvas, labels, datasets, options) {
    datasets.forEach(function (d) { d.maxBarThickness = 48; });
    return new window.Chart(canvas, {
      type: "bar",
      data: { labels: labels, datasets: datasets },
      options: Object.assign({ responsive: true, maintainAspectRatio: false, animation: false,
                               plugins: { legend: { position: "bottom" } } }, options || {}),
    });
  }

  function drawProgress(data) {
    const canvas = document.getElementById("chart-progress");
    if (!canvas || !data.labels.length) return;
    bar(canvas, data.labels, [
      { label: "Done", data: data.done, backgroundColor: "#009e73" },
      { label: "In progress", data: data.in_progress, backgroundColor: "#e69f00" },
      { label: "Remaining", data: data.remaining, backgroundColor: "#cccccc" },
    ], { indexAxis: "y",
         scales: { x: { stacked: true, ticks: { precision: 0 } }, y: { stacked: true } } });
  }

  function drawPerDay(data) {
    const canvas = document.getElementById("chart-per-day");
    if (!canvas || !data.labels.length) return;
    bar(canvas, data.labels, [{ label: "Annotations", data: data.data, backgroundColor: colour(0) }],
        { plugins: { legend: { display: false } },
          scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } });
  }

  function drawDistributions(charts) {
    document.querySelectorAll("canvas[data-chart-index]").forEach(function (canvas) {
      const chart = charts[Number(canvas.dataset.chartIndex)];
      if (!chart) return;
      const datasets = chart.series.map(function (s, i) {
        return { label: s.label, data: s.data, backgroundColor: colour(i) };
      });
      // Long category names read better down the side than slanted under the axis.
      const sideways = chart.labels.some(function (l) { return l.length > 14; });
      // (the same rule as Chart.wide in campaigns/selectors/dashboard.py)
      const value = { beginAtZero: true,
                      ticks: chart.kind === "mean" ? {} : { precision: 0 },  // whole answers
                      title: { display: true, text: chart.kind === "mean" ? "mean score" : "answers" } };
      bar(canvas, chart.labels, datasets, sideways
        ? { indexAxis: "y", scales: { x: value } }
        : { scales: { y: value } });
    });
  }

  function init() {
    const node = document.getElementById("dashboard-data");
    if (!node || !window.Chart) return;
    const data = JSON.parse(node.textContent);
    drawProgress(data.progress);
    drawPerDay(data.per_day);
    drawDistributions(data.distributions);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
