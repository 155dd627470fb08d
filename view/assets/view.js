// llmhistory view: the one script of the viewer, small on purpose. It
// copies the raw record, and keeps a live page up to date: on each change
// the server reports (Server-Sent Events), it fetches the page's content
// again, drawn and escaped by the server, at most once a second.
(function () {
  'use strict';

  function copyButtons() {
    document.querySelectorAll('button[data-copy]').forEach(function (button) {
      button.hidden = false;
      button.addEventListener('click', function () {
        var source = document.getElementById(button.getAttribute('data-copy'));
        if (!source) return;
        var text = source.textContent;
        var copied = function () {
          button.textContent = 'Copied';
          setTimeout(function () { button.textContent = 'Copy'; }, 1500);
        };
        var select = function () {
          var range = document.createRange();
          range.selectNodeContents(source);
          var selection = window.getSelection();
          selection.removeAllRanges();
          selection.addRange(range);
          try {
            if (document.execCommand('copy')) copied();
          } catch (e) { /* selected: the user can copy it */ }
        };
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(text).then(copied, select);
        } else {
          select();
        }
      });
    });
  }

  function live() {
    var region = document.querySelector('[data-live]');
    var dot = document.getElementById('live');
    if (!region || !window.EventSource || !window.fetch) return;
    var base = document.body.getAttribute('data-base') || '/';
    var only = region.getAttribute('data-live-trace');
    var busy = false, again = false, last = 0;

    function keys() {
      var seen = {};
      region.querySelectorAll('[data-key]').forEach(function (e) { seen[e.getAttribute('data-key')] = true; });
      return seen;
    }

    function refresh() {
      busy = true;
      last = Date.now();
      var before = keys();
      var open = {};
      region.querySelectorAll('details[open][id]').forEach(function (e) { open[e.id] = true; });
      fetch(window.location.href, { headers: { 'X-Live': '1' }, credentials: 'same-origin', cache: 'no-store' })
        .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
        .then(function (html) {
          region.innerHTML = html;
          region.querySelectorAll('[data-key]').forEach(function (e) {
            if (!before[e.getAttribute('data-key')]) e.classList.add('fresh');
          });
          Object.keys(open).forEach(function (id) {
            var d = document.getElementById(id);
            if (d) d.open = true;
          });
          copyButtons();
          region.setAttribute('data-refreshed', String(Date.now()));
        })
        .catch(function () { /* the next change tries again */ })
        .then(function () {
          busy = false;
          if (again) { again = false; schedule(); }
        });
    }

    function schedule() {
      if (busy) { again = true; return; }
      busy = true;
      setTimeout(refresh, Math.max(0, 1000 - (Date.now() - last)));
    }

    var events = new EventSource(base + 'events');
    var lost = false;
    events.addEventListener('open', function () {
      if (dot) dot.classList.add('on');
      if (lost) { lost = false; schedule(); } // what changed while away is not known
    });
    events.addEventListener('error', function () {
      if (dot) dot.classList.remove('on');
      lost = true;
    });
    events.addEventListener('change', function (ev) {
      var change;
      try { change = JSON.parse(ev.data); } catch (e) { return; }
      if (only && !change.reset && !change.more && (change.traces || []).indexOf(only) < 0 &&
          !document.getElementById('indexing')) {
        return;
      }
      schedule();
    });
  }

  // On a phone the filters fold away unless one is set.
  function foldFilters() {
    var more = document.getElementById('more-filters');
    if (more && more.getAttribute('data-active') === '0' && window.matchMedia &&
        window.matchMedia('(max-width: 640px)').matches) {
      more.open = false;
    }
  }

  foldFilters();
  copyButtons();
  live();
})();
