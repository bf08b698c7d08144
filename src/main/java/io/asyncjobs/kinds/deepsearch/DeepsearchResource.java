package io.asyncjobs.kinds.deepsearch;

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
 * {@code POST /api/deepsearch}: enqueues a full-text search of a folder in the caller's tree. Any
 * authenticated caller may; the folder must be its own (an admin's may be any under {@code
 * files/}). The query is parsed here, so a syntax error is a 400 and nothing is enqueued.
 */
@Path("/api/deepsearch")
@Authenticated
@Tag(name = "kinds", description = "Enqueue a job of one kind")
@SecurityRequirement(name = "bearer")
public class DeepsearchResource {

  private final Enqueuer enqueuer;
  private final Caller caller;
  private final DeepsearchService service;

  DeepsearchResource(Enqueuer enqueuer, Caller caller, DeepsearchService service) {
    this.enqueuer = enqueuer;
    this.caller = caller;
    this.service = service;
  }

  /**
   * Checks the payload and enqueues the search.
   *
   * @param idempotencyKey the optional {@code Idempotency-Key} header
   * @param payload {@code {root, query, limit?}}
   * @return 202 with {@code Location} and the job's links
   */
  @POST
  @Consumes(MediaType.APPLICATION_JSON)
  @Produces(MediaType.APPLICATION_JSON)
  @Operation(
      summary = "Enqueue a full-text search",
      description =
          "Ranks the .txt, .md and .html files under a folder of your tree against a query in"
              + " Lucene's classic syntax (BM25) and leaves results.json with highlighted snippets"
              + " to download. Answers 202 with Location at once.")
  @RequestBody(
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              examples =
                  @ExampleObject(
                      name = "search",
                      value =
                          "{\"root\": \"docs\", \"query\": \"invoice AND (overdue OR late)\","
                              + " \"limit\": 20}")))
  public Response enqueue(
      @Parameter(description = "the same key from the same caller returns the first job")
          @HeaderParam(Enqueuer.IDEMPOTENCY_KEY)
          String idempotencyKey,
      Map<String, Object> body) {
    return enqueuer.accept(caller, service, body, idempotencyKey);
  }
}
