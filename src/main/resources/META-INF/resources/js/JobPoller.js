/*
 * JobPoller: follows one async-jobs job until it is done or failed, and tells the page.
 *
 * It reads the job's event stream (GET <status url>/events) through fetch(), because
 * EventSource cannot send an Authorization header, and parses the server-sent events itself.
 * When streaming is not available, the stream request fails, or the stream ends before the
 * job finished, it polls GET <status url> instead, backing off while nothing changes.
 *
 * JobPoller.enqueue(kindUrl, payload, options) adds the job first: it sends the payload with the
 * options a browser may set (priority, a delay or start time, a completion callback, an
 * idempotency key) as the API's query parameters, and resolves with the 202 answer, whose
 * status_url run() then follows.
 *
 * No dependencies and no build step: loaded with a classic <script> it defines
 * window.JobPoller; under CommonJS it is module.exports as well. See docs/jobpoller.md.
 */
(function (root, factory) {
  'use strict';
  var api = factory();
  if (typeof module === 'object' && module && module.exports) module.exports = api;
  if (root) root.JobPoller = api;
})(typeof window !== 'undefined' ? window : typeof self !== 'undefined' ? self : this, function () {
  'use strict';

  var BACKOFF_FACTOR = 1.5;
  var JITTER = 0.1; // each poll delay moves by up to 10 % either way

  /** A positive number from the options, or the default. */
  function positive(value, fallback) {
    return typeof value === 'number' && value > 0 ? value : fallback;
  }

  /** What a caller sees of progress, for change detection: the fraction and the item count. */
  function progressKey(progress) {
    return progress ? progress.fraction + '|' + progress.items : '';
  }

  /** Calls a user callback; an exception in it is rethrown later, so the poller carries on. */
  function call(fn, a, b) {
    if (typeof fn !== 'function') return;
    try {
      fn(a, b);
    } catch (e) {
      setTimeout(function () {
        throw e;
      }, 0);
    }
  }

  /** Plain-object copy of options.headers, which may be a plain object or a Headers. */
  function copyHeaders(extra, into) {
    if (!extra) return into;
    if (typeof extra.forEach === 'function' && typeof extra.get === 'function') {
      extra.forEach(function (value, name) {
        into[name] = value;
      });
    } else {
      for (var name in extra) {
        if (Object.prototype.hasOwnProperty.call(extra, name)) into[name] = extra[name];
      }
    }
    return into;
  }

  /**
   * An incremental text/event-stream parser: push() text as it arrives, in any chunking, and
   * onEvent({type, data, id}) runs for each complete event; end() when the stream ends.
   * Comment lines (":keep-alive") and "retry" are ignored; an event without data is dropped.
   */
  function createSseParser(onEvent) {
    var buffer = '';
    var type = '';
    var data = [];
    var lastId = '';

    function line(text) {
      if (text === '') {
        // A blank line ends the event.
        if (data.length > 0) onEvent({ type: type || 'message', data: data.join('\n'), id: lastId });
        type = '';
        data = [];
        return;
      }
      if (text.charAt(0) === ':') return;
      var colon = text.indexOf(':');
      var field = colon < 0 ? text : text.slice(0, colon);
      var value = colon < 0 ? '' : text.slice(colon + 1);
      if (value.charAt(0) === ' ') value = value.slice(1);
      if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id' && value.indexOf('\u0000') < 0) lastId = value;
    }

    return {
      push: function (text) {
        buffer += text;
        var end;
        // Lines end with CRLF, LF or CR. A CR at the very end may be half of a CRLF whose LF
        // is still in the next chunk, so it waits for more text.
        while ((end = /\r\n|\r|\n/.exec(buffer)) !== null) {
          if (end[0] === '\r' && end.index === buffer.length - 1) break;
          line(buffer.slice(0, end.index));
          buffer = buffer.slice(end.index + end[0].length);
        }
      },
      end: function () {
        if (buffer.charAt(buffer.length - 1) === '\r') line(buffer.slice(0, -1));
        buffer = ''; // an unfinished event is dropped, as the format says
      },
    };
  }

  /**
   * Follows the job at statusUrl; see docs/jobpoller.md for the options. Returns
   * {cancel(), done}: done (where Promise exists) resolves with
   * {outcome: 'done' | 'failed' | 'timeout' | 'cancelled', job} and never rejects.
   */
  function run(statusUrl, options) {
    var opts = options || {};
    if (!statusUrl) throw new TypeError('JobPoller.run: a status URL is needed');
    if (typeof opts.fetch !== 'function' && typeof fetch !== 'function') {
      throw new TypeError('JobPoller.run: this environment has no fetch(); pass options.fetch');
    }
    var intervalMs = positive(opts.intervalMs, 1000);
    var maxIntervalMs = Math.max(intervalMs, positive(opts.maxIntervalMs, 10000));
    var timeoutMs = positive(opts.timeoutMs, 0);
    var eventsUrl = opts.eventsUrl || String(statusUrl).replace(/\/+$/, '') + '/events';

    var stopped = false; // set once: a final callback fired or cancel() was called
    var lastJob = null;
    var lastStatus = null;
    var lastProgress = '';
    var lastAttempt = 0; // failed attempts seen so far, for onRetry
    var controller = null; // aborts the request in flight
    var pollTimer = null;
    var timeoutTimer = null;
    var delay = intervalMs;
    var settle = null;
    var done =
      typeof Promise === 'function'
        ? new Promise(function (resolve) {
            settle = resolve;
          })
        : undefined;

    /** GET url with the caller's headers and token, abortable through `controller`. */
    function get(url, accept) {
      var headers = copyHeaders(opts.headers, { Accept: accept });
      if (opts.token) headers.Authorization = 'Bearer ' + opts.token;
      controller = typeof AbortController === 'function' ? new AbortController() : null;
      var init = { method: 'GET', headers: headers, cache: 'no-store' };
      if (controller) init.signal = controller.signal;
      return typeof opts.fetch === 'function' ? opts.fetch(url, init) : fetch(url, init);
    }

    /** Ends everything in flight; no callback runs after this. */
    function stop(outcome, job) {
      stopped = true;
      clearTimeout(pollTimer);
      clearTimeout(timeoutTimer);
      if (controller) controller.abort();
      if (settle) settle({ outcome: outcome, job: job });
    }

    /** Fires exactly one of onDone, onFailed, onTimeout, once. */
    function finish(outcome, job) {
      if (stopped) return;
      stop(outcome, job);
      call({ done: opts.onDone, failed: opts.onFailed, timeout: opts.onTimeout }[outcome], job);
    }

    /** Takes in one status view; returns true when its status or progress changed. */
    function accept(job) {
      if (stopped || !job || typeof job !== 'object') return false;
      lastJob = job;
      var changed = job.status !== lastStatus;
      lastStatus = job.status;
      call(opts.onUpdate, job);
      var attempt = typeof job.attempt === 'number' ? job.attempt : 0;
      if (attempt > lastAttempt) {
        lastAttempt = attempt;
        changed = true;
        // The job failed transiently and waits for its next try (retry_at), or that was its last.
        if (!stopped && job.status === 'pending') call(opts.onRetry, job);
      }
      var key = progressKey(job.progress);
      if (job.progress && key !== lastProgress) {
        lastProgress = key;
        changed = true;
        if (!stopped) call(opts.onProgress, job.progress, job); // onUpdate may have cancelled
      }
      if (job.status === 'done' || job.status === 'failed') finish(job.status, job);
      return changed;
    }

    // ---- Streaming: GET <status url>/events, read through the body's stream reader ----

    function canStream() {
      return (
        opts.stream !== false &&
        typeof ReadableStream !== 'undefined' &&
        typeof TextDecoder !== 'undefined'
      );
    }

    function stream() {
      get(eventsUrl, 'text/event-stream')
        .then(function (response) {
          var type = (response.headers && response.headers.get('Content-Type')) || '';
          var body = response.body;
          if (response.ok && type.indexOf('text/event-stream') >= 0 && body && body.getReader) {
            return read(body.getReader());
          }
          if (body && body.cancel) body.cancel().catch(function () {});
          // Not a usable stream: fall through to polling.
        })
        // However the stream ended (final event, refusal, network error, early end), polling
        // takes over unless the poller has stopped.
        .then(fallBack, fallBack);
    }

    function read(reader) {
      var decoder = new TextDecoder();
      var parser = createSseParser(function (event) {
        if (event.type !== 'job' && event.type !== 'message') return;
        var job;
        try {
          job = JSON.parse(event.data);
        } catch (e) {
          return; // a damaged event is skipped; the next one carries the whole view again
        }
        accept(job);
      });
      function next() {
        if (stopped) return reader.cancel().catch(function () {});
        return reader.read().then(function (chunk) {
          if (chunk.done) {
            parser.push(decoder.decode());
            parser.end();
            return;
          }
          parser.push(decoder.decode(chunk.value, { stream: true }));
          return next();
        });
      }
      return next();
    }

    function fallBack() {
      if (!stopped) poll();
    }

    // ---- Polling: GET <status url>, backing off while nothing changes ----

    function schedulePoll() {
      if (stopped) return;
      var jittered = delay * (1 - JITTER + Math.random() * 2 * JITTER);
      pollTimer = setTimeout(poll, Math.round(jittered));
    }

    function backOff() {
      delay = Math.min(maxIntervalMs, delay * BACKOFF_FACTOR);
    }

    /** 401, 403, 404 and the other 4xx answers, except 408 and 429, will not get better. */
    function isFatal(httpStatus) {
      return httpStatus >= 400 && httpStatus < 500 && httpStatus !== 408 && httpStatus !== 429;
    }

    function poll() {
      pollTimer = null;
      if (stopped) return;
      get(statusUrl, 'application/json')
        .then(function (response) {
          if (stopped) return;
          if (response.ok) {
            return response.json().then(function (job) {
              if (accept(job)) delay = intervalMs; // something moved: look again soon
              else backOff();
            });
          }
          if (isFatal(response.status)) {
            return response
              .json()
              .catch(function () {
                return null; // not a problem+json body
              })
              .then(function (problem) {
                finish('failed', failure(response.status, problem));
              });
          }
          backOff(); // 5xx, 408, 429: try again later
        })
        .catch(backOff) // network error or unreadable body
        .then(schedulePoll);
    }

    /** The job-like object onFailed gets when the status URL itself answers with an error. */
    function failure(httpStatus, problem) {
      var detail = problem && (problem.detail || problem.title);
      return {
        status: 'failed',
        error: 'HTTP ' + httpStatus + (detail ? ': ' + detail : ''),
        http_status: httpStatus,
        problem: problem || null,
        status_url: statusUrl,
        synthetic: true,
      };
    }

    if (timeoutMs > 0) {
      timeoutTimer = setTimeout(function () {
        finish('timeout', lastJob);
      }, timeoutMs);
    }
    if (canStream()) stream();
    else pollTimer = setTimeout(poll, 0);

    return {
      cancel: function () {
        if (!stopped) stop('cancelled', lastJob);
      },
      done: done,
    };
  }

  /** The enqueue options a caller may set, by their query parameter's name. */
  var ENQUEUE_PARAMETERS = {
    priority: 'priority',
    delaySeconds: 'delay_seconds',
    runAfter: 'run_after',
    callbackUrl: 'callback_url',
  };

  /**
   * POSTs one job to kindUrl (for example '/api/zip') and resolves with the 202 answer ({uid,
   * status_url, events_url, ...}). options: token, headers, fetch as for run(); priority (-10 to
   * 10), delaySeconds or runAfter (a Date or an RFC 3339 string), callbackUrl, idempotencyKey.
   * A refusal rejects with an Error whose status and problem (the API's problem document) say why.
   */
  function enqueue(kindUrl, payload, options) {
    var opts = options || {};
    if (!kindUrl) throw new TypeError('JobPoller.enqueue: a kind URL is needed');
    if (typeof opts.fetch !== 'function' && typeof fetch !== 'function') {
      throw new TypeError('JobPoller.enqueue: this environment has no fetch(); pass options.fetch');
    }
    var query = [];
    for (var key in ENQUEUE_PARAMETERS) {
      var value = opts[key];
      if (value === undefined || value === null) continue;
      if (value instanceof Date) value = value.toISOString();
      query.push(ENQUEUE_PARAMETERS[key] + '=' + encodeURIComponent(String(value)));
    }
    var url = String(kindUrl) + (query.length ? (kindUrl.indexOf('?') < 0 ? '?' : '&') : '');
    url += query.join('&');
    var headers = copyHeaders(opts.headers, {
      Accept: 'application/json',
      'Content-Type': 'application/json',
    });
    if (opts.token) headers.Authorization = 'Bearer ' + opts.token;
    if (opts.idempotencyKey) headers['Idempotency-Key'] = String(opts.idempotencyKey);
    var init = { method: 'POST', headers: headers, body: JSON.stringify(payload || {}) };
    var sent = typeof opts.fetch === 'function' ? opts.fetch(url, init) : fetch(url, init);
    return sent.then(function (response) {
      return response
        .json()
        .catch(function () {
          return null;
        })
        .then(function (body) {
          if (response.ok) return body;
          var detail = body && (body.detail || body.title);
          var error = new Error('HTTP ' + response.status + (detail ? ': ' + detail : ''));
          error.status = response.status;
          error.problem = body;
          throw error;
        });
    });
  }

  return { run: run, enqueue: enqueue, createSseParser: createSseParser };
});
