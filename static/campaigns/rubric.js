// Rubric: a running total of the points chosen so far (out of the rubric's maximum).
(function () {
  "use strict";
  document.querySelectorAll('fieldset[data-kind="rubric"]').forEach(function (question) {
    var out = question.querySelector("[data-rubric-total]");
    function update() {
      var total = 0;
      question.querySelectorAll("input[data-points]:checked").forEach(function (input) {
        total += parseInt(input.dataset.points, 10) || 0;
      });
      out.textContent = String(total);
    }
    question.addEventListener("change", update);
    update();
  });
})();
