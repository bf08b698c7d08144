package io.asyncjobs.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.auth.Caller;
import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.files.FileScope;
import io.asyncjobs.files.FileScopes;
import io.asyncjobs.operations.JobView;
import io.asyncjobs.operations.Requests;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.Owner;
import io.vertx.core.http.HttpServerRequest;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

  @Inject JobQueue queue;
  @Inject ServiceManager services;
  @Inject ObjectMapper json;
  @Inject FileScopes scopes;
  @Inject HttpServerRequest request;

  /**
   * Checks a request body with the kind's {@link PayloadCheck} and enqueues what it accepted, for
   * the caller, answering 202. A disabled kind is a 404, a missing body or one the check refuses a
   * 400, and nothing is enqueued then. For a kind that reads files, the caller's scope (its own
   * folder, or all of {@code files/} for an admin) is what the check validates against, and it is
   * recorded in the payload for {@code process}.
   *
   * @param idempotencyKey the {@code Idempotency-Key} header's value, or null
   */
  public Response accept(
      Caller caller, PayloadCheck kind, Map<String, Object> body, String idempotencyKey) {
    requireEnabled(kind.kind());
    if (body == null) {
      throw ProblemException.badRequest(
          "the body must be a JSON object, for example " + kind.routeDoc().example());
    }
    FileScope scope = caller.isAdmin() ? scopes.forAdmin() : scopes.forOwner(caller.owner());
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
    return enqueue(caller, kind.kind(), stored, accepted.preferredName(), idempotencyKey);
  }

  /**
   * Enqueues a job of {@code kind} for the caller, once the kind is known to be enabled, and
   * answers 202. With an Idempotency-Key the caller used before, answers with that first job
   * instead (header {@code Idempotent-Replayed: true}); the same key with a different kind or
   * payload is a 422.
   *
   * @param payload the validated payload, stored as the job's input
   * @param preferredName the download's file name, or null
   * @param idempotencyKey the header's value, or null (absent, or sent empty: the request tells
   *     which, and an empty one is a 400)
   */
  private Response enqueue(
      Caller caller,
      String kind,
      Map<String, Object> payload,
      String preferredName,
      String idempotencyKey) {
    Owner owner = caller.owner();
    requireStorableText(payload, "the payload");
    if (preferredName != null && preferredName.indexOf('\u0000') >= 0) {
      throw ProblemException.badRequest("name must not contain the character U+0000");
    }
    if (preferredName != null
        && (preferredName.isBlank() || preferredName.length() > MAX_PREFERRED_NAME)) {
      throw ProblemException.badRequest("name must be 1 to 255 characters");
    }
    // Quarkus REST passes an empty header value as no value at all: the request itself tells a
    // key that was left out from one that was sent empty (or blank, which HTTP trims to empty).
    List<String> sent = request.headers().getAll(IDEMPOTENCY_KEY);
    if (sent.size() > 1) {
      throw ProblemException.badRequest("send one Idempotency-Key, not " + sent.size());
    }
    if (sent.isEmpty()) {
      UUID uid = queue.enqueue(kind, payload, owner.kind(), owner.id(), preferredName);
      return answer(uid, kind, "pending", false);
    }
    if (idempotencyKey == null || !KEY.matcher(idempotencyKey).matches()) {
      throw ProblemException.badRequest(
          "Idempotency-Key must be 1 to 200 visible ASCII characters; leave the header out to"
              + " enqueue without one");
    }
    JobQueue.Enqueued enqueued =
        queue.enqueueIdempotent(
            kind, payload, owner.kind(), owner.id(), preferredName, idempotencyKey);
    if (enqueued.created()) {
      return answer(enqueued.uid(), kind, "pending", false);
    }
    Job first = queue.getJob(enqueued.uid()).orElseThrow(() -> Requests.noSuchJob(enqueued.uid()));
    if (!first.kind.equals(kind) || !samePayload(first.payload, payload)) {
      throw ProblemException.unprocessable(
          "idempotency-key-reused",
          "Idempotency key reused",
          "this Idempotency-Key was used for job "
              + first.uid
              + " with a different request; use a new key for a new job");
    }
    return answer(first.uid, kind, first.status.dbValue(), true);
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

  private boolean samePayload(Map<String, Object> stored, Map<String, Object> offered) {
    JsonNode a = json.valueToTree(stored);
    JsonNode b = json.valueToTree(offered);
    Comparator<JsonNode> numbersByValue =
        (x, y) -> {
          if (x.isNumber() && y.isNumber()) {
            return x.decimalValue().compareTo(y.decimalValue());
          }
          return x.equals(y) ? 0 : 1;
        };
    return a.equals(numbersByValue, b);
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
