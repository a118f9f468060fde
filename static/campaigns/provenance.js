// Free-text answers on item pages: how each text came to be, sent in the hidden `provenance`
// field (read and bounded by campaigns/pages/answer_provenance.py): characters typed (keys
// and input-method compositions), characters pasted or dropped in, paste events, and the time
// from the input's first focus to the save. With the campaign's settings, a paste into them
// (data-block-paste) or a copy of the page's text (data-block-copy) is refused, and a status
// message says so. Nothing here changes what the worker sees otherwise.
(function () {
  "use strict";
  var form = document.querySelector("form.answers");
  if (!form) { return; }
  var field = form.querySelector('input[name="provenance"]');
  var records = {};
  var note = null;

  function say(text) {
    if (!note) {
      note = document.createElement("p");
      note.className = "notice notice--warn";
      note.setAttribute("role", "status");
      form.insertBefore(note, form.querySelector(".pager"));
    }
    note.textContent = window.workerText ? window.workerText(text) : text;
  }

  function freeText(el) {
    return !!el && typeof el.name === "string" && el.name.indexOf("q-") === 0 &&
      (el.tagName === "TEXTAREA" || (el.tagName === "INPUT" && el.type === "text"));
  }

  function record(el) {
    if (!records[el.name]) {
      records[el.name] = { typed: 0, pasted: 0, pastes: 0, since: Date.now() };
    }
    return records[el.name];
  }

  function inserted(event, text) {
    if (!freeText(event.target)) { return; }
    if (form.hasAttribute("data-block-paste")) {
      event.preventDefault();
      say("Pasting is turned off for this study.");
      return;
    }
    var r = record(event.target);
    r.pastes += 1;
    r.pasted += text.length;
  }

  form.addEventListener("focusin", function (event) {
    if (freeText(event.target)) { record(event.target); }
  });
  form.addEventListener("input", function (event) {
    if (freeText(event.target) && /^insert(Text|LineBreak|Paragraph)$/.test(event.inputType)) {
      record(event.target).typed += event.data ? event.data.length : 1;
    }
  });
  form.addEventListener("compositionend", function (event) {
    if (freeText(event.target)) { record(event.target).typed += (event.data || "").length; }
  });
  form.addEventListener("paste", function (event) {
    inserted(event, (event.clipboardData && event.clipboardData.getData("text")) || "");
  });
  form.addEventListener("drop", function (event) {
    inserted(event, (event.dataTransfer && event.dataTransfer.getData("text")) || "");
  });
  if (form.hasAttribute("data-block-copy")) {
    ["copy", "cut"].forEach(function (type) {
      document.addEventListener(type, function (event) {
        if (event.target.closest && event.target.closest("textarea, input")) { return; }
        event.preventDefault();
        say("Copying is turned off for this study.");
      });
    });
  }
  form.addEventListener("submit", function () {
    if (!field) { return; }
    var now = Date.now();
    var out = {};
    Object.keys(records).forEach(function (name) {
      var r = records[name];
      out[name] = { typed: r.typed, pasted: r.pasted, pastes: r.pastes, ms: now - r.since };
    });
    field.value = JSON.stringify(out);
  });
})();
