package io.asyncjobs.example;

import io.asyncjobs.api.Enqueuer;
import io.asyncjobs.auth.Caller;
import io.quarkus.security.Authenticated;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** {@code POST /api/linecount}: any authenticated caller counts lines of its own files. */
@Path("/api/linecount")
@Authenticated
@Tag(name = "kinds", description = "Enqueue a job of one kind")
public class LineCountResource {

  private final Enqueuer enqueuer;
  private final Caller caller;
  private final LineCountService service;

  LineCountResource(Enqueuer enqueuer, Caller caller, LineCountService service) {
    this.enqueuer = enqueuer;
    this.caller = caller;
    this.service = service;
  }

  @POST
  @Consumes(MediaType.APPLICATION_JSON)
  @Produces(MediaType.APPLICATION_JSON)
  @Operation(summary = "Enqueue a line count of your files")
  public Response enqueue(
      @HeaderParam(Enqueuer.IDEMPOTENCY_KEY) String idempotencyKey, Map<String, Object> body) {
    return enqueuer.accept(caller, service, body, idempotencyKey);
  }
}
