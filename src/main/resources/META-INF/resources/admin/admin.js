/*
 * The async-jobs admin page (docs/admin.md): a card per service, a live job table with retry and
 * cancel, and a settings editor per service. No dependencies and no build step.
 *
 * Much of what the API returns was chosen by callers (owner ids, error messages, result fields),
 * so this script builds the page with createElement and textContent only, never innerHTML. The
 * Content-Security-Policy the page is served with is the second line of defence: it refuses
 * inline script and anything from another origin.
 */
(function () {
  'use strict';

  var TOKEN_KEY = 'async-jobs.admin-token';
  var REFRESH_MS = 2000;
  var SVG = 'http://www.w3.org/2000/svg';
  var SETTINGS = [
    { name: 'retention_seconds', label: 'Keep finished jobs (seconds)', short: 'kept', format: seconds },
    { name: 'max_concurrent', label: 'Jobs at once', short: 'at once', format: String },
    { name: 'job_timeout_seconds', label: 'Job timeout (seconds)', short: 'timeout', format: seconds },
    { name: 'max_retries', label: 'Recoveries of a vanished job', short: 'retries', format: String },
    {
      name: 'max_attempts',
      label: 'Attempts of a job that fails transiently (1: no retry)',
      short: 'attempts',
      format: String
    },
    {
      name: 'max_pending_per_owner',
      label: 'Pending jobs per owner (0: no limit)',
      short: 'pending per owner',
      format: limit
    },
    {
      name: 'max_running_per_owner',
      label: 'Running jobs per owner (0: no limit)',
      short: 'running per owner',
      format: limit
    },
    {
      name: 'claim_order',
      label: 'Claim order',
      short: 'order',
      format: String,
      choices: [
        ['fifo', 'fifo: enqueue order'],
        ['fair', 'fair: turns between owners']
      ]
    }
  ];

  var token = null;
  var timer = null;
  var cards = new Map(); // service name -> the card's elements
  var rows = new Map(); // job uid -> the row's elements
  var emptyRow = null;
  var previousPages = []; // the pages before the one shown, for "Newer jobs"
  var currentPage = null; // the URL of the page shown, null for the newest
  var nextPage = null;
  var jobsRequest = 0; // the latest jobs request: an older answer must not overwrite a newer one
  var jobsLoadFailed = false;
  var ids = 0;

  function $(id) {
    return document.getElementById(id);
  }

  /** An element with attributes and children; a string child becomes a text node, never markup. */
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      if (attrs[name] != null) node.setAttribute(name, attrs[name]);
    });
    (children || []).forEach(function (child) {
      node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    });
    return node;
  }

  function text(value) {
    return value == null ? '' : String(value);
  }

  function show(element, message, isError) {
    element.textContent = message;
    element.classList.toggle('error', !!isError);
  }

  // ---- Numbers for people ----

  /** A per-owner limit: 0 means none. */
  function limit(value) {
    if (value == null) return '—';
    return value === 0 ? 'no' : String(value);
  }

  function seconds(total) {
    if (total == null) return '—';
    var s = Math.round(total);
    var units = [['d', 86400], ['h', 3600], ['min', 60], ['s', 1]];
    for (var i = 0; i < units.length; i++) {
      var size = units[i][1];
      if (s >= size || size === 1) {
        var whole = Math.floor(s / size);
        var rest = s - whole * size;
        var out = whole + ' ' + units[i][0];
        if (rest && i < units.length - 1) {
          var smaller = units[i + 1];
          var part = Math.floor(rest / smaller[1]);
          if (part) out += ' ' + part + ' ' + smaller[0];
        }
        return out;
      }
    }
    return s + ' s';
  }

  function millis(ms) {
    if (ms == null) return '—';
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    return seconds(ms / 1000);
  }

  function bytes(n) {
    if (n == null) return '—';
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    var i = 0;
    var value = n;
    while (value >= 1024 && i < units.length - 1) {
      value /= 1024;
      i++;
    }
    return (i === 0 ? value : value.toFixed(1)) + ' ' + units[i];
  }

  function when(iso) {
    var date = new Date(iso);
    return isNaN(date.getTime()) ? text(iso) : date.toLocaleString();
  }

  // ---- Talking to the API ----

  /** A refused or failed request: the HTTP status (0: no answer) and the problem's title and detail. */
  function ApiError(status, title, detail) {
    this.status = status;
    this.title = title;
    this.detail = detail;
  }
  ApiError.prototype.toString = function () {
    return this.detail || this.title || 'HTTP ' + this.status;
  };

  function api(method, url, body, withToken) {
    var headers = { Accept: 'application/json' };
    var bearer = withToken || token;
    if (bearer) headers.Authorization = 'Bearer ' + bearer;
    var init = { method: method, headers: headers, cache: 'no-store', credentials: 'omit' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return fetch(url, init).then(
      function (response) {
        return response.text().then(function (raw) {
          var json = null;
          try {
            json = raw ? JSON.parse(raw) : null;
          } catch (e) {
            json = null;
          }
          if (response.ok) return { status: response.status, body: json };
          var problem = json && typeof json === 'object' ? json : {};
          throw new ApiError(
            response.status,
            text(problem.title) || response.statusText,
            text(problem.detail));
        });
      },
      function () {
        throw new ApiError(0, '', 'the service did not answer; check the connection');
      });
  }

  /**
   * Shows a failed request in `element`. A refused token ends the session instead: the page
   * must not go on showing data to someone the service no longer accepts.
   */
  function failed(error, element, prefix) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      signOut(signInProblem(error, true));
      return;
    }
    show(element, prefix + text(error), true);
  }

  // ---- Signing in and out ----

  function cleanToken(raw) {
    return raw.trim().replace(/^bearer\s+/i, '');
  }

  /** The token's claims, for showing who is signed in; the service is what checks them. */
  function claims(jwt) {
    try {
      var part = jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      var binary = atob(part + '==='.slice((part.length + 3) % 4));
      var utf8 = Uint8Array.from(binary, function (c) {
        return c.charCodeAt(0);
      });
      return JSON.parse(new TextDecoder().decode(utf8)) || {};
    } catch (e) {
      return {};
    }
  }

  function signInProblem(error, remembered) {
    var because = error.detail ? ' (' + error.detail + ')' : '';
    if (error.status === 401) {
      return (
        (remembered ? 'The service no longer accepts your token' : 'The service refused this token') +
        because +
        '. Check that it is complete and has not expired, then sign in again.');
    }
    if (error.status === 403) {
      return (
        'This token is valid but lacks the admin role' +
        because +
        '. Sign in with a token of the admin group.');
    }
    return 'Could not sign in: ' + text(error);
  }

  function signIn(candidate, remembered) {
    if (!candidate) {
      showSignIn('Paste a token first.');
      return Promise.resolve();
    }
    return api('GET', '/api/admin/services', undefined, candidate).then(
      function (answer) {
        token = candidate;
        sessionStorage.setItem(TOKEN_KEY, candidate);
        showDashboard();
        renderCards(answer.body);
        loadJobs();
        schedule();
      },
      function (error) {
        // A token kept for this tab survives a service that did not answer; a refused one goes.
        if (error.status === 401 || error.status === 403) sessionStorage.removeItem(TOKEN_KEY);
        showSignIn(signInProblem(error, remembered));
      });
  }

  function signOut(message) {
    token = null;
    sessionStorage.removeItem(TOKEN_KEY);
    clearTimeout(timer);
    timer = null;
    jobsRequest++;
    // Nothing seen while signed in stays on the page.
    cards.clear();
    rows.clear();
    $('cards').textContent = '';
    $('jobs').tBodies[0].textContent = '';
    $('filters').reset();
    var kinds = $('filter-kind');
    while (kinds.options.length > 1) kinds.remove(1);
    previousPages = [];
    currentPage = null;
    nextPage = null;
    show($('jobs-message'), '', false);
    show($('services-message'), '', false);
    showSignIn(message);
  }

  function showSignIn(message) {
    $('dashboard').hidden = true;
    $('session').hidden = true;
    $('sign-in').hidden = false;
    show($('sign-in-message'), message || '', !!message);
  }

  function showDashboard() {
    var who = claims(token);
    var line = 'Signed in as ' + (text(who.sub) || 'an unnamed admin');
    if (typeof who.exp === 'number') {
      line += ', token valid until ' + new Date(who.exp * 1000).toLocaleString();
    }
    $('signed-in-as').textContent = line + '.';
    $('token').value = '';
    show($('sign-in-message'), '', false);
    $('sign-in').hidden = true;
    $('session').hidden = false;
    $('dashboard').hidden = false;
  }

  // ---- Refreshing ----

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(refresh, REFRESH_MS);
  }

  function refresh() {
    if (!token) return;
    if (document.hidden) {
      schedule();
      return;
    }
    Promise.all([loadCards(), loadJobs()]).then(function () {
      if (token) schedule();
    });
  }

  // ---- Service cards ----

  function loadCards() {
    return api('GET', '/api/admin/services').then(
      function (answer) {
        if (!token) return; // signed out while the answer was on its way
        renderCards(answer.body);
        show($('services-message'), '', false);
      },
      function (error) {
        if (token) failed(error, $('services-message'), 'Could not load the services: ');
      });
  }

  function renderCards(list) {
    (list || []).forEach(function (card) {
      var view = cards.get(card.service);
      if (!view) {
        view = buildCard(card);
        cards.set(card.service, view);
        $('cards').appendChild(view.root);
        $('filter-kind').appendChild(el('option', { value: card.service }, [text(card.service)]));
      }
      updateCard(view, card);
    });
  }

  function figure(list, label, name) {
    var value = el('dd', { 'data-figure': name });
    list.appendChild(el('dt', null, [label]));
    list.appendChild(value);
    return value;
  }

  function buildCard(card) {
    var titleId = 'card-' + ++ids;
    var counts = el('dl', { class: 'counts' });
    var count = {};
    ['pending', 'running', 'done', 'failed'].forEach(function (status) {
      var group = el('div');
      count[status] = figure(group, status, null);
      count[status].setAttribute('data-count', status);
      counts.appendChild(group);
    });
    var figures = el('dl', { class: 'figures' });
    var view = {
      count: count,
      finished: figure(figures, 'Finished, last hour', 'finished'),
      bars: el('div', { class: 'bars' }),
      duration: figure(figures, 'Duration p50 / p95', 'duration'),
      bytes: figure(figures, 'Bytes in / out', 'bytes'),
      items: figure(figures, 'Items', 'items'),
      oldest: figure(figures, 'Oldest pending', 'oldest'),
      owners: figure(figures, 'Owner', 'owners'),
      effective: figure(figures, 'Settings in force', 'settings')
    };
    view.settings = buildSettings(card.service, view);
    view.badge = el('span', { class: 'badge paused', 'data-paused-badge': '', hidden: '' }, ['paused']);
    view.pauseNote = el('p', { class: 'pause-note', hidden: '' });
    view.pauseButton = el('button', { type: 'button', class: 'pause', 'data-action': 'pause' }, ['Pause']);
    view.pauseMessage = el('p', { class: 'message', 'aria-live': 'polite' });
    view.pauseButton.addEventListener('click', function () {
      togglePause(card.service, view);
    });
    view.root = el('article', { class: 'card', 'data-service': card.service, 'aria-labelledby': titleId }, [
      el('h3', { id: titleId }, [text(card.title), ' ', view.badge]),
      el('p', { class: 'kind' }, ['kind ', el('code', null, [text(card.service)])]),
      view.pauseNote,
      el('div', { class: 'pause-controls' }, [view.pauseButton, view.pauseMessage]),
      counts,
      view.bars,
      figures,
      view.settings.details
    ]);
    fillSettings(view.settings, card.settings);
    return view;
  }

  function updateCard(view, card) {
    var counts = card.counts || {};
    Object.keys(view.count).forEach(function (status) {
      view.count[status].textContent = text(counts[status]);
      view.count[status].classList.toggle('nonzero', counts[status] > 0);
    });
    view.finished.textContent = text(card.completed_last_hour);
    view.bars.textContent = '';
    view.bars.appendChild(barStrip(card.per_minute || []));
    var d = card.duration_ms || {};
    view.duration.textContent =
      d.p50 == null ? 'none done in the last hour' : millis(d.p50) + ' / ' + millis(d.p95);
    view.bytes.textContent = bytes(card.bytes_in) + ' / ' + bytes(card.bytes_out);
    view.items.textContent = text(card.items);
    view.oldest.textContent =
      card.oldest_pending_age_seconds == null
        ? 'none waiting'
        : seconds(card.oldest_pending_age_seconds) + ' waiting';
    view.owners.textContent = (card.shards || [])
      .map(function (s) {
        var who = s.holder == null ? 'no owner' : s.holder + (s.owned_here ? ' (this replica)' : '');
        var since = s.since == null ? '' : ' since ' + new Date(s.since).toLocaleTimeString();
        return (card.shards.length > 1 || s.shard !== 'all' ? s.shard + ': ' : '') + who + since;
      })
      .join(' · ');
    showEffective(view, card.settings);
    showPause(view, card.pause);
  }

  // ---- Pause and resume ----

  /** The card's badge, note and button as the service's pause says. */
  function showPause(view, pause) {
    var paused = !!(pause && pause.paused);
    view.paused = paused;
    view.badge.hidden = !paused;
    view.root.classList.toggle('is-paused', paused);
    view.pauseButton.textContent = paused ? 'Resume' : 'Pause';
    view.pauseButton.setAttribute('data-action', paused ? 'resume' : 'pause');
    view.pauseNote.hidden = !paused;
    view.pauseNote.textContent = paused
      ? 'Paused' +
        (pause.paused_at ? ' since ' + when(pause.paused_at) : '') +
        (pause.paused_by ? ' by ' + pause.paused_by : '') +
        (pause.reason ? ': ' + pause.reason : '') +
        '. Nothing is claimed; running jobs finish and enqueues wait.'
      : '';
  }

  function togglePause(service, view) {
    var action = view.paused ? 'resume' : 'pause';
    view.pauseButton.disabled = true;
    api('POST', '/api/admin/services/' + encodeURIComponent(service) + '/' + action, action === 'pause' ? {} : undefined)
      .then(
        function (answer) {
          showPause(view, answer.body);
          show(
            view.pauseMessage,
            action === 'pause'
              ? 'Paused: the owner claims nothing until you resume.'
              : 'Resumed: the owner claims again.',
            false);
        },
        function (error) {
          failed(error, view.pauseMessage, 'Could not ' + action + ': ');
        })
      .then(function () {
        view.pauseButton.disabled = false;
      });
  }

  function showEffective(view, settings) {
    if (!settings || !settings.effective) return;
    var overrides = settings.overrides || {};
    view.effective.textContent = SETTINGS.map(function (s) {
      var value = s.format(settings.effective[s.name]) + ' ' + s.short;
      return overrides[s.name] == null ? value : value + ' (override)';
    }).join(' · ');
  }

  /** Jobs finished in each of the last 60 minutes as bars, oldest on the left. */
  function barStrip(perMinute) {
    var max = perMinute.reduce(function (a, b) {
      return Math.max(a, b);
    }, 0);
    var svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', '0 0 120 24');
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('role', 'img');
    svg.setAttribute(
      'aria-label',
      'Jobs finished per minute over the last hour; the busiest minute had ' + max);
    var base = document.createElementNS(SVG, 'rect');
    base.setAttribute('class', 'baseline');
    base.setAttribute('x', '0');
    base.setAttribute('y', '23.5');
    base.setAttribute('width', '120');
    base.setAttribute('height', '0.5');
    svg.appendChild(base);
    perMinute.forEach(function (n, i) {
      if (!n) return;
      var height = Math.max(1, Math.round((n / max) * 23));
      var bar = document.createElementNS(SVG, 'rect');
      bar.setAttribute('x', String(i * 2));
      bar.setAttribute('y', String(23.5 - height));
      bar.setAttribute('width', '1.6');
      bar.setAttribute('height', String(height));
      var tip = document.createElementNS(SVG, 'title');
      tip.textContent = n + ' finished ' + (perMinute.length - i) + ' min ago';
      bar.appendChild(tip);
      svg.appendChild(bar);
    });
    return svg;
  }

  // ---- Settings ----

  function buildSettings(service, card) {
    var form = el('form', { class: 'settings', 'data-service': service, novalidate: '' });
    // Disabled while the settings are read or saved, so an answer never overwrites typing.
    var fieldset = el('fieldset', null, [el('legend', null, ['Settings of ' + service])]);
    form.appendChild(fieldset);
    var fields = {};
    SETTINGS.forEach(function (s) {
      var id = 'setting-' + ++ids;
      var input;
      if (s.choices) {
        input = el('select', { id: id, name: s.name, 'aria-describedby': id + '-hint' }, [
          el('option', { value: '' }, ['as configured'])
        ]);
        s.choices.forEach(function (choice) {
          input.appendChild(el('option', { value: choice[0] }, [choice[1]]));
        });
      } else {
        input = el('input', {
          id: id,
          name: s.name,
          type: 'number',
          step: '1',
          inputmode: 'numeric',
          'aria-describedby': id + '-hint'
        });
      }
      var hint = el('span', { id: id + '-hint', class: 'hint' });
      fieldset.appendChild(el('div', { class: 'field' }, [el('label', { for: id }, [s.label]), input, hint]));
      fields[s.name] = { input: input, hint: hint };
    });
    var button = el('button', { type: 'submit' }, ['Save settings']);
    var message = el('p', { class: 'message', 'aria-live': 'polite' });
    fieldset.appendChild(el('p', { class: 'hint' }, ['An empty field uses the configured value.']));
    fieldset.appendChild(button);
    form.appendChild(message);
    var details = el('details', { class: 'settings-editor' }, [
      el('summary', null, ['Edit settings']),
      form
    ]);
    var view = { details: details, form: form, fieldset: fieldset, fields: fields, message: message };
    details.addEventListener('toggle', function () {
      if (!details.open) return;
      // Another admin may have changed them since the card was drawn.
      busy(view, true);
      api('GET', '/api/admin/services/' + encodeURIComponent(service) + '/settings')
        .then(
          function (answer) {
            fillSettings(view, answer.body);
          },
          function (error) {
            failed(error, message, 'Could not read the settings: ');
          })
        .then(function () {
          busy(view, false);
        });
    });
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      saveSettings(service, view, card);
    });
    return view;
  }

  function busy(view, on) {
    view.fieldset.disabled = on;
    if (on) view.form.setAttribute('aria-busy', 'true');
    else view.form.removeAttribute('aria-busy');
  }

  function fillSettings(view, settings) {
    if (!settings) return;
    var overrides = settings.overrides || {};
    var configured = settings.configured || {};
    SETTINGS.forEach(function (s) {
      var field = view.fields[s.name];
      field.input.value = overrides[s.name] == null ? '' : String(overrides[s.name]);
      if (!s.choices) field.input.placeholder = text(configured[s.name]);
      field.hint.textContent = 'configured: ' + s.format(configured[s.name]);
    });
  }

  function saveSettings(service, view, card) {
    var body = {};
    var bad = null;
    SETTINGS.forEach(function (s) {
      var input = view.fields[s.name].input;
      var value = input.value.trim();
      if (s.choices) {
        body[s.name] = value === '' ? null : value;
      } else if (input.validity.badInput || (value !== '' && !/^-?\d+$/.test(value))) {
        bad = bad || s.label;
      } else {
        // PUT replaces every override: an empty field goes back to the configured value.
        body[s.name] = value === '' ? null : Number(value);
      }
    });
    if (bad) {
      show(view.message, 'Not saved: ' + bad + ' must be a whole number, or empty.', true);
      return;
    }
    busy(view, true);
    show(view.message, 'Saving…', false);
    api('PUT', '/api/admin/services/' + encodeURIComponent(service) + '/settings', body)
      .then(
        function (answer) {
          fillSettings(view, answer.body);
          showEffective(card, answer.body);
          show(view.message, 'Saved. The processing replica applies them on its next tick.', false);
        },
        function (error) {
          failed(error, view.message, 'Not saved: ');
        })
      .then(function () {
        busy(view, false);
      });
  }

  // ---- Bulk actions ----

  var pendingBulk = null; // {action, filter, matched} counted and waiting for confirmation

  /** The bulk filter: the jobs filter's kind, status and owner, and the creation times. */
  function bulkFilter(action) {
    var filter = {};
    var kind = $('filter-kind').value;
    var status = $('filter-status').value;
    var ownerKind = $('filter-owner-kind').value.trim();
    var ownerId = $('filter-owner-id').value;
    if (kind) filter.kind = kind;
    if (status) filter.status = status;
    if (ownerKind || ownerId) {
      filter.owner_kind = ownerKind || 'user';
      filter.owner_id = ownerId;
    }
    var after = $('bulk-created-after').value;
    var before = $('bulk-created-before').value;
    // datetime-local is the browser's local time; the API takes RFC 3339 instants.
    if (after) filter.created_after = new Date(after).toISOString();
    if (before) filter.created_before = new Date(before).toISOString();
    return filter;
  }

  function countForBulk(action) {
    var filter = bulkFilter(action);
    var message = $('bulk-message');
    $('bulk-confirm').hidden = true;
    pendingBulk = null;
    show(message, 'Counting…', false);
    var dry = Object.assign({}, filter, { dry_run: true });
    api('POST', '/api/admin/jobs/' + action, dry).then(
      function (answer) {
        var matched = (answer.body && answer.body.matched) || 0;
        if (matched === 0) {
          show(message, 'No job matches; nothing to ' + action + '.', false);
          return;
        }
        pendingBulk = { action: action, filter: filter, matched: matched };
        show(message, matched.toLocaleString('en') + ' jobs match.', false);
        $('bulk-go').textContent =
          (action === 'cancel' ? 'Cancel ' : 'Retry ') + matched.toLocaleString('en') + ' jobs';
        $('bulk-confirm').hidden = false;
      },
      function (error) {
        failed(error, message, 'Could not count the jobs: ');
      });
  }

  function runBulk() {
    var bulk = pendingBulk;
    if (!bulk) return;
    pendingBulk = null;
    $('bulk-confirm').hidden = true;
    var message = $('bulk-message');
    show(message, (bulk.action === 'cancel' ? 'Cancelling' : 'Retrying') + '…', false);
    api('POST', '/api/admin/jobs/' + bulk.action, bulk.filter).then(
      function (answer) {
        var result = answer.body || {};
        show(
          message,
          (bulk.action === 'cancel' ? 'Cancelled ' : 'Retried ') +
            (result.affected || 0).toLocaleString('en') +
            ' jobs in ' +
            (result.batches || 0) +
            (result.batches === 1 ? ' batch' : ' batches') +
            (result.affected !== bulk.matched
              ? ' (' + bulk.matched.toLocaleString('en') + ' matched when counted; the rest changed meanwhile).'
              : '.'),
          false);
        loadJobs();
      },
      function (error) {
        failed(error, message, 'The ' + bulk.action + ' failed: ');
      });
  }

  // ---- Jobs ----

  function filteredUrl() {
    var query = new URLSearchParams();
    var kind = $('filter-kind').value;
    var status = $('filter-status').value;
    var ownerKind = $('filter-owner-kind').value.trim();
    var ownerId = $('filter-owner-id').value;
    if (kind) query.set('kind', kind);
    if (status) query.set('status', status);
    if (ownerKind || ownerId) {
      // The API filters by owner kind and id together; most owners are users.
      query.set('owner_kind', ownerKind || 'user');
      query.set('owner_id', ownerId);
    }
    var q = query.toString();
    return '/api/admin/jobs' + (q ? '?' + q : '');
  }

  function applyFilters() {
    previousPages = [];
    currentPage = null;
    loadJobs();
  }

  function loadJobs() {
    var request = ++jobsRequest;
    var message = $('jobs-message');
    return api('GET', currentPage || filteredUrl()).then(
      function (answer) {
        if (request !== jobsRequest || !token) return;
        renderJobs(answer.body || {});
        if (jobsLoadFailed) show(message, '', false);
        jobsLoadFailed = false;
      },
      function (error) {
        if (request !== jobsRequest || !token) return;
        jobsLoadFailed = true;
        if (error.status === 400) renderJobs({ jobs: [] });
        failed(error, message, 'Could not load the jobs: ');
      });
  }

  function renderJobs(page) {
    var body = $('jobs').tBodies[0];
    var jobs = page.jobs || [];
    var seen = new Set();
    if (emptyRow) emptyRow.remove();
    jobs.forEach(function (job, i) {
      var view = rows.get(job.uid);
      if (!view) {
        view = buildRow(job);
        rows.set(job.uid, view);
      }
      seen.add(job.uid);
      updateRow(view, job);
      // Rows are moved only when out of place, so a focused button keeps its focus.
      if (body.children[i] !== view.row) body.insertBefore(view.row, body.children[i] || null);
    });
    rows.forEach(function (view, uid) {
      if (!seen.has(uid)) {
        view.row.remove();
        rows.delete(uid);
      }
    });
    if (!jobs.length) {
      emptyRow = emptyRow || el('tr', { class: 'empty' }, [el('td', { colspan: '8' }, ['No jobs match.'])]);
      body.appendChild(emptyRow);
    }
    var next = text(page.next_url);
    nextPage = /^\/api\/admin\/jobs\?/.test(next) ? next : null;
    $('page-older').disabled = !nextPage;
    $('page-newer').disabled = previousPages.length === 0;
    $('page-number').textContent = 'Page ' + (previousPages.length + 1);
  }

  function buildRow(job) {
    var view = {
      uid: el('th', { scope: 'row' }, [el('code', null, [text(job.uid)])]),
      kind: el('td'),
      owner: el('td', { class: 'owner' }),
      status: el('td', { class: 'status' }),
      progress: el('td', { class: 'progress' }),
      created: el('td'),
      error: el('td', { class: 'error-text' }),
      actions: el('td', { class: 'actions' }),
      actionsFor: null,
      bar: null,
      barText: null
    };
    view.row = el('tr', { 'data-uid': job.uid }, [
      view.uid,
      view.kind,
      view.owner,
      view.status,
      view.progress,
      view.created,
      view.error,
      view.actions
    ]);
    return view;
  }

  function updateRow(view, job) {
    view.row.setAttribute('data-status', text(job.status));
    view.kind.textContent = text(job.kind);
    view.owner.textContent = '';
    view.owner.appendChild(document.createTextNode(text(job.owner_id)));
    view.owner.appendChild(el('span', { class: 'owner-kind' }, [' (' + text(job.owner_kind) + ')']));
    var status = text(job.status);
    if (job.cancel_requested && status === 'running') status += ', stop requested';
    if (job.retry_count) status += ', retried ' + job.retry_count + '×';
    view.status.textContent = status;
    updateProgress(view, job);
    view.created.textContent = when(job.created_at);
    view.error.textContent = text(job.error);
    updateActions(view, job);
  }

  function updateProgress(view, job) {
    if (job.status !== 'running') {
      view.bar = null;
      view.progress.textContent =
        job.duration_ms != null ? 'took ' + millis(job.duration_ms) : job.status === 'pending' ? 'waiting' : '';
      return;
    }
    if (!view.bar) {
      view.progress.textContent = '';
      // Updated in place on every refresh, so the bar moves instead of being redrawn.
      view.bar = el('progress', { max: '1', 'aria-label': 'Progress of job ' + job.uid });
      view.barText = el('span', { class: 'progress-text' });
      view.progress.appendChild(view.bar);
      view.progress.appendChild(view.barText);
    }
    var p = job.progress || {};
    var parts = [];
    if (typeof p.fraction === 'number') {
      view.bar.value = p.fraction;
      parts.push(Math.round(p.fraction * 100) + ' %');
    } else {
      view.bar.removeAttribute('value'); // indeterminate: the kind does not know how far it is
    }
    if (p.items != null) parts.push(p.items + ' items');
    view.barText.textContent = parts.length ? ' ' + parts.join(', ') : ' started';
  }

  function updateActions(view, job) {
    var key = job.status + '|' + !!job.cancel_requested;
    if (view.actionsFor === key) return;
    view.actionsFor = key;
    view.actions.textContent = '';
    if (job.status === 'failed') {
      view.actions.appendChild(
        actionButton('Retry', 'retry', job.uid, 'POST', '/api/admin/jobs/' + job.uid + '/retry'));
    } else if ((job.status === 'pending' || job.status === 'running') && !job.cancel_requested) {
      view.actions.appendChild(actionButton('Cancel', 'cancel', job.uid, 'DELETE', '/api/jobs/' + job.uid));
    }
  }

  function actionButton(label, kind, uid, method, url) {
    var button = el('button', { type: 'button', class: kind, 'aria-label': label + ' job ' + uid }, [label]);
    button.addEventListener('click', function () {
      var message = $('jobs-message');
      button.disabled = true;
      api(method, url).then(
        function (answer) {
          jobsLoadFailed = false;
          show(message, outcome(kind, uid, answer.status), false);
          return loadJobs();
        },
        function (error) {
          button.disabled = false;
          failed(error, message, 'Could not ' + label.toLowerCase() + ' job ' + uid + ': ');
        });
    });
    return button;
  }

  function outcome(kind, uid, status) {
    if (kind === 'retry') return 'Job ' + uid + ' is pending again.';
    if (status === 202) {
      return 'Job ' + uid + ' was asked to stop; it fails once the processing replica interrupts it.';
    }
    return 'Job ' + uid + ' cancelled: it failed without running (Retry brings it back).';
  }

  // ---- Start ----

  $('sign-in-form').addEventListener('submit', function (event) {
    event.preventDefault();
    var button = event.target.querySelector('button');
    button.disabled = true;
    show($('sign-in-message'), 'Checking the token…', false);
    signIn(cleanToken($('token').value), false).then(function () {
      button.disabled = false;
    });
  });
  $('sign-out').addEventListener('click', function () {
    signOut('Signed out. The token is forgotten in this tab.');
  });
  $('filters').addEventListener('submit', function (event) {
    event.preventDefault();
    applyFilters();
  });
  // The lists apply at once; the text fields on Enter or Apply, as an owner kind alone is refused.
  $('filter-kind').addEventListener('change', applyFilters);
  $('filter-status').addEventListener('change', applyFilters);
  $('filters').addEventListener('reset', function () {
    // The reset event comes before the fields are cleared.
    setTimeout(function () {
      if (token) applyFilters();
    }, 0);
  });
  $('bulk-cancel').addEventListener('click', function () {
    countForBulk('cancel');
  });
  $('bulk-retry').addEventListener('click', function () {
    countForBulk('retry');
  });
  $('bulk-go').addEventListener('click', runBulk);
  $('bulk-keep').addEventListener('click', function () {
    pendingBulk = null;
    $('bulk-confirm').hidden = true;
    show($('bulk-message'), 'Nothing changed.', false);
  });
  $('page-older').addEventListener('click', function () {
    if (!nextPage) return;
    previousPages.push(currentPage);
    currentPage = nextPage;
    loadJobs();
  });
  $('page-newer').addEventListener('click', function () {
    currentPage = previousPages.pop() || null;
    loadJobs();
  });

  // The release this replica runs, from its liveness details (no token needed): during a rollout
  // or a rollback, replicas of two releases answer side by side.
  fetch('../q/health/live', { cache: 'no-store', credentials: 'omit' })
    .then(function (response) {
      return response.json();
    })
    .then(function (health) {
      var release = (health.checks || []).filter(function (check) {
        return check.name === 'release';
      })[0];
      if (release && release.data) {
        $('release').textContent = 'release ' + text(release.data.version);
      }
    })
    .catch(function () {
      // The page works without it.
    });

  var saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) {
    show($('sign-in-message'), 'Signing in with the token of this tab…', false);
    signIn(saved, true);
  }
})();
