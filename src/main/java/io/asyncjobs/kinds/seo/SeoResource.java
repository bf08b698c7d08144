package io.asyncjobs.kinds.seo;

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
 * {@code POST /api/seo}: enqueues an SEO audit of a folder of HTML pages in the caller's folder;
 * any authenticated caller may, for its own files (an admin for any under {@code files/}).
 */
@Path("/api/seo")
@Authenticated
@Tag(name = "kinds", description = "Enqueue a job of one kind")
@SecurityRequirement(name = "bearer")
public class SeoResource {

  private final Enqueuer enqueuer;
  private final Caller caller;
  private final SeoService service;

  SeoResource(Enqueuer enqueuer, Caller caller, SeoService service) {
    this.enqueuer = enqueuer;
    this.caller = caller;
    this.service = service;
  }

  /**
   * Checks the payload, records the caller's file scope in it and enqueues the audit.
   *
   * @param idempotencyKey the {@code Idempotency-Key} header, or null
   * @param payload {@code {site, base_url?}}
   * @return 202 with {@code Location}
   */
  @POST
  @Consumes(MediaType.APPLICATION_JSON)
  @Produces(MediaType.APPLICATION_JSON)
  @Operation(
      summary = "Enqueue an SEO audit",
      description =
          "Audits every .html/.htm page under site (a folder relative to your own folder):"
              + " titles, meta descriptions, h1, image alt, canonical, noindex, broken internal"
              + " links and anchors. The result is a zip of report.json, report.csv and, with"
              + " base_url, sitemap.xml.")
  @RequestBody(
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              examples =
                  @ExampleObject(
                      name = "with a sitemap",
                      value = "{\"site\": \"www\", \"base_url\": \"https://www.example.com/\"}")))
  public Response enqueue(
      @Parameter(description = "the same key from the same caller returns the first job")
          @HeaderParam(Enqueuer.IDEMPOTENCY_KEY)
          String idempotencyKey,
      Map<String, Object> body) {
    return enqueuer.accept(caller, service, body, idempotencyKey);
  }
}
