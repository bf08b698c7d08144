package io.asyncjobs.kinds.seometa;

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
 * {@code POST /api/seo_meta}: enqueues the derivation of titles, meta descriptions and Open Graph
 * tags for a folder of HTML pages in the caller's folder; any authenticated caller may, for its own
 * files (an admin for any under {@code files/}).
 */
@Path("/api/seo_meta")
@Authenticated
@Tag(name = "kinds", description = "Enqueue a job of one kind")
@SecurityRequirement(name = "bearer")
public class SeoMetaResource {

  private final Enqueuer enqueuer;
  private final Caller caller;
  private final SeoMetaService service;

  SeoMetaResource(Enqueuer enqueuer, Caller caller, SeoMetaService service) {
    this.enqueuer = enqueuer;
    this.caller = caller;
    this.service = service;
  }

  /**
   * Checks the payload, records the caller's file scope in it and enqueues the job.
   *
   * @param idempotencyKey the {@code Idempotency-Key} header, or null
   * @param payload {@code {site, write_copies?}}
   * @return 202 with {@code Location}
   */
  @POST
  @Consumes(MediaType.APPLICATION_JSON)
  @Produces(MediaType.APPLICATION_JSON)
  @Operation(
      summary = "Enqueue meta tag proposals",
      description =
          "Proposes for every .html/.htm page under site (a folder relative to your own folder)"
              + " a title (at most 60 characters), a meta description (at most 155), og:title"
              + " and og:description. The result is meta.json; with write_copies a zip of"
              + " meta.json and patched copies. The pages themselves are never changed.")
  @RequestBody(
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              examples =
                  @ExampleObject(
                      name = "with patched copies",
                      value = "{\"site\": \"www\", \"write_copies\": true}")))
  public Response enqueue(
      @Parameter(description = "the same key from the same caller returns the first job")
          @HeaderParam(Enqueuer.IDEMPOTENCY_KEY)
          String idempotencyKey,
      Map<String, Object> body) {
    return enqueuer.accept(caller, service, body, idempotencyKey);
  }
}
