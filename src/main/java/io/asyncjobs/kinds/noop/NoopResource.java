package io.asyncjobs.kinds.noop;

import io.asyncjobs.api.EnqueuedView;
import io.asyncjobs.api.Enqueuer;
import io.asyncjobs.auth.Caller;
import io.asyncjobs.problem.ProblemException;
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
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
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

  NoopResource(Enqueuer enqueuer, Caller caller) {
    this.enqueuer = enqueuer;
    this.caller = caller;
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
  @APIResponse(
      responseCode = "202",
      description = "Enqueued; follow Location or status_url",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = EnqueuedView.class),
              examples =
                  @ExampleObject(
                      name = "enqueued",
                      value =
                          "{\"uid\": \"0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f\", \"kind\": \"noop\","
                              + " \"status\": \"pending\", \"status_url\":"
                              + " \"/api/jobs/0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f\","
                              + " \"events_url\":"
                              + " \"/api/jobs/0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f/events\"}")))
  @APIResponse(responseCode = "400", ref = "malformed")
  @APIResponse(responseCode = "401", ref = "unauthenticated")
  @APIResponse(responseCode = "404", ref = "notFound")
  @APIResponse(responseCode = "413", ref = "tooLarge")
  @APIResponse(responseCode = "415", ref = "unsupportedMediaType")
  @APIResponse(responseCode = "422", ref = "idempotencyKeyReused")
  public Response enqueue(
      @Parameter(description = "the same key from the same caller returns the first job")
          @HeaderParam(Enqueuer.IDEMPOTENCY_KEY)
          String idempotencyKey,
      Map<String, Object> payload) {
    enqueuer.requireEnabled(NoopService.KIND);
    if (payload == null) {
      throw ProblemException.badRequest("the body must be a JSON object, for example {}");
    }
    try {
      NoopService.validate(payload);
    } catch (IllegalArgumentException e) {
      throw ProblemException.badRequest(e.getMessage());
    }
    String name = payload.get("name") instanceof String text ? text : null;
    return enqueuer.accept(caller, NoopService.KIND, payload, name, idempotencyKey);
  }
}
