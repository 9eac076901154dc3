// deployer ui: follows the locks page's server-sent events (docs/ui.md#live-updates).
// The event's data is the table as the server rendered and escaped it.
(function () {
  "use strict";
  var el = document.getElementById("locks");
  if (!el || !window.EventSource) { return; }
  var es = new EventSource(el.getAttribute("data-events"));
  es.addEventListener("locks", function (e) { el.innerHTML = e.data; el.classList.remove("offline"); });
  es.addEventListener("error", function () { el.classList.add("offline"); });
})();
