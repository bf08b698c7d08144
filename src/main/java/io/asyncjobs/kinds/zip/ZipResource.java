package io.asyncjobs.kinds.zip;

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
import java.nio.file.LinkOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * {@code POST /api/zip}: archives files and folders of the caller's own tree (an admin's: any under
 * {@code files/}). Every path is checked here and again when the job runs.
 */
@Path("/api/zip")
@Authenticated
@Tag(name = "kinds", description = "Enqueue a job of one kind")
@SecurityRequirement(name = "bearer")
public class ZipResource {

  /** Most paths one archive may name. */
  static final int MAX_PATHS = 1000;

  /** Compression level when the payload names none, as {@code zip -6}. */
  static final int DEFAULT_LEVEL = 6;

  private static final Set<String> FIELDS = Set.of("paths", "name", "level");

  private final Enqueuer enqueuer;
  private final Caller caller;

  ZipResource(Enqueuer enqueuer, Caller caller) {
    this.enqueuer = enqueuer;
    this.caller = caller;
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
  @APIResponse(
      responseCode = "202",
      description = "Enqueued",
      content = @Content(schema = @Schema(implementation = EnqueuedView.class)))
  @APIResponse(responseCode = "400", ref = "malformed")
  @APIResponse(responseCode = "401", ref = "unauthenticated")
  @APIResponse(responseCode = "413", ref = "tooLarge")
  @APIResponse(responseCode = "415", ref = "unsupportedMediaType")
  @APIResponse(responseCode = "422", ref = "idempotencyKeyReused")
  public Response enqueue(
      @Parameter(description = "the same key from the same caller returns the first job")
          @HeaderParam(Enqueuer.IDEMPOTENCY_KEY)
          String idempotencyKey,
      Map<String, Object> body) {
    return enqueuer.acceptFileJob(
        caller,
        ZipService.KIND,
        body,
        idempotencyKey,
        "{\"paths\": [\"docs\"]}",
        (scope, request) -> {
          Payloads.allowOnly(request, FIELDS);
          List<String> paths = Payloads.strings(request, "paths", 1, MAX_PATHS);
          for (String path : paths) {
            if (!Files.exists(scope.resolve(path), LinkOption.NOFOLLOW_LINKS)) {
              throw new IllegalArgumentException(
                  "no file or folder \"" + path + "\" in your folder");
            }
          }
          String name = Payloads.optionalString(request, "name", 200).orElse(null);
          if (name != null && (name.contains("/") || name.contains("\\"))) {
            throw new IllegalArgumentException("name is a file name, without folders");
          }
          Map<String, Object> payload = new LinkedHashMap<>();
          payload.put("paths", paths);
          payload.put("level", Payloads.optionalInt(request, "level", 0, 9).orElse(DEFAULT_LEVEL));
          String download =
              name == null ? "archive.zip" : name.endsWith(".zip") ? name : name + ".zip";
          return new Enqueuer.FileJob(payload, download);
        });
  }
}
