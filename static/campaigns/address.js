// A worker page sent as the answer to a POST (the next item after a save, the first item after
// the start, the done page after the hand-in) names its own address in data-page-url. Putting
// it in the address bar with replaceState makes that history entry a plain GET of the page:
// reload shows the page again instead of offering to resend the form, and back and forward
// move between the item pages as their links would.
(function () {
  "use strict";
  var url = document.body.dataset.pageUrl;
  if (url && window.history && window.history.replaceState &&
      window.location.pathname + window.location.search !== url) {
    window.history.replaceState(window.history.state, "", url);
  }
})();
