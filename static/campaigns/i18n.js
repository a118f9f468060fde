// The worker pages' own words for scripts, in the page's language: the page carries them as
// a JSON block (campaigns/pages/language.py, WORKER_SCRIPT_STRINGS) keyed by the English text;
// %(name)s placeholders are filled from `values`. A text the block lacks stays in English.
(function () {
  "use strict";
  var block = document.getElementById("worker-strings");
  var strings = {};
  try { strings = block ? JSON.parse(block.textContent) : {}; } catch (e) { strings = {}; }
  window.workerText = function (text, values) {
    var out = Object.prototype.hasOwnProperty.call(strings, text) ? strings[text] : text;
    return out.replace(/%\((\w+)\)s/g, function (whole, name) {
      return values && Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole;
    });
  };
})();
