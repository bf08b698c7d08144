package io.asyncjobs.api;

import io.quarkus.arc.Arc;
import io.quarkus.smallrye.openapi.OpenApiFilter;
import java.math.BigDecimal;
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
 * kind, a body too large, another media type, a reused Idempotency-Key and a database that cannot
 * be reached), declared here once. It runs when the application starts, since the kinds are the
 * beans found then.
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
              "422", "idempotencyKeyReused",
              "503", ProblemAnswersFilter.DATABASE_UNAVAILABLE));

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
              "/api/" + kind.kind(), OASFactory.createPathItem().POST(operation(kind.routeDoc())))
          .addPathItem(
              "/api/" + kind.kind() + "/batch",
              OASFactory.createPathItem().POST(batchOperation(kind.routeDoc())));
    }
  }

  /** {@code POST /api/<kind>}: one job. */
  static Operation operation(PayloadCheck.RouteDoc doc) {
    Operation operation =
        enqueue(doc.summary(), doc.description(), doc.exampleName(), doc.example())
            .addParameter(
                OASFactory.createParameter()
                    .name(Enqueuer.IDEMPOTENCY_KEY)
                    .in(Parameter.In.HEADER)
                    .description("the same key from the same caller returns the first job")
                    .schema(OASFactory.createSchema().addType(Schema.SchemaType.STRING)))
            .addParameter(
                query(
                    "priority",
                    "claim priority, -10 to 10, higher first; callers without the admin role that"
                        + " are not service principals may ask for at most jobs.user-max-priority"
                        + " (0 by default)",
                    Schema.SchemaType.INTEGER,
                    5))
            .addParameter(
                query(
                    "run_after",
                    "the earliest start, RFC 3339 with an offset, at most a year ahead and at"
                        + " most a year ago (a past time means due at once); not with"
                        + " delay_seconds",
                    Schema.SchemaType.STRING,
                    "2026-12-24T18:00:00Z"))
            .addParameter(
                query(
                        "delay_seconds",
                        "the earliest start, seconds from now (0 to "
                            + Enqueuer.MAX_DELAY_SECONDS
                            + ", a year); not with run_after",
                        Schema.SchemaType.INTEGER,
                        600)
                    .schema(
                        OASFactory.createSchema()
                            .addType(Schema.SchemaType.INTEGER)
                            .minimum(BigDecimal.ZERO)
                            .maximum(BigDecimal.valueOf(Enqueuer.MAX_DELAY_SECONDS))))
            .addParameter(
                query(
                    "callback_url",
                    "where the job's status view is POSTed, signed, once it is done or failed;"
                        + " http or https to a host jobs.callbacks.allowed-hosts names",
                    Schema.SchemaType.STRING,
                    "http://builds.ci.svc.cluster.local/hooks/async-jobs"));
    doc.extraAnswers()
        .forEach(
            (code, description) ->
                operation
                    .getResponses()
                    .addAPIResponse(code, OASFactory.createAPIResponse().description(description)));
    return operation;
  }

  /**
   * {@code POST /api/<kind>/batch}: the shared answers, but a 202 that lists one result per job,
   * and no Idempotency-Key header (each job carries its own key).
   */
  static Operation batchOperation(PayloadCheck.RouteDoc doc) {
    Object payload = Examples.parsed(doc.example());
    Operation operation =
        enqueue(
            doc.summary() + ", many at once",
            """
            Up to 1,000 jobs in one transaction: {"jobs": [{"payload": ..., "idempotency_key": \
            ..., "priority": N, "run_after": "..." or "delay_seconds": N, "callback_url": \
            "..."}]}, each payload checked as on the single route, all but the payload \
            optional, each field as the single route's query parameter of that name. A refused \
            payload makes the whole batch a 400 naming each refused job by its index; a key used \
            before for another request makes it a 422. Either way nothing is enqueued.""",
            "two jobs",
            Map.of(
                "jobs",
                List.of(
                    Map.of("payload", payload, "idempotency_key", "job-1"),
                    Map.of(
                        "payload",
                        payload,
                        "priority",
                        -2,
                        "delay_seconds",
                        600,
                        "callback_url",
                        "http://builds.ci.svc.cluster.local/hooks/async-jobs"))));
    operation
        .getResponses()
        .addAPIResponse(
            "202",
            OASFactory.createAPIResponse()
                .description(
                    "All enqueued: one result per job, in the order sent; replayed is true for a"
                        + " job its idempotency_key had enqueued before"));
    return operation;
  }

  /** An optional query parameter of the single enqueue, with an example. */
  private static Parameter query(
      String name, String description, Schema.SchemaType type, Object example) {
    return OASFactory.createParameter()
        .name(name)
        .in(Parameter.In.QUERY)
        .description(description)
        .example(example)
        .schema(OASFactory.createSchema().addType(type));
  }

  /** An enqueue route with the answers every kind shares and one example request. */
  private static Operation enqueue(
      String summary, String description, String exampleName, Object example) {
    APIResponses responses = OASFactory.createAPIResponses();
    SHARED.forEach(
        (code, shared) ->
            responses.addAPIResponse(code, OASFactory.createAPIResponse().ref(shared)));
    return OASFactory.createOperation()
        .summary(summary)
        .description(description)
        .tags(List.of(TAG))
        .addSecurityRequirement(OASFactory.createSecurityRequirement().addScheme("bearer"))
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
                                    exampleName,
                                    OASFactory.createExample()
                                        .value(
                                            example instanceof String text
                                                ? Examples.parsed(text)
                                                : example)))))
        .responses(responses);
  }
}
