package io.asyncjobs.api;

import io.asyncjobs.auth.Caller;
import io.asyncjobs.callbacks.CallbackUrls;
import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.files.FileScope;
import io.asyncjobs.files.FileScopes;
import io.asyncjobs.operations.JobView;
import io.asyncjobs.operations.Requests;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.EnqueueRequest;
import io.asyncjobs.queue.Enqueued;
import io.asyncjobs.queue.JobPriority;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.KeyReusedException;
import io.asyncjobs.queue.Owner;
import io.asyncjobs.queue.QuotaExceededException;
import io.asyncjobs.tracing.Traceparent;
import io.asyncjobs.tracing.Tracing;
import io.quarkus.runtime.annotations.RegisterForReflection;
import io.vertx.core.http.HttpServerRequest;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * What every kind's {@code POST /api/<kind>} does: the kind's {@link PayloadCheck} against the
 * caller's scope, the Idempotency-Key header, the enqueue for the calling owner, and the 202 answer
 * with {@code Location}. {@link KindsResource} calls {@link #accept} for every kind.
 */
@ApplicationScoped
public class Enqueuer {

  /** The request header that makes an enqueue idempotent per owner. */
  public static final String IDEMPOTENCY_KEY = "Idempotency-Key";

  private static final Pattern KEY = Pattern.compile("[\\x21-\\x7e]{1,200}");
  private static final int MAX_PREFERRED_NAME = 255;

  /** A batch's one field: its jobs. */
  private static final String BATCH_JOBS = "jobs";

  private static final String BATCH_PAYLOAD = "payload";
  private static final String BATCH_IDEMPOTENCY_KEY = "idempotency_key";
  private static final String PRIORITY = "priority";
  private static final String RUN_AFTER = "run_after";
  private static final String DELAY_SECONDS = "delay_seconds";
  private static final String CALLBACK_URL = "callback_url";
  private static final Set<String> BATCH_ITEM_KEYS =
      Set.of(
          BATCH_PAYLOAD, BATCH_IDEMPOTENCY_KEY, PRIORITY, RUN_AFTER, DELAY_SECONDS, CALLBACK_URL);

  /**
   * The furthest ahead a job may be delayed, a year, and how far back a {@code run_after} may lie:
   * the one bound the routes check and the OpenAPI document states.
   */
  static final long MAX_DELAY_SECONDS = 366L * 24 * 3600;

  /** The most jobs a batch request takes. */
  public static final int MAX_REQUEST_BATCH = 1000;

  /** How many refused jobs of a batch a 400 names; it counts the rest. */
  private static final int MAX_REFUSALS_SHOWN = 20;

  @Inject JobQueue queue;
  @Inject ServiceManager services;
  @Inject FileScopes scopes;
  @Inject HttpServerRequest request;
  @Inject JobsConfig config;
  @Inject io.asyncjobs.time.Clock clock;
  @Inject CallbackUrls callbackUrls;
  @Inject Tracing tracing;

  /**
   * Checks a request body with the kind's {@link PayloadCheck} and enqueues what it accepted, for
   * the caller, answering 202. A disabled kind is a 404, a missing body or one the check refuses a
   * 400, and nothing is enqueued then. For a kind that reads files, the caller's scope (its own
   * folder, or all of {@code files/} for an admin) is what the check validates against, and it is
   * recorded in the payload for {@code process}. With an Idempotency-Key the caller used before,
   * answers with that first job instead (header {@code Idempotent-Replayed: true}); the same key
   * with a different kind or payload is a 422.
   *
   * @param idempotencyKey the {@code Idempotency-Key} header's value, or null (absent, or sent
   *     empty: the request tells which, and an empty one is a 400)
   */
  public Response accept(
      Caller caller, PayloadCheck kind, Map<String, Object> body, String idempotencyKey) {
    requireEnabled(kind.kind());
    if (body == null) {
      throw ProblemException.badRequest(
          "the body must be a JSON object, for example " + kind.routeDoc().example());
    }
    // The body and parameters are checked first: a malformed request is a 400 before a token that
    // names no owner is a 403.
    EnqueueRequest job =
        checked(kind, scopeOf(caller), body, caller.ownerIfNamed())
            .withPriority(priorityParameter(caller))
            .withQuotaExempt(caller.isAdmin())
            .withRunAfter(runAfter(oneParameter(RUN_AFTER), oneParameter(DELAY_SECONDS)))
            .withCallbackUrl(callbackUrl(oneParameter(CALLBACK_URL)))
            .withTraceparent(traceparent());
    caller.owner(); // the 401 or 403, if the token names no owner
    // Quarkus REST passes an empty header value as no value at all: the request itself tells a
    // key that was left out from one that was sent empty (or blank, which HTTP trims to empty).
    List<String> sent = request.headers().getAll(IDEMPOTENCY_KEY);
    if (sent.size() > 1) {
      throw ProblemException.badRequest("send one Idempotency-Key, not " + sent.size());
    }
    if (!sent.isEmpty() && (idempotencyKey == null || !KEY.matcher(idempotencyKey).matches())) {
      throw ProblemException.badRequest(
          "Idempotency-Key must be 1 to 200 visible ASCII characters; leave the header out to"
              + " enqueue without one");
    }
    Enqueued enqueued;
    try {
      enqueued = queue.enqueue(job.withIdempotencyKey(sent.isEmpty() ? null : idempotencyKey));
    } catch (QuotaExceededException e) {
      throw overQuota(e);
    } catch (KeyReusedException e) {
      throw keyReused("this Idempotency-Key", e.firstUid());
    }
    return answer(enqueued.uid(), kind.kind(), enqueued.status().dbValue(), !enqueued.created());
  }

  /**
   * Checks a batch, {@code {"jobs": [{"payload": {...}, "idempotency_key": "..."}, ...]}} with 1 to
   * {@value #MAX_REQUEST_BATCH} jobs, and enqueues all of it in one transaction, answering 202 with
   * one result per job, in order. Each payload goes through the kind's check as on the single
   * route; a job refused there makes the whole batch a 400 that names each refused job by its
   * index, and nothing is enqueued. A key the caller used before for the same request names that
   * first job ({@code replayed: true}); used for another request, it makes the batch a 422, and
   * nothing is enqueued.
   */
  public Response acceptBatch(Caller caller, PayloadCheck kind, Map<String, Object> body) {
    requireEnabled(kind.kind());
    Object items = body == null ? null : body.get(BATCH_JOBS);
    if (!(items instanceof List<?> list)
        || list.isEmpty()
        || list.size() > MAX_REQUEST_BATCH
        || body.size() != 1) {
      throw ProblemException.badRequest(
          "the body must be {\"jobs\": [...]} with 1 to "
              + MAX_REQUEST_BATCH
              + " jobs, each {\"payload\": ..., \"idempotency_key\": ...} (the key optional),"
              + " for example {\"jobs\": [{\"payload\": "
              + kind.routeDoc().example()
              + "}]}");
    }
    FileScope scope = scopeOf(caller);
    String traceparent = traceparent();
    Owner owner = caller.ownerIfNamed();
    List<EnqueueRequest> jobs = new ArrayList<>(list.size());
    List<String> refused = new ArrayList<>();
    Map<String, Integer> keys = new HashMap<>();
    for (int i = 0; i < list.size(); i++) {
      try {
        jobs.add(batchJob(caller, owner, kind, scope, list.get(i), i, keys, traceparent));
      } catch (ProblemException e) {
        refused.add("jobs[" + i + "]: " + e.problem().detail());
      }
    }
    if (!refused.isEmpty()) {
      int shown = Math.min(refused.size(), MAX_REFUSALS_SHOWN);
      String more =
          refused.size() > shown ? "; and " + (refused.size() - shown) + " more refused" : "";
      throw ProblemException.badRequest(
          "nothing was enqueued; " + String.join("; ", refused.subList(0, shown)) + more);
    }
    caller.owner(); // the 401 or 403 after the jobs' 400, as on the single route
    List<Enqueued> outcomes;
    try {
      outcomes = queue.enqueue(jobs);
    } catch (QuotaExceededException e) {
      throw overQuota(e);
    } catch (KeyReusedException e) {
      throw keyReused("the idempotency_key of jobs[" + e.index() + "]", e.firstUid());
    }
    List<BatchItemView> views = new ArrayList<>(outcomes.size());
    for (Enqueued outcome : outcomes) {
      String statusUrl = JobView.statusUrl(outcome.uid());
      views.add(
          new BatchItemView(
              outcome.uid(),
              kind.kind(),
              outcome.status().dbValue(),
              statusUrl,
              statusUrl + "/events",
              !outcome.created()));
    }
    return Response.accepted(new BatchView(views)).build();
  }

  /**
   * The answer to a batch: one result per job, in the order sent.
   *
   * @param jobs each job's links, and whether it was there before ({@code replayed})
   */
  @RegisterForReflection(registerFullHierarchy = true)
  public record BatchView(List<BatchItemView> jobs) {}

  /**
   * One job of a batch's answer.
   *
   * @param uid the job's id: the new one, or the first job of a key used before
   * @param kind the job's kind
   * @param status its status now
   * @param statusUrl the status view
   * @param eventsUrl the stream of status and progress events
   * @param replayed whether the job was enqueued before, under the same idempotency key
   */
  @RegisterForReflection(registerFullHierarchy = true)
  public record BatchItemView(
      UUID uid, String kind, String status, String statusUrl, String eventsUrl, boolean replayed) {}

  /**
   * One job of a batch, checked; {@code keys} holds the keys seen so far and where, {@code
   * traceparent} is the request's, which every job of the batch keeps.
   */
  private EnqueueRequest batchJob(
      Caller caller,
      Owner owner,
      PayloadCheck kind,
      FileScope scope,
      Object item,
      int index,
      Map<String, Integer> keys,
      String traceparent) {
    if (!(item instanceof Map<?, ?> map)
        || !(map.get(BATCH_PAYLOAD) instanceof Map<?, ?>)
        || !BATCH_ITEM_KEYS.containsAll(map.keySet())) {
      throw ProblemException.badRequest(
          "a job is {\"payload\": {...}, \"idempotency_key\": \"...\", \"priority\": N,"
              + " \"run_after\": \"...\" or \"delay_seconds\": N, \"callback_url\": \"...\"},"
              + " all but the payload optional");
    }
    int priority = JobPriority.DEFAULT;
    Object sentPriority = map.get(PRIORITY);
    if (sentPriority != null) {
      if (!(sentPriority instanceof Integer number)) {
        throw ProblemException.badRequest(
            "priority must be a whole number from "
                + JobPriority.MIN
                + " to "
                + JobPriority.MAX
                + ", or left out");
      }
      priority = allowedPriority(caller, number);
    }
    String key = null;
    Object sentKey = map.get(BATCH_IDEMPOTENCY_KEY);
    if (sentKey != null) {
      if (!(sentKey instanceof String text) || !KEY.matcher(text).matches()) {
        throw ProblemException.badRequest(
            "idempotency_key must be 1 to 200 visible ASCII characters, or left out");
      }
      Integer before = keys.putIfAbsent(text, index);
      if (before != null) {
        throw ProblemException.badRequest("the same idempotency_key as jobs[" + before + "]");
      }
      key = text;
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> payload = (Map<String, Object>) map.get(BATCH_PAYLOAD);
    EnqueueRequest job = checked(kind, scope, payload, owner);
    Object sentRunAfter = map.get(RUN_AFTER);
    Object sentDelay = map.get(DELAY_SECONDS);
    if (sentRunAfter != null && !(sentRunAfter instanceof String)) {
      throw ProblemException.badRequest(
          "run_after must be an RFC 3339 time such as 2026-12-24T18:00:00Z, or left out");
    }
    if (sentDelay != null && !(sentDelay instanceof Integer || sentDelay instanceof Long)) {
      throw ProblemException.badRequest(
          "delay_seconds must be a whole number from 0 to " + MAX_DELAY_SECONDS + ", or left out");
    }
    Instant runAfter =
        runAfter((String) sentRunAfter, sentDelay == null ? null : String.valueOf(sentDelay));
    Object sentCallback = map.get(CALLBACK_URL);
    if (sentCallback != null && !(sentCallback instanceof String)) {
      throw ProblemException.badRequest("callback_url must be a URL, or left out");
    }
    return job.withIdempotencyKey(key)
        .withPriority(priority)
        .withRunAfter(runAfter)
        .withCallbackUrl(callbackUrl((String) sentCallback))
        .withTraceparent(traceparent)
        .withQuotaExempt(caller.isAdmin());
  }

  /**
   * The traceparent the jobs of this request keep, so that their processing joins its trace, or
   * null. With tracing on it is the request's own server span (a child of the caller's traceparent,
   * when one was sent); with tracing off, the caller's {@code traceparent} header as sent. A
   * malformed header, or more than one, is ignored rather than refused, as the W3C Trace Context
   * recommendation asks: the job then starts a trace of its own.
   */
  private String traceparent() {
    String current = tracing.currentTraceparent();
    if (current != null) {
      return current;
    }
    List<String> sent = request.headers().getAll(Traceparent.HEADER);
    return sent.size() == 1 ? Traceparent.wellFormed(sent.get(0)) : null;
  }

  /**
   * A {@code callback_url} checked against the allowed hosts, or null when none was sent; a URL the
   * service may not call is a 400 naming why.
   */
  private String callbackUrl(String sent) {
    if (sent == null) {
      return null;
    }
    try {
      return callbackUrls.check(sent);
    } catch (IllegalArgumentException e) {
      throw ProblemException.badRequest(e.getMessage());
    }
  }

  /** The one value of query parameter {@code name}, or null; two of them are a 400. */
  private String oneParameter(String name) {
    List<String> sent = request.params().getAll(name);
    if (sent.size() > 1) {
      throw ProblemException.badRequest("send one " + name + ", not " + sent.size());
    }
    return sent.isEmpty() ? null : sent.get(0);
  }

  /**
   * When a job asked for with {@code run_after} (an RFC 3339 time) or {@code delay_seconds} (from
   * now) may start, or null for at once; both, a malformed value or one more than a year ahead is a
   * 400. A time already past makes the job due at once; one more than a year ago is a 400 too, like
   * its mirror ahead: it is no schedule anyone meant, and a time far enough back (year -5000) is
   * one PostgreSQL cannot store in a batch's array.
   */
  private Instant runAfter(String runAfterText, String delayText) {
    if (runAfterText != null && delayText != null) {
      throw ProblemException.badRequest("send run_after or delay_seconds, not both");
    }
    Instant now = clock.now();
    if (delayText != null) {
      long seconds;
      try {
        seconds = Long.parseLong(delayText.trim());
      } catch (NumberFormatException e) {
        seconds = -1;
      }
      if (seconds < 0 || seconds > MAX_DELAY_SECONDS) {
        throw ProblemException.badRequest(
            "delay_seconds must be a whole number from 0 to "
                + MAX_DELAY_SECONDS
                + " (a year); got "
                + Requests.quote(delayText));
      }
      return seconds == 0 ? null : now.plusSeconds(seconds);
    }
    if (runAfterText == null) {
      return null;
    }
    Instant at;
    try {
      at = java.time.OffsetDateTime.parse(runAfterText.trim()).toInstant();
    } catch (java.time.format.DateTimeParseException e) {
      throw ProblemException.badRequest(
          "run_after must be an RFC 3339 time with an offset, such as 2026-12-24T18:00:00Z; got "
              + Requests.quote(runAfterText));
    }
    if (at.isAfter(now.plusSeconds(MAX_DELAY_SECONDS))) {
      throw ProblemException.badRequest("run_after must be at most a year ahead");
    }
    if (at.isBefore(now.minusSeconds(MAX_DELAY_SECONDS))) {
      throw ProblemException.badRequest(
          "run_after must be at most a year ago (a time already past means due at once); got "
              + Requests.quote(runAfterText));
    }
    return at;
  }

  /**
   * The {@code priority} query parameter of a single enqueue, checked: a whole number in the range,
   * and no higher than the caller may ask for; the default when it is left out.
   */
  private int priorityParameter(Caller caller) {
    List<String> sent = request.params().getAll(PRIORITY);
    if (sent.isEmpty()) {
      return JobPriority.DEFAULT;
    }
    if (sent.size() > 1) {
      throw ProblemException.badRequest("send one priority, not " + sent.size());
    }
    int priority;
    try {
      priority = Integer.parseInt(sent.get(0).trim());
    } catch (NumberFormatException e) {
      throw ProblemException.badRequest(
          "priority must be a whole number from "
              + JobPriority.MIN
              + " to "
              + JobPriority.MAX
              + "; got "
              + Requests.quote(sent.get(0)));
    }
    return allowedPriority(caller, priority);
  }

  /**
   * {@code priority} if it is in the range (else a 400) and the caller may ask for it (else a 403
   * naming the highest it may): admins and {@code service} principals the whole range, others up to
   * {@code jobs.user-max-priority}.
   */
  private int allowedPriority(Caller caller, int priority) {
    try {
      JobPriority.check(priority);
    } catch (IllegalArgumentException e) {
      throw ProblemException.badRequest(e.getMessage());
    }
    boolean wholeRange = caller.isAdmin() || "service".equals(caller.owner().kind());
    int highest = wholeRange ? JobPriority.MAX : config.userMaxPriority();
    if (priority > highest) {
      throw ProblemException.forbidden(
          "priority "
              + priority
              + " is above what this caller may ask for: at most "
              + highest
              + " (admins and service principals up to "
              + JobPriority.MAX
              + ")");
    }
    return priority;
  }

  /** What the caller may name: all of {@code files/} for an admin, else its own folder. */
  private FileScope scopeOf(Caller caller) {
    return caller.isAdmin() ? scopes.forAdmin() : scopes.forOwner(caller.owner());
  }

  /**
   * The kind's check of one payload, then what every kind refuses: text PostgreSQL cannot store,
   * and a download name that is empty, too long or holds U+0000.
   *
   * @return a request of the kind for {@code owner} with the payload to store (with the caller's
   *     scope when the kind reads files) and the download's name
   * @throws ProblemException 400 naming the problem
   */
  private EnqueueRequest checked(
      PayloadCheck kind, FileScope scope, Map<String, Object> body, Owner owner) {
    PayloadCheck.Accepted accepted;
    try {
      accepted = kind.check(scope, body);
    } catch (IllegalArgumentException e) {
      throw ProblemException.badRequest(e.getMessage());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Map<String, Object> stored = accepted.payload();
    if (accepted.readsFiles()) {
      stored = new LinkedHashMap<>(stored);
      stored.put(FileScope.PAYLOAD_KEY, scope.relative());
    }
    requireStorableText(stored, "the payload");
    String preferredName = accepted.preferredName();
    if (preferredName != null && preferredName.indexOf('\u0000') >= 0) {
      throw ProblemException.badRequest("name must not contain the character U+0000");
    }
    if (preferredName != null
        && (preferredName.isBlank() || preferredName.length() > MAX_PREFERRED_NAME)) {
      throw ProblemException.badRequest("name must be 1 to 255 characters");
    }
    return EnqueueRequest.of(kind.kind(), owner, stored).withPreferredName(preferredName);
  }

  /**
   * The 429 of an enqueue over its owner's pending quota, with {@code Retry-After} from the kind's
   * recent run times; nothing was enqueued.
   */
  private static ProblemException overQuota(QuotaExceededException e) {
    return new ProblemException(
        Problem.of(
            429,
            "quota-exceeded",
            "Pending quota exceeded",
            "this owner may hold "
                + e.limit()
                + " pending "
                + e.kind()
                + " job(s) (max_pending_per_owner) and this would make "
                + e.pending()
                + "; nothing was enqueued. Try again once some have started"),
        Map.of("Retry-After", Long.toString(e.retryAfter().toSeconds())));
  }

  /** The 422 of an idempotency key used before for a different request. */
  private static ProblemException keyReused(String which, UUID first) {
    return ProblemException.unprocessable(
        "idempotency-key-reused",
        "Idempotency key reused",
        which
            + " was used for job "
            + first
            + " with a different request; use a new key for a new job");
  }

  /**
   * PostgreSQL stores no U+0000 in text or jsonb; a payload holding one is refused here rather than
   * failing in the database.
   */
  static void requireStorableText(Object value, String where) {
    if (value instanceof String text) {
      if (text.indexOf('\u0000') >= 0) {
        throw ProblemException.badRequest(where + " must not contain the character U+0000");
      }
    } else if (value instanceof Map<?, ?> map) {
      for (Map.Entry<?, ?> entry : map.entrySet()) {
        requireStorableText(entry.getKey(), where);
        requireStorableText(entry.getValue(), where);
      }
    } else if (value instanceof Iterable<?> items) {
      for (Object item : items) {
        requireStorableText(item, where);
      }
    }
  }

  /** A 404 problem unless a job service of this kind runs here. */
  public void requireEnabled(String kind) {
    if (services.jobService(kind).isEmpty()) {
      throw unknownKind(kind);
    }
  }

  /** The 404 problem for a kind that does not exist or is not enabled here. */
  public static ProblemException unknownKind(String kind) {
    return new ProblemException(
        Problem.of(
            404, "unknown-kind", "Unknown kind", "the kind " + kind + " is not enabled here"));
  }

  private static Response answer(UUID uid, String kind, String status, boolean replayed) {
    String statusUrl = JobView.statusUrl(uid);
    Response.ResponseBuilder response =
        Response.accepted(new EnqueuedView(uid, kind, status, statusUrl, statusUrl + "/events"))
            .location(URI.create(statusUrl));
    if (replayed) {
      response.header("Idempotent-Replayed", "true");
    }
    return response.build();
  }
}
