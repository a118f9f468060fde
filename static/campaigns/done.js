// The done page takes a platform's participant back by itself after a short pause (the
// platform records the completion on arrival), announced in the status line. The pause can
// be stopped ("Stay on this page"), so nobody is moved on before they have read the code.
(function () {
  "use strict";
  // The page's words in its language (i18n.js); English with its placeholders filled without.
  var t = window.workerText || function (text, values) {
    return text.replace(/%\((\w+)\)s/g, function (w, n) { return values && n in values ? String(values[n]) : w; });
  };
  var link = document.getElementById("completion-link");
  if (!link || !link.dataset.returnAfter) return;
  var seconds = parseInt(link.dataset.returnAfter, 10);
  if (!(seconds >= 0)) return;
  var status = document.getElementById("return-status");
  var stay = document.getElementById("stay-here");
  var timer = window.setTimeout(function () { window.location.assign(link.href); }, seconds * 1000);
  if (stay) {
    stay.hidden = false;
    stay.addEventListener("click", function () {
      window.clearTimeout(timer);
      stay.hidden = true;
      if (status) status.textContent = t("You stay on this page. Press the button when you are ready to return.");
      link.focus();
    });
  }
})();
