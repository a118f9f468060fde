// Sliders: a score counts only once the handle was moved (mouse, touch or keyboard).
(function () {
  "use strict";
  document.querySelectorAll('fieldset[data-kind="slider"] input[type=range]').forEach(function (range) {
    var moved = document.getElementById(range.dataset.movedField);
    var output = document.getElementById(range.dataset.output);
    function mark() {
      moved.value = "1";
      range.classList.remove("unmoved");
      output.textContent = range.value;
    }
    range.addEventListener("input", mark);
    range.addEventListener("change", mark);
  });
})();
