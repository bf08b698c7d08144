package io.asyncjobs.kinds.fork;

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
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * {@code POST /api/fork}: enqueues the copy of a folder to a new folder. Any authenticated caller
 * may, within its own tree (an admin's is all of {@code files/}). A target that exists already is a
 * 409; every other problem with the payload is a 400, and nothing is enqueued.
 */
@Path("/api/fork")
@Authenticated
@Tag(name = "kinds", description = "Enqueue a job of one kind")
@SecurityRequirement(name = "bearer")
public class ForkResource {

  private final Enqueuer enqueuer;
  private final Caller caller;
  private final ForkService service;

  ForkResource(Enqueuer enqueuer, Caller caller, ForkService service) {
    this.enqueuer = enqueuer;
    this.caller = caller;
    this.service = service;
  }

  /**
   * Checks the payload and enqueues the fork.
   *
   * @param idempotencyKey the optional {@code Idempotency-Key} header
   * @param payload {@code {source, target}}
   * @return 202 with {@code Location} and the job's links
   */
  @POST
  @Consumes(MediaType.APPLICATION_JSON)
  @Produces(MediaType.APPLICATION_JSON)
  @Operation(
      summary = "Enqueue a folder fork",
      description =
          "Copies a folder of your tree to a new folder (times and permissions kept), under a"
              + " temporary name first and renamed when complete. The new folder is yours to keep:"
              + " it outlives the job. Answers 202 with Location at once.")
  @RequestBody(
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              examples =
                  @ExampleObject(
                      name = "fork",
                      value = "{\"source\": \"site\", \"target\": \"drafts/site-2\"}")))
  @APIResponse(responseCode = "409", description = "The target exists (type target-exists)")
  public Response enqueue(
      @Parameter(description = "the same key from the same caller returns the first job")
          @HeaderParam(Enqueuer.IDEMPOTENCY_KEY)
          String idempotencyKey,
      Map<String, Object> body) {
    return enqueuer.accept(caller, service, body, idempotencyKey);
  }
}
