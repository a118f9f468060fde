// Sliders: a score counts only once the handle was moved (mouse, touch or keyboard); screen
// readers hear the score with the nearest anchor ("62, near Most meaning preserved").
(function () {
  "use strict";
  // The page's words in its language (i18n.js); English with its placeholders filled without.
  var t = window.workerText || function (text, values) {
    return text.replace(/%\((\w+)\)s/g, function (w, n) { return values && n in values ? String(values[n]) : w; });
  };
  document.querySelectorAll('fieldset[data-kind="slider"] input[type=range]').forEach(function (range) {
    var moved = document.getElementById(range.dataset.movedField);
    var output = document.getElementById(range.dataset.output);
    var anchors = Array.prototype.map.call(
      range.closest("fieldset").querySelectorAll("[data-anchor]"),
      function (a) { return { value: parseFloat(a.dataset.anchor), label: a.textContent.trim() }; });
    function valueText() {
      var value = parseFloat(range.value);
      var nearest = anchors.reduce(function (best, a) {
        return !best || Math.abs(a.value - value) < Math.abs(best.value - value) ? a : best;
      }, null);
      return nearest ? t("%(value)s, near %(label)s", { value: range.value, label: nearest.label })
                     : range.value;
    }
    function mark() {
      moved.value = "1";
      range.classList.remove("unmoved");
      output.textContent = range.value;
      range.setAttribute("aria-valuetext", valueText());
    }
    if (moved.value === "1") { range.setAttribute("aria-valuetext", valueText()); }
    range.addEventListener("input", mark);
    range.addEventListener("change", mark);
  });
})();
