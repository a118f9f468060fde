// Worker forms (start page, item pages, finish page):
// - one submit at a time (a double click sends one request);
// - after a rejected save, focus lands on the first unanswered or invalid control;
// - number keys answer a key group: a question widget marks its groups [data-key-group] and
//   their inputs [data-key] (a kind's template decides which keys mean what). The key answers
//   the focused group (else the first unanswered one), then focus moves on to the next group,
//   or to a text box the answer just opened. Never while typing in a text box.
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

  function shown(el) {
    return !el.closest("[hidden]") && el.getClientRects().length > 0;
  }

  function controls(scope) {
    if (scope.matches("input, textarea, select")) { return [scope]; }
    return Array.prototype.filter.call(
      scope.querySelectorAll("input:not([type=hidden]), textarea, select"), shown);
  }

  function unanswered(scope, list) {
    return list.find(function (c) {
      if (c.type === "radio" || c.type === "checkbox") {
        return !scope.querySelector('input[name="' + CSS.escape(c.name) + '"]:checked');
      }
      return c.type !== "range" && !c.value.trim();
    });
  }

  // The innermost invalid part comes first: a rubric criterion or a summary line rather than
  // the whole question, so focus lands on C9 when C1-C8 are answered.
  function focusFirstProblem() {
    var invalid = Array.prototype.slice.call(document.querySelectorAll('[aria-invalid="true"]'));
    var scope = invalid.find(function (el) { return !el.querySelector('[aria-invalid="true"]'); });
    if (!scope) { return; }
    var list = controls(scope);
    var target = unanswered(scope, list) || list[0];
    if (target) { target.focus(); }
  }
  if (document.querySelector(".error-summary, .has-error")) { focusFirstProblem(); }

  var groups = Array.prototype.slice.call(document.querySelectorAll("[data-key-group]"));
  if (!groups.length) { return; }

  function typing(el) {
    if (!el) { return false; }
    if (el.tagName === "TEXTAREA" || el.tagName === "SELECT") { return true; }
    return el.tagName === "INPUT" && !/^(radio|checkbox|button|submit)$/.test(el.type);
  }

  function moveOn(group, chosen) {
    var opened = Array.prototype.find.call(group.querySelectorAll("textarea"), function (t) {
      return shown(t) && !t.value.trim();
    });
    if (opened) { opened.focus(); return; }
    var next = groups[groups.indexOf(group) + 1];
    var target = next ? (next.querySelector("input[data-key]:checked") ||
                         next.querySelector("input[data-key]")) : null;
    (target || chosen).focus();
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || !/^[0-9]$/.test(event.key)) { return; }
    var active = document.activeElement;
    if (typing(active)) { return; }
    var group = active && active.closest ? active.closest("[data-key-group]") : null;
    group = group || groups.find(function (g) { return !g.querySelector("input:checked"); });
    if (!group) { return; }
    var input = group.querySelector('input[data-key="' + event.key + '"]');
    if (!input) { return; }
    event.preventDefault();
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    moveOn(group, input);
  });
})();
