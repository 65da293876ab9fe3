(function () {
  var charts = document.querySelectorAll('div.vl');
  var state = window.jsonbenchCharts = {total: charts.length, rendered: 0, failed: 0, errors: []};
  charts.forEach(function (el) {
    var spec;
    try { spec = JSON.parse(document.getElementById(el.dataset.spec).textContent); }
    catch (e) { el.dataset.rendered = 'error'; state.failed++; state.errors.push(String(e)); return; }
    vegaEmbed(el, spec, {actions: false, renderer: 'svg', tooltip: {theme: 'light'}}).then(function () {
      el.dataset.rendered = '1'; state.rendered++;
    }).catch(function (e) {
      el.dataset.rendered = 'error'; state.failed++; state.errors.push(String(e));
      var p = document.createElement('p'); p.className = 'vl-error'; p.textContent = 'This chart could not be drawn: ' + e; el.appendChild(p);
    });
  });
  var only = document.getElementById('only-problems');
  if (only) only.addEventListener('change', function () {
    document.querySelectorAll('table.scorecard tr.finding').forEach(function (tr) {
      tr.style.display = (only.checked && !tr.classList.contains('has-problem')) ? 'none' : '';
    });
  });
})();
