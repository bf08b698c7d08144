package io.asyncjobs.api;

import io.quarkus.smallrye.openapi.OpenApiFilter;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.PathItem;
import org.eclipse.microprofile.openapi.models.responses.APIResponses;

/**
 * Gives every kind's enqueue route ({@code POST}, tagged {@value #TAG}) the answers they all share,
 * declared once here instead of on each resource: 202 with the job's links, and the problems of a
 * malformed body, no token, a disabled kind, a body too large, another media type and a reused
 * Idempotency-Key. A resource declares only what its kind adds (fork's 409).
 */
@OpenApiFilter(OpenApiFilter.RunStage.BUILD)
public class KindOperationsFilter implements OASFilter {

  /** The tag of the enqueue routes. */
  public static final String TAG = "kinds";

  /** Status code and shared response (under {@code components.responses}) of every route. */
  static final Map<String, String> SHARED =
      Map.of(
          "202", "enqueued",
          "400", "malformed",
          "401", "unauthenticated",
          "404", "notFound",
          "413", "tooLarge",
          "415", "unsupportedMediaType",
          "422", "idempotencyKeyReused");

  @Override
  public void filterOpenAPI(OpenAPI openAPI) {
    if (openAPI.getPaths() == null || openAPI.getPaths().getPathItems() == null) {
      return;
    }
    for (PathItem item : openAPI.getPaths().getPathItems().values()) {
      Operation post = item.getPOST();
      List<String> tags = post == null ? null : post.getTags();
      if (tags == null || !tags.contains(TAG)) {
        continue;
      }
      APIResponses responses = post.getResponses();
      if (responses == null) {
        responses = OASFactory.createAPIResponses();
        post.setResponses(responses);
      }
      for (Map.Entry<String, String> shared : SHARED.entrySet()) {
        if (!responses.hasAPIResponse(shared.getKey())) {
          responses.addAPIResponse(
              shared.getKey(), OASFactory.createAPIResponse().ref(shared.getValue()));
        }
      }
    }
  }
}
