package io.asyncjobs.api;

import io.quarkus.arc.Arc;
import io.quarkus.smallrye.openapi.OpenApiFilter;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.parameters.Parameter;
import org.eclipse.microprofile.openapi.models.responses.APIResponses;

/**
 * Describes {@code POST /api/<kind>} once per kind, from the kind's {@link PayloadCheck.RouteDoc}:
 * its summary, description and example, the Idempotency-Key header, and the answers every kind
 * shares (202 with the job's links, and the problems of a malformed body, no token, a disabled
 * kind, a body too large, another media type and a reused Idempotency-Key), declared here once. It
 * runs when the application starts, since the kinds are the beans found then.
 */
@OpenApiFilter(OpenApiFilter.RunStage.RUN)
public class KindOperationsFilter implements OASFilter {

  /** The tag of the enqueue routes. */
  public static final String TAG = "kinds";

  /** Status code and shared response (under {@code components.responses}) of every route. */
  static final Map<String, String> SHARED =
      new TreeMap<>(
          Map.of(
              "202", "enqueued",
              "400", "malformed",
              "401", "unauthenticated",
              "404", "notFound",
              "413", "tooLarge",
              "415", "unsupportedMediaType",
              "422", "idempotencyKeyReused"));

  @Override
  public void filterOpenAPI(OpenAPI openAPI) {
    if (openAPI.getPaths() == null) {
      openAPI.setPaths(OASFactory.createPaths());
    }
    if (openAPI.getTags() == null
        || openAPI.getTags().stream().noneMatch(t -> TAG.equals(t.getName()))) {
      openAPI.addTag(OASFactory.createTag().name(TAG).description("Enqueue a job of one kind"));
    }
    for (PayloadCheck kind : Arc.container().select(PayloadCheck.class)) {
      openAPI
          .getPaths()
          .addPathItem(
              "/api/" + kind.kind(), OASFactory.createPathItem().POST(operation(kind.routeDoc())));
    }
  }

  static Operation operation(PayloadCheck.RouteDoc doc) {
    APIResponses responses = OASFactory.createAPIResponses();
    SHARED.forEach(
        (code, shared) ->
            responses.addAPIResponse(code, OASFactory.createAPIResponse().ref(shared)));
    doc.extraAnswers()
        .forEach(
            (code, description) ->
                responses.addAPIResponse(
                    code, OASFactory.createAPIResponse().description(description)));
    return OASFactory.createOperation()
        .summary(doc.summary())
        .description(doc.description())
        .tags(List.of(TAG))
        .addSecurityRequirement(OASFactory.createSecurityRequirement().addScheme("bearer"))
        .addParameter(
            OASFactory.createParameter()
                .name(Enqueuer.IDEMPOTENCY_KEY)
                .in(Parameter.In.HEADER)
                .description("the same key from the same caller returns the first job")
                .schema(OASFactory.createSchema().addType(Schema.SchemaType.STRING)))
        .requestBody(
            OASFactory.createRequestBody()
                .required(true)
                .content(
                    OASFactory.createContent()
                        .addMediaType(
                            "application/json",
                            OASFactory.createMediaType()
                                .schema(OASFactory.createSchema().addType(Schema.SchemaType.OBJECT))
                                .addExample(
                                    doc.exampleName(),
                                    OASFactory.createExample()
                                        .value(Examples.parsed(doc.example()))))))
        .responses(responses);
  }
}
