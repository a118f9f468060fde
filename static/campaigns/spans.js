// Error spans: the worker marks spans of one item field's exact text and labels each with a
// severity (and a category). The marks are drawn with text nodes only (never HTML from the
// item); offsets are code points (Python's str indices, not JavaScript's UTF-16 units) and the
// hidden input holds the JSON list of spans the server validates.
// Mouse: select words (or double-click one). Touch and click: tap the first word, then the
// last. Keyboard, on the focused text: arrows move a caret (ctrl/alt+arrows by word), shift
// extends, Enter marks (a number key marks with that severity), Escape cancels.
(function () {
  "use strict";
  // The page's words in its language (i18n.js); English with its placeholders filled without.
  var t = window.workerText || function (text, values) {
    return text.replace(/%\((\w+)\)s/g, function (w, n) { return values && n in values ? String(values[n]) : w; });
  };
  var TOKEN = /\s+|[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]|[\p{L}\p{N}\p{M}]+(?:['\u2019-][\p{L}\p{N}\p{M}]+)*|[^\s]/gu;
  var sets = document.querySelectorAll('fieldset[data-kind="spans"]');
  sets.forEach(init);

  // Spans kept open in an editor are not lost by a careless submit: capture runs before the
  // form's own submit handler (which locks the form).
  if (sets.length) {
    document.addEventListener("submit", function (event) {
      var open = Array.prototype.find.call(sets, function (set) { return set.spansPending(); });
      if (open) {
        event.preventDefault();
        event.stopImmediatePropagation();
        open.spansWarn(t("Mark the selected span (or cancel it) before saving."));
      }
    }, true);
  }

  function init(set) {
    var text = JSON.parse(document.getElementById(set.dataset.text).textContent);
    var cps = Array.from(text);
    var n = cps.length;
    var box = set.querySelector(".spans-text");
    var input = set.querySelector('input[type="hidden"]');
    var editor = set.querySelector(".spans-editor");
    var quote = editor.querySelector(".spans-quote");
    var extendHint = editor.querySelector(".spans-extend");
    var problem = editor.querySelector(".spans-problem");
    var saveButton = editor.querySelector('[data-action="save"]');
    var deleteButton = editor.querySelector('[data-action="delete"]');
    var category = editor.querySelector("select");
    var radios = Array.prototype.slice.call(editor.querySelectorAll('input[type="radio"]'));
    var status = set.querySelector('[role="status"]');
    var list = set.querySelector(".spans-list");
    var count = set.querySelector(".spans-count");
    var none = set.querySelector(".spans-none");
    var max = parseInt(set.dataset.max, 10) || 100;
    var overlapAllowed = set.hasAttribute("data-overlap");
    var categoryRequired = set.hasAttribute("data-require-category");
    var labels = {};
    radios.forEach(function (r) {
      labels[r.value] = r.closest("label").querySelector(".option-label").textContent.trim();
    });
    if (category) {
      Array.prototype.forEach.call(category.options, function (o) {
        if (o.value) { labels[o.value] = o.textContent.trim(); }
      });
    }
    var tokens = tokenize();
    var spans = read();
    var pending = null;   // {start, end}: the selection waiting for its labels
    var tapAnchor = null; // the first word tapped
    var keyAnchor = null; // where shift+arrows started
    var caret = 0;
    var editing = -1;     // the index of the span being edited, or -1

    set.spansPending = function () { return pending !== null; };
    set.spansWarn = function (message) {
      show(message);
      (radios.find(function (r) { return r.checked; }) || radios[0]).focus();
    };

    function tokenize() {
      var cpAt = [], cp = 0, i = 0;
      while (i < text.length) {
        cpAt[i] = cp;
        if (text.codePointAt(i) > 0xffff) { cpAt[i + 1] = cp; i += 2; } else { i += 1; }
        cp += 1;
      }
      cpAt[text.length] = cp;
      var out = [], m;
      TOKEN.lastIndex = 0;
      while ((m = TOKEN.exec(text)) !== null) {
        out.push({ start: cpAt[m.index], end: cpAt[m.index + m[0].length], space: /^\s/.test(m[0]) });
      }
      return out;
    }

    function read() {
      try {
        var value = JSON.parse(input.value || "[]");
        return Array.isArray(value) ? value : [];
      } catch (e) {
        return [];
      }
    }

    function slice(start, end) { return cps.slice(start, end).join(""); }

    function write() {
      spans.sort(function (a, b) { return a.start - b.start || a.end - b.end; });
      input.value = JSON.stringify(spans.map(function (s) {
        return { start: s.start, end: s.end, text: slice(s.start, s.end), severity: s.severity,
                 category: s.category || null };
      }));
    }

    function tokenAt(cp) {
      return tokens.findIndex(function (t) { return t.start <= cp && cp < t.end; });
    }

    function severityRank(value) {
      var i = radios.findIndex(function (r) { return r.value === value; });
      return Math.min(i + 1, 5);
    }

    function describe(s) {
      return labels[s.severity] + (s.category ? " · " + labels[s.category] : "");
    }

    // --- drawing ----------------------------------------------------------------------------

    function render() {
      var cuts = [0, n, caret];
      tokens.forEach(function (t) { cuts.push(t.start); });
      spans.forEach(function (s) { cuts.push(s.start, s.end); });
      if (pending) { cuts.push(pending.start, pending.end); }
      cuts = cuts.filter(function (c, i) { return cuts.indexOf(c) === i; })
        .sort(function (a, b) { return a - b; });
      var fragment = document.createDocumentFragment();
      for (var i = 0; i + 1 < cuts.length; i++) {
        fragment.appendChild(segment(cuts[i], cuts[i + 1]));
      }
      var end = document.createElement("span");
      end.dataset.start = String(n);
      end.className = "spans-end" + (caret === n ? " spans-caret" : "");
      fragment.appendChild(end);
      box.replaceChildren(fragment);
      drawList();
    }

    function segment(a, b) {
      var covering = [];
      spans.forEach(function (s, i) { if (s.start <= a && b <= s.end) { covering.push(i); } });
      var el = document.createElement(covering.length ? "mark" : "span");
      el.dataset.start = String(a);
      el.textContent = slice(a, b);
      var classes = [];
      if (covering.length) {
        var rank = Math.max.apply(null, covering.map(function (i) {
          return severityRank(spans[i].severity);
        }));
        classes.push("spans-mark", "spans-sev-" + rank);
        if (covering.length > 1) { classes.push("spans-overlap"); }
        el.dataset.span = String(covering[0]);
        el.title = covering.map(function (i) { return describe(spans[i]); }).join("; ");
      }
      if (pending && pending.start <= a && b <= pending.end) { classes.push("spans-pending"); }
      if (a === caret) { classes.push("spans-caret"); }
      el.className = classes.join(" ");
      return el;
    }

    function drawList() {
      var items = spans.map(function (s, i) {
        var li = document.createElement("li");
        var q = document.createElement("q");
        q.textContent = slice(s.start, s.end);
        var tags = document.createElement("span");
        tags.className = "spans-labels spans-sev-" + severityRank(s.severity);
        tags.textContent = describe(s);
        li.append(q, " ", tags, " ", button("Edit", i, q.textContent),
                  button("Delete", i, q.textContent));
        return li;
      });
      list.replaceChildren.apply(list, items);
      count.textContent = String(spans.length);
      none.hidden = spans.length > 0;
    }

    function button(action, i, quoted) {
      var b = document.createElement("button");
      b.type = "button";
      b.className = "button button--secondary spans-item-" + action.toLowerCase();
      b.textContent = t(action);
      b.setAttribute("aria-label", t(action === "Edit" ? "Edit span \u201c%(text)s\u201d"
                                                       : "Delete span \u201c%(text)s\u201d",
                                     { text: quoted }));
      b.addEventListener("click", function () {
        if (action === "Edit") { edit(i, true); } else { remove(i, true); }
      });
      return b;
    }

    function announce(message) {
      status.textContent = "";
      window.setTimeout(function () { status.textContent = message; }, 30);
    }

    function show(message) {
      problem.textContent = message;
      problem.hidden = !message;
    }

    // --- the editor -------------------------------------------------------------------------

    function select(range, focusEditor) {
      pending = range;
      show("");
      editor.hidden = false;
      quote.textContent = slice(range.start, range.end);
      extendHint.hidden = editing >= 0;
      saveButton.textContent = t(editing >= 0 ? "Save changes" : "Mark span");
      deleteButton.hidden = editing < 0;
      if (editing < 0 && !radios.some(function (r) { return r.checked; }) && category) {
        category.value = "";
      }
      render();
      announce(t(category ? "Selected: %(text)s. Choose a severity and a category."
                          : "Selected: %(text)s. Choose a severity.", { text: quote.textContent }));
      if (focusEditor) {
        (radios.find(function (r) { return r.checked; }) || radios[0]).focus();
      }
    }

    function close(refocus) {
      pending = null;
      tapAnchor = null;
      keyAnchor = null;
      editing = -1;
      editor.hidden = true;
      radios.forEach(function (r) { r.checked = false; });
      show("");
      render();
      if (refocus) { box.focus(); }
    }

    function edit(i, focusEditor) {
      var s = spans[i];
      editing = i;
      radios.forEach(function (r) { r.checked = r.value === s.severity; });
      if (category) { category.value = s.category || ""; }
      caret = s.start;
      select({ start: s.start, end: s.end }, focusEditor);
    }

    function remove(i, refocus) {
      var gone = spans.splice(i, 1)[0];
      write();
      close(false);
      announce(t("Deleted the span \u201c%(text)s\u201d.", { text: slice(gone.start, gone.end) }));
      if (refocus) { box.focus(); }
    }

    function save() {
      var checked = radios.find(function (r) { return r.checked; });
      if (!checked) { show(t("Choose a severity.")); radios[0].focus(); return; }
      var chosen = category ? category.value : "";
      if (categoryRequired && !chosen) { show(t("Choose a category.")); category.focus(); return; }
      var clash = spans.find(function (s, i) {
        return i !== editing && (overlapAllowed
          ? s.start === pending.start && s.end === pending.end && s.severity === checked.value &&
            (s.category || "") === chosen
          : s.start < pending.end && pending.start < s.end);
      });
      if (clash) {
        show(t("This overlaps the span \u201c%(text)s\u201d: edit or delete that one instead.",
               { text: slice(clash.start, clash.end) }));
        return;
      }
      if (editing < 0 && spans.length >= max) { show(t("At most %(max)s spans.", { max: max })); return; }
      var span = { start: pending.start, end: pending.end, severity: checked.value,
                   category: chosen || null };
      if (editing >= 0) { spans[editing] = span; } else { spans.push(span); }
      write();
      caret = span.end;
      var keyboard = editor.contains(document.activeElement);
      close(keyboard);
      announce(t(spans.length === 1 ? "Marked \u201c%(text)s\u201d as %(label)s. 1 span marked."
                                     : "Marked \u201c%(text)s\u201d as %(label)s. %(n)s spans marked.",
                 { text: slice(span.start, span.end), label: describe(span), n: spans.length }));
    }

    editor.addEventListener("click", function (event) {
      var action = event.target.closest("[data-action]");
      if (!action) { return; }
      if (action.dataset.action === "save") { save(); }
      if (action.dataset.action === "delete") { remove(editing, true); }
      if (action.dataset.action === "cancel") { close(true); }
    });
    editor.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && event.target.tagName !== "BUTTON") {
        event.preventDefault(); // not the form's submit
        save();
      } else if (event.key === "Escape") {
        event.preventDefault();
        close(true);
      } else if (/^[1-9]$/.test(event.key) && radios[event.key - 1] &&
                 event.target.tagName !== "SELECT") {
        event.preventDefault();
        event.stopPropagation();
        radios[event.key - 1].checked = true;
        radios[event.key - 1].focus();
      }
    });

    // --- mouse and touch --------------------------------------------------------------------

    function pointToCp(node, offset) {
      if (node.nodeType === Node.TEXT_NODE) {
        var start = parseInt(node.parentNode.dataset.start, 10);
        return start + Array.from(node.data.slice(0, offset)).length;
      }
      if (node === box) {
        var child = box.children[offset];
        return child ? parseInt(child.dataset.start, 10) : n;
      }
      var el = node.closest("[data-start]");
      if (!el || !box.contains(el)) { return null; }
      var from = parseInt(el.dataset.start, 10);
      return offset === 0 ? from : from + Array.from(el.textContent).length;
    }

    function fromSelection() {
      var sel = window.getSelection();
      if (!sel || sel.isCollapsed || !sel.rangeCount) { return null; }
      var range = sel.getRangeAt(0);
      if (!box.contains(range.startContainer) || !box.contains(range.endContainer)) {
        return null;
      }
      var a = pointToCp(range.startContainer, range.startOffset);
      var b = pointToCp(range.endContainer, range.endOffset);
      if (a === null || b === null || a >= b) { return null; }
      sel.removeAllRanges();
      return trimmed(a, b);
    }

    // Without the blanks a drag, a double-click or ctrl+shift+arrow takes along, unless only
    // blanks are selected (a missing word is marked on the space where it belongs).
    function trimmed(a, b) {
      if (slice(a, b).trim()) {
        while (/\s/.test(cps[a])) { a += 1; }
        while (/\s/.test(cps[b - 1])) { b -= 1; }
      }
      return { start: a, end: b };
    }

    // A drag (or a double-click) selects; a click without moving taps a word.
    var downAt = null;
    box.addEventListener("mousedown", function (event) {
      downAt = { x: event.clientX, y: event.clientY };
    });
    function onPointerUp() {
      var range = fromSelection();
      if (range) {
        tapAnchor = null;
        caret = range.end;
        select(range, false);
      }
    }
    box.addEventListener("mouseup", onPointerUp);
    box.addEventListener("touchend", function () { window.setTimeout(onPointerUp, 0); });

    box.addEventListener("click", function (event) {
      var dragged = downAt && Math.abs(event.clientX - downAt.x) + Math.abs(event.clientY - downAt.y) > 4;
      downAt = null;
      if (dragged || event.detail > 1) { return; }
      var el = event.target.closest("[data-start]");
      if (!el || !box.contains(el)) { return; }
      var at = parseInt(el.dataset.start, 10);
      // A click on a mark edits it; where spans may overlap, it selects inside it instead
      // (the list's Edit buttons edit).
      if (el.dataset.span !== undefined && !pending && !overlapAllowed) {
        edit(parseInt(el.dataset.span, 10), false);
        return;
      }
      var t = tokenAt(at);
      if (t < 0 || tokens[t].space) { return; }
      tap(tokens[t]);
    });

    function tap(token) {
      if (editing >= 0 && tapAnchor === null) {
        // While editing, a tap starts the edited span's new extent.
        tapAnchor = token;
        caret = token.end;
        select({ start: token.start, end: token.end }, false);
        return;
      }
      if (tapAnchor === null || !pending) {
        tapAnchor = token;
      } else if (pending.start === token.start && pending.end === token.end) {
        close(false); // tapping the one selected word again lets go of it
        return;
      }
      var range = { start: Math.min(tapAnchor.start, token.start),
                    end: Math.max(tapAnchor.end, token.end) };
      caret = range.end;
      select(range, false);
    }

    // --- keyboard ---------------------------------------------------------------------------

    function wordStep(from, direction) {
      var words = tokens.filter(function (t) { return !t.space; });
      if (direction > 0) {
        var next = words.find(function (t) { return t.end > from; });
        return next ? next.end : n;
      }
      var before = words.filter(function (t) { return t.start < from; }).pop();
      return before ? before.start : 0;
    }

    box.addEventListener("keydown", function (event) {
      var key = event.key;
      // Right to left (an Arabic or Hebrew page), the left arrow moves on through the text.
      var ahead = window.getComputedStyle(box).direction === "rtl" ? -1 : 1;
      var moves = { ArrowLeft: -ahead, ArrowRight: ahead, Home: -Infinity, End: Infinity };
      if (key in moves && !event.metaKey) {
        event.preventDefault();
        var to = Math.abs(moves[key]) === Infinity ? (moves[key] < 0 ? 0 : n)
          : event.ctrlKey || event.altKey ? wordStep(caret, moves[key]) : caret + moves[key];
        to = Math.max(0, Math.min(n, to));
        if (event.shiftKey) {
          keyAnchor = keyAnchor === null ? caret : keyAnchor;
          caret = to;
          if (keyAnchor === caret) { pending = null; render(); return; }
          select(trimmed(Math.min(keyAnchor, caret), Math.max(keyAnchor, caret)), false);
        } else {
          keyAnchor = null;
          caret = to;
          if (editing < 0 && pending) { close(false); } else { render(); }
          var at = tokenAt(caret);
          announce(caret === n ? t("End of text") : at >= 0 && !tokens[at].space
            ? slice(tokens[at].start, tokens[at].end) : t("space"));
        }
      } else if (key === "Enter") {
        event.preventDefault();
        var inside = spans.findIndex(function (s) { return s.start <= caret && caret < s.end; });
        if (pending) {
          select(pending, true);
        } else if (inside >= 0) {
          edit(inside, true);
        } else {
          announce(t("Nothing selected: hold shift and use the arrow keys to select."));
        }
      } else if (/^[1-9]$/.test(key) && pending && radios[key - 1] && !event.ctrlKey &&
                 !event.altKey && !event.metaKey) {
        event.preventDefault();
        event.stopPropagation(); // not the page's number keys for other questions
        radios[key - 1].checked = true;
        if (categoryRequired && category && !category.value) {
          select(pending, false);
          category.focus();
          announce(t("Choose a category."));
        } else {
          save();
          box.focus();
        }
      } else if (key === "Escape" && pending) {
        event.preventDefault();
        close(true);
      }
    });

    write();
    render();
  }
})();
