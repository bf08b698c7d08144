package io.asyncjobs.api;

import io.asyncjobs.auth.Caller;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.problem.ProblemException;
import io.quarkus.security.Authenticated;
import jakarta.enterprise.inject.Instance;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.HashMap;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.Operation;

/**
 * {@code POST /api/<kind>} for every kind: the kind's {@link PayloadCheck} (its service) checks the
 * body, {@link Enqueuer} enqueues it for the caller and answers 202. A kind with no service here is
 * a 404 problem. Each kind's route is described on its own at {@code /q/openapi}, by {@link
 * KindOperationsFilter}; this generic one is hidden there.
 */
@Path("/api/{kind: [a-z][a-z0-9_]{0,39}}")
@Authenticated
public class KindsResource {

  private final Enqueuer enqueuer;
  private final Caller caller;
  private final Map<String, PayloadCheck> kinds = new HashMap<>();

  KindsResource(Enqueuer enqueuer, Caller caller, Instance<PayloadCheck> kinds) {
    this.enqueuer = enqueuer;
    this.caller = caller;
    for (PayloadCheck kind : kinds) {
      this.kinds.put(kind.kind(), kind);
    }
  }

  @POST
  @Consumes(MediaType.APPLICATION_JSON)
  @Produces(MediaType.APPLICATION_JSON)
  @Operation(hidden = true)
  public Response enqueue(
      @PathParam("kind") String kind,
      @HeaderParam(Enqueuer.IDEMPOTENCY_KEY) String idempotencyKey,
      Map<String, Object> body) {
    PayloadCheck check = kinds.get(kind);
    if (check == null) {
      throw new ProblemException(
          Problem.of(404, "unknown-kind", "Unknown kind", "there is no kind " + kind + " here"));
    }
    return enqueuer.accept(caller, check, body, idempotencyKey);
  }
}
