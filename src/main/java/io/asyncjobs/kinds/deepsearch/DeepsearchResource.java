package io.asyncjobs.kinds.deepsearch;

import io.asyncjobs.api.EnqueuedView;
import io.asyncjobs.api.Enqueuer;
import io.asyncjobs.auth.Caller;
import io.asyncjobs.files.Payloads;
import io.quarkus.security.Authenticated;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.nio.file.Files;
import java.util.Map;
import java.util.Set;
import org.apache.lucene.queryparser.classic.ParseException;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
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

  /** The payload keys a caller may send. */
  static final Set<String> KEYS = Set.of("root", "query", "limit");

  /** Longest path a payload may name. */
  static final int MAX_PATH = 4096;

  /** Longest query a payload may hold. */
  static final int MAX_QUERY = 2000;

  private final Enqueuer enqueuer;
  private final Caller caller;

  DeepsearchResource(Enqueuer enqueuer, Caller caller) {
    this.enqueuer = enqueuer;
    this.caller = caller;
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
  @APIResponse(
      responseCode = "202",
      description = "Enqueued; follow Location or status_url",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = EnqueuedView.class)))
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
    return enqueuer.acceptFileJob(
        caller,
        DeepsearchService.KIND,
        payload,
        idempotencyKey,
        "{\"root\": \"docs\", \"query\": \"x\"}",
        (scope, body) -> {
          Payloads.allowOnly(body, KEYS);
          String root = Payloads.string(body, "root", MAX_PATH);
          String query = Payloads.string(body, "query", MAX_QUERY);
          Payloads.optionalInt(body, "limit", 1, DeepsearchService.MAX_LIMIT);
          java.nio.file.Path folder = scope.resolve(root);
          if (!Files.isDirectory(folder)) {
            throw new IllegalArgumentException(
                "root must name an existing folder in your tree; \""
                    + root
                    + (Files.exists(folder) ? "\" is not a folder" : "\" does not exist"));
          }
          try {
            DeepsearchService.parse(query);
          } catch (ParseException e) {
            throw new IllegalArgumentException("query: " + e.getMessage());
          } catch (RuntimeException e) {
            // Lucene refuses some well-formed queries while building them (a regular expression
            // too complex to run, too many clauses): still the caller's query, so a 400.
            throw new IllegalArgumentException("query cannot be run: " + e.getMessage());
          }
          return new Enqueuer.FileJob(body, null);
        });
  }
}
