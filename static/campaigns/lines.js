// Per-line labels: the rewrite box appears, and becomes required, when its line gets a label
// that asks for it ("inconsistent").
(function () {
  "use strict";
  document.querySelectorAll('fieldset[data-kind="lines"]').forEach(function (question) {
    var when = (question.dataset.followupWhen || "").split(" ").filter(Boolean);
    question.querySelectorAll(".line-fieldset").forEach(function (line) {
      var box = line.querySelector("[data-followup]");
      if (!box) { return; }
      var text = box.querySelector("textarea");
      function update() {
        var chosen = line.querySelector("input[type=radio]:checked");
        var show = !!chosen && when.indexOf(chosen.value) !== -1;
        box.hidden = !show;
        text.required = show;
      }
      line.addEventListener("change", function (event) {
        if (event.target.type === "radio") { update(); }
      });
      update();
    });
  });
})();
