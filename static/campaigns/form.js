// Item and start forms: stop a second submit while the first is on its way (double clicks).
(function () {
  "use strict";
  document.querySelectorAll("form").forEach(function (form) {
    form.addEventListener("submit", function () {
      if (form.dataset.sending) { return; }
      form.dataset.sending = "1";
      window.setTimeout(function () {
        form.querySelectorAll("[data-submit]").forEach(function (b) { b.disabled = true; });
      }, 0);
    });
  });
  var firstError = document.querySelector(".error-summary a, .has-error");
  if (firstError) {
    var target = document.querySelector(".has-error input, .has-error textarea");
    if (target) { target.focus({ preventScroll: false }); }
  }
})();
