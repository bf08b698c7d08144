package io.asyncjobs.api;

import io.asyncjobs.auth.Caller;
import io.quarkus.security.Authenticated;
import jakarta.annotation.security.PermitAll;
import jakarta.enterprise.inject.Instance;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.NotAllowedException;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.HashMap;
import java.util.Map;

/**
 * {@code POST /api/<kind>} for every kind: the kind's {@link PayloadCheck} (its service) checks the
 * body, {@link Enqueuer} enqueues it for the caller and answers 202. A kind with no service here is
 * a 404 problem. Another method is a 405 on a kind's route and a 404 elsewhere, as on any route.
 * The path leaves out the words of the other {@code /api} routes, so that a method those routes
 * lack is still their 405. Each kind's route is described on its own at {@code /q/openapi}, by
 * {@link KindOperationsFilter}; this class itself is left out of the scan ({@code
 * mp.openapi.scan.exclude.classes}). Only the enqueue asks for a token.
 */
@PermitAll
@Path("/api/{kind: (?!(?:jobs|admin)$)[a-z][a-z0-9_]{0,39}}")
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
  @Authenticated
  @Consumes(MediaType.APPLICATION_JSON)
  @Produces(MediaType.APPLICATION_JSON)
  public Response enqueue(
      @PathParam("kind") String kind,
      @HeaderParam(Enqueuer.IDEMPOTENCY_KEY) String idempotencyKey,
      Map<String, Object> body) {
    return enqueuer.accept(caller, check(kind), body, idempotencyKey);
  }

  /** {@code POST /api/<kind>/batch}: many jobs of the kind in one transaction. */
  @POST
  @Path("batch")
  @Authenticated
  @Consumes(MediaType.APPLICATION_JSON)
  @Produces(MediaType.APPLICATION_JSON)
  public Response enqueueBatch(@PathParam("kind") String kind, Map<String, Object> body) {
    return enqueuer.acceptBatch(caller, check(kind), body);
  }

  @GET
  public Response get(@PathParam("kind") String kind) {
    throw notTaken(kind);
  }

  @PUT
  public Response put(@PathParam("kind") String kind) {
    throw notTaken(kind);
  }

  @DELETE
  public Response delete(@PathParam("kind") String kind) {
    throw notTaken(kind);
  }

  @PATCH
  public Response patch(@PathParam("kind") String kind) {
    throw notTaken(kind);
  }

  /** The kind's check, or the 404 of a kind that does not exist. */
  private PayloadCheck check(String kind) {
    PayloadCheck check = kinds.get(kind);
    if (check == null) {
      throw Enqueuer.unknownKind(kind);
    }
    return check;
  }

  /** What a method other than POST gets: 405 on a kind's route, else no route at all (404). */
  private WebApplicationException notTaken(String kind) {
    return kinds.containsKey(kind) ? new NotAllowedException("POST") : new NotFoundException();
  }
}
