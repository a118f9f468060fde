// Campaign statistics charts: reads the figures from the json_script block and draws them with the
// vendored Chart.js (static/vendor/chartjs). No inline scripts, no external requests.
(function () {
  "use strict";
  const BLUE = "#417690", GREEN = "#009e73";

  function chart(canvas, type, labels, datasets, options) {
    return new window.Chart(canvas, {
      type: type, data: { labels: labels, datasets: datasets },
      options: Object.assign({ responsive: true, maintainAspectRatio: false, animation: false,
                               plugins: { legend: { position: "bottom" } } }, options || {}),
    });
  }

  function init() {
    const source = document.getElementById("statistics-charts");
    if (!source || !window.Chart) return;
    const data = JSON.parse(source.textContent);
    const agreement = document.getElementById("chart-agreement");
    if (agreement && data.agreement.labels.length) {
      chart(agreement, "bar", data.agreement.labels,
            [{ label: "Krippendorff's alpha", data: data.agreement.alpha, backgroundColor: BLUE }],
            { scales: { y: { suggestedMin: 0, suggestedMax: 1 } } });
    }
    document.querySelectorAll("canvas[data-score-chart]").forEach(function (canvas) {
      const c = data.scores[Number(canvas.dataset.scoreChart)];
      if (!c) return;
      chart(canvas, "bar", c.labels, [
        // A higher order is drawn first: the CI (a floating [low, high] bar) goes on top.
        { label: c.title + ": mean", data: c.mean, backgroundColor: BLUE, order: 2 },
        { label: "95% CI", data: c.ci, backgroundColor: "rgba(213,94,0,0.75)", grouped: false,
          barPercentage: 0.15, order: 1 },
      ]);
    });
    document.querySelectorAll("canvas[data-judge-chart]").forEach(function (canvas) {
      const c = data.judges[Number(canvas.dataset.judgeChart)];
      if (!c) return;
      chart(canvas, "bar", c.labels,
            [{ label: c.title + ": exact agreement with humans", data: c.exact,
               backgroundColor: GREEN }],
            { scales: { y: { min: 0, max: 1 } } });
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
