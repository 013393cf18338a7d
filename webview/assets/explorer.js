// The explorer page's script: the zero-field toggle, the reproduce
// command, the story (fetched when opened), and "shortest violation from
// here" (a search the server runs,
// read line by line; stop aborts the request, which stops the search).
// Every other control is a plain link: the page works without it.
(function () {
  'use strict';
  var zero = document.getElementById('show-zero');
  if (zero) {
    zero.checked = document.body.classList.contains('show-zero');
    zero.addEventListener('change', function () {
      document.body.classList.toggle('show-zero', zero.checked);
    });
  }
  var rep = document.getElementById('reproduce');
  if (rep) {
    rep.addEventListener('click', function () {
      var pre = document.getElementById('reproduce-command');
      pre.hidden = !pre.hidden;
    });
  }
  var story = document.getElementById('story');
  if (story) {
    story.addEventListener('toggle', function () {
      if (!story.open || story.dataset.loaded) return;
      story.dataset.loaded = 'yes';
      var pre = document.getElementById('story-text');
      fetch(story.dataset.src).then(function (r) {
        return r.text().then(function (t) {
          if (r.ok) pre.innerHTML = t; else pre.textContent = t.trim();
          story.dataset.ready = 'yes';
        });
      }).catch(function (err) { pre.textContent = 'the story could not be loaded: ' + err.message; });
    });
  }
  var running = null; // the search in flight: {abort, row}

  function searchURL(property) {
    var path = location.pathname.replace(/^\/explore\//, '/search/');
    var q = new URLSearchParams(location.search);
    var at = q.get('at');
    var out = path + '?property=' + encodeURIComponent(property);
    if (at !== null) out += '&at=' + encodeURIComponent(at);
    return out;
  }

  function finish(row, text, cls) {
    var found = row.querySelector('.found');
    found.textContent = text;
    found.className = 'found ' + (cls || '');
    row.querySelector('.stop').hidden = true;
    row.querySelector('.search').disabled = false;
    running = null;
  }

  function show(row, line) {
    var found = row.querySelector('.found');
    if (line.kind === 'progress') {
      found.textContent = line.text;
      found.className = 'found running';
      return;
    }
    if (line.kind === 'error') {
      finish(row, line.text, 'error');
      return;
    }
    finish(row, line.text, line.status);
    row.dataset.searchStatus = line.status;
    row.dataset.searchSteps = line.steps;
    if (line.href) {
      var a = document.createElement('a');
      a.href = line.href;
      a.className = 'take-found';
      a.textContent = ' take it →';
      found.appendChild(a);
    }
  }

  function start(row) {
    if (running) running.abort.abort();
    var ctl = new AbortController();
    running = {abort: ctl, row: row};
    row.querySelector('.stop').hidden = false;
    row.querySelector('.search').disabled = true;
    delete row.dataset.searchStatus;
    var found = row.querySelector('.found');
    found.textContent = 'starting…';
    found.className = 'found running';
    fetch(searchURL(row.dataset.property), {signal: ctl.signal}).then(function (resp) {
      if (!resp.ok) {
        return resp.text().then(function (t) { finish(row, t.trim(), 'error'); });
      }
      var reader = resp.body.getReader();
      var dec = new TextDecoder();
      var buf = '';
      function pump() {
        return reader.read().then(function (r) {
          if (r.done) return;
          buf += dec.decode(r.value, {stream: true});
          var nl;
          while ((nl = buf.indexOf('\n')) >= 0) {
            var line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line) show(row, JSON.parse(line));
          }
          return pump();
        });
      }
      return pump();
    }).catch(function (err) {
      if (err.name === 'AbortError') {
        finish(row, 'stopped', 'stopped');
        row.dataset.searchStatus = 'stopped';
      } else {
        finish(row, 'the search failed: ' + err.message, 'error');
      }
    });
  }

  document.querySelectorAll('#properties tr.prop').forEach(function (row) {
    row.querySelector('.search').addEventListener('click', function () { start(row); });
    row.querySelector('.stop').addEventListener('click', function () {
      if (running && running.row === row) running.abort.abort();
    });
  });
})();
