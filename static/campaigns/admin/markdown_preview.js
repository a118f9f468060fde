// Live preview for the campaign's Markdown fields (instructions, examples, consent): a button
// under each textarea posts the text to the admin's preview URL, which renders it with the same
// sanitiser as the worker pages, and shows the result below. No inline scripts.
(function () {
  "use strict";

  function csrfToken(form) {
    const input = form && form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function attach(textarea) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "button markdown-preview-button";
    button.textContent = "Preview";
    const output = document.createElement("div");
    output.className = "markdown-preview live";
    output.hidden = true;
    output.setAttribute("aria-live", "polite");
    textarea.insertAdjacentElement("afterend", output);
    textarea.insertAdjacentElement("afterend", button);

    button.addEventListener("click", function () {
      const body = new URLSearchParams({ text: textarea.value });
      fetch(textarea.dataset.markdownPreview, {
        method: "POST",
        credentials: "same-origin",
        headers: { "X-CSRFToken": csrfToken(textarea.form) },
        body: body,
      }).then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      }).then(function (data) {
        // The server sanitised this HTML (nh3: no scripts, styles, handlers or javascript: links).
        output.innerHTML = data.html || "<p><em>Nothing to show.</em></p>";
        output.hidden = false;
      }).catch(function (error) {
        output.textContent = "The preview failed (" + error.message + ").";
        output.hidden = false;
      });
    });
  }

  function init() {
    document.querySelectorAll("textarea[data-markdown-preview]").forEach(attach);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
