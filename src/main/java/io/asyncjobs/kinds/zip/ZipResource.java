package io.asyncjobs.kinds.zip;

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

/**
 * {@code POST /api/zip}: archives files and folders of the caller's own tree (an admin's: any under
 * {@code files/}). Every path is checked here and again when the job runs.
 */
@Path("/api/zip")
@Authenticated
@Tag(name = "kinds", description = "Enqueue a job of one kind")
@SecurityRequirement(name = "bearer")
public class ZipResource {

  private final Enqueuer enqueuer;
  private final Caller caller;
  private final ZipService service;

  ZipResource(Enqueuer enqueuer, Caller caller, ZipService service) {
    this.enqueuer = enqueuer;
    this.caller = caller;
    this.service = service;
  }

  @POST
  @Consumes(MediaType.APPLICATION_JSON)
  @Produces(MediaType.APPLICATION_JSON)
  @Operation(
      summary = "Enqueue a zip archive",
      description =
          "One zip of the named files and folders (recursive, empty folders kept), relative to"
              + " the caller's folder files/<owner kind>/<sub>/. Already-compressed types are stored.")
  @RequestBody(
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              examples =
                  @ExampleObject(
                      name = "two folders",
                      value =
                          "{\"paths\": [\"photos/2026\", \"notes.md\"], \"name\": \"backup.zip\"}")))
  public Response enqueue(
      @Parameter(description = "the same key from the same caller returns the first job")
          @HeaderParam(Enqueuer.IDEMPOTENCY_KEY)
          String idempotencyKey,
      Map<String, Object> body) {
    return enqueuer.accept(caller, service, body, idempotencyKey);
  }
}
