// Pairwise questions: the keys shown next to each choice (a, b, t) pick it, except while
// typing in a text field; a tie clears the strength (a tie has none).
(function () {
  "use strict";
  var sets = document.querySelectorAll('fieldset[data-kind="pairwise"]');
  if (!sets.length) { return; }
  sets.forEach(function (set) {
    set.addEventListener("change", function (event) {
      if (event.target.name && event.target.name.slice(-7) === ".choice" && event.target.value === "tie") {
        set.querySelectorAll('input[name$=".strength"]').forEach(function (s) { s.checked = false; });
      }
    });
  });
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName) && target.type !== "radio") { return; }
    if (sets.length !== 1) { return; }  // with several pairwise questions, keys would be ambiguous
    var radio = sets[0].querySelector('input[data-key="' + event.key.toLowerCase() + '"]');
    if (radio) {
      radio.checked = true;
      radio.dispatchEvent(new Event("change", { bubbles: true }));
      radio.focus();
      event.preventDefault();
    }
  });
})();
