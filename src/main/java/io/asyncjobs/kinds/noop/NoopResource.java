package io.asyncjobs.kinds.noop;

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
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** {@code POST /api/noop}: enqueues a diagnostic job; any authenticated caller may. */
@Path("/api/noop")
@Authenticated
@Tag(name = "kinds", description = "Enqueue a job of one kind")
@SecurityRequirement(name = "bearer")
public class NoopResource {

  private final Enqueuer enqueuer;
  private final Caller caller;
  private final NoopService service;

  NoopResource(Enqueuer enqueuer, Caller caller, NoopService service) {
    this.enqueuer = enqueuer;
    this.caller = caller;
    this.service = service;
  }

  @POST
  @Consumes(MediaType.APPLICATION_JSON)
  @Produces(MediaType.APPLICATION_JSON)
  @Operation(
      summary = "Enqueue a no-op job",
      description =
          "A diagnostic job (off unless jobs.services.noop.enabled): sleeps, reports progress,"
              + " optionally fails or leaves a file to download. Answers 202 with Location at once.")
  @RequestBody(
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              examples =
                  @ExampleObject(
                      name = "with a file",
                      value =
                          "{\"sleep_ms\": 2000, \"progress_steps\": 4, \"artifact_bytes\": 1024,"
                              + " \"name\": \"hello.txt\"}")))
  public Response enqueue(
      @Parameter(description = "the same key from the same caller returns the first job")
          @HeaderParam(Enqueuer.IDEMPOTENCY_KEY)
          String idempotencyKey,
      Map<String, Object> body) {
    return enqueuer.accept(caller, service, body, idempotencyKey);
  }
}
