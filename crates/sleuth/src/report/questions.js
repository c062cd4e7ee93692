// Filters of the side-by-side page, one form per dataset table: "A right, B wrong",
// hop count, and one arm's outcome. Reads only data-* attributes and select values
// (arm positions and our own outcome names), never text from the records.
(function () {
  var forms = document.querySelectorAll("form.qfilters");
  forms.forEach(function (form) {
    var table = document.getElementById(form.dataset.table);
    var rows = table.querySelectorAll("tr.q");
    var get = function (name) { return form.querySelector("[name=" + name + "]").value; };
    function apply() {
      var a = get("a"), b = get("b"), hops = get("hops");
      var outcome = get("outcome"), arm = get("arm");
      var shown = 0;
      for (var i = 0; i < rows.length; i++) {
        var d = rows[i].dataset;
        var right = d.right.split(" "), outcomes = d.outcome.split(" ");
        var ok = (!hops || d.hops === hops) &&
          (a === "" || right[+a] === "1") && (b === "" || right[+b] === "0");
        if (ok && outcome) {
          ok = arm === "" ? outcomes.indexOf(outcome) >= 0 : outcomes[+arm] === outcome;
        }
        rows[i].style.display = ok ? "" : "none";
        if (ok) shown++;
      }
      form.querySelector(".count").textContent = shown + " of " + rows.length + " shown";
    }
    form.addEventListener("input", apply);
    form.addEventListener("change", apply);
    apply();
  });
})();
