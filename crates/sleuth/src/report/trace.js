// Shows and hides questions by the filters; reads only data-* attributes, never text.
(function () {
  var ids = ["f-method", "f-outcome", "f-timeout", "f-text"];
  var items = document.querySelectorAll("details.q");
  function apply() {
    var m = document.getElementById("f-method").value;
    var o = document.getElementById("f-outcome").value;
    var t = document.getElementById("f-timeout").value;
    var s = document.getElementById("f-text").value.toLowerCase();
    var shown = 0;
    for (var i = 0; i < items.length; i++) {
      var d = items[i].dataset;
      var ok = (!m || d.method === m) && (!o || d.correct === o) &&
        (!t || d.timeout === t) && (!s || d.text.indexOf(s) >= 0);
      items[i].style.display = ok ? "" : "none";
      if (ok) shown++;
    }
    document.getElementById("f-count").textContent = shown + " of " + items.length + " shown";
  }
  ids.forEach(function (id) {
    document.getElementById(id).addEventListener("input", apply);
  });
  apply();
  // A link from the side-by-side view opens the question it names.
  if (location.hash) {
    var target = document.getElementById(location.hash.slice(1));
    if (target && target.tagName === "DETAILS") {
      target.open = true;
      target.scrollIntoView();
    }
  }
})();
