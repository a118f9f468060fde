// Likert scales: number keys choose a point of the scale that has focus, or else of the first
// unanswered scale (never while typing in a text box).
(function () {
  "use strict";
  var scales = Array.prototype.slice.call(document.querySelectorAll('fieldset[data-kind="likert"]'));
  if (!scales.length) { return; }
  function target(active) {
    var own = active && active.closest ? active.closest('fieldset[data-kind="likert"]') : null;
    if (own) { return own; }
    return scales.find(function (s) { return !s.querySelector("input:checked"); }) || null;
  }
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) { return; }
    var active = document.activeElement;
    if (active && (active.tagName === "TEXTAREA" || (active.tagName === "INPUT" && active.type === "text"))) { return; }
    if (!/^[0-9]$/.test(event.key)) { return; }
    var scale = target(active);
    if (!scale) { return; }
    var input = scale.querySelector('input[type=radio][value="' + event.key + '"]');
    if (!input) { return; }
    event.preventDefault();
    input.checked = true;
    input.focus();
    input.dispatchEvent(new Event("change", { bubbles: true }));
  });
})();
