// Best-worst questions: one output cannot be both, so marking one clears the other on the
// same row; digit keys pick the best, shift+digit the worst (not while typing).
(function () {
  "use strict";
  var sets = document.querySelectorAll('fieldset[data-kind="bws"]');
  if (!sets.length) { return; }
  sets.forEach(function (set) {
    set.addEventListener("change", function (event) {
      var input = event.target;
      if (input.type !== "radio" || !input.checked) { return; }
      var other = input.name.slice(-5) === ".best" ? input.name.slice(0, -5) + ".worst"
        : input.name.slice(0, -6) + ".best";
      set.querySelectorAll('input[name="' + other + '"]').forEach(function (o) {
        if (o.value === input.value) { o.checked = false; }
      });
    });
  });
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey || sets.length !== 1) { return; }
    if (/^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName) && target.type !== "radio") { return; }
    var digit = /^Digit([1-6])$/.exec(event.code || "");
    if (!digit) { return; }
    var key = (event.shiftKey ? "shift+" : "") + digit[1];
    var radio = sets[0].querySelector('input[data-key="' + key + '"]');
    if (radio) {
      radio.checked = true;
      radio.dispatchEvent(new Event("change", { bubbles: true }));
      radio.focus();
      event.preventDefault();
    }
  });
})();
