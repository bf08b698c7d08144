package io.asyncjobs.api;

import io.asyncjobs.callbacks.CallbackSignature;
import io.asyncjobs.queue.JobPriority;
import io.quarkus.arc.Arc;
import io.quarkus.smallrye.openapi.OpenApiFilter;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.callbacks.Callback;
import org.eclipse.microprofile.openapi.models.media.Content;
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
          Map.ofEntries(
              Map.entry("202", "enqueued"),
              Map.entry("400", "malformed"),
              Map.entry("401", "unauthenticated"),
              Map.entry("403", "forbidden"),
              Map.entry("404", "unknownKind"),
              Map.entry("406", ProblemAnswersFilter.NOT_ACCEPTABLE),
              Map.entry("408", ProblemAnswersFilter.BODY_TIMEOUT),
              Map.entry("413", "tooLarge"),
              Map.entry("415", "unsupportedMediaType"),
              Map.entry("422", "idempotencyKeyReused"),
              Map.entry("429", ProblemAnswersFilter.QUOTA_EXCEEDED),
              Map.entry("503", ProblemAnswersFilter.DATABASE_UNAVAILABLE)));

  /** The schemas of a batch's answer, under {@code components.schemas}. */
  static final String BATCH_RESULT = "BatchResult";

  static final String BATCH_ITEM = "BatchItem";

  /** The completion callback, under {@code components.callbacks}, that every enqueue names. */
  static final String CALLBACK = "jobEnded";

  private static final String JSON = "application/json";

  /** The callback's body, the schema of {@code Job}. */
  static final String JOB = "Job";

  @Override
  public void filterOpenAPI(OpenAPI openAPI) {
    if (openAPI.getPaths() == null) {
      openAPI.setPaths(OASFactory.createPaths());
    }
    if (openAPI.getTags() == null
        || openAPI.getTags().stream().noneMatch(t -> TAG.equals(t.getName()))) {
      openAPI.addTag(OASFactory.createTag().name(TAG).description("Enqueue a job of one kind"));
    }
    if (openAPI.getComponents() == null) {
      openAPI.setComponents(OASFactory.createComponents());
    }
    openAPI.getComponents().addCallback(CALLBACK, callback());
    openAPI.getComponents().addSchema(BATCH_ITEM, batchItemSchema());
    openAPI
        .getComponents()
        .addSchema(
            BATCH_RESULT,
            object("All enqueued: one result per job, in the order sent")
                .addProperty(
                    "jobs",
                    OASFactory.createSchema()
                        .addType(Schema.SchemaType.ARRAY)
                        .items(OASFactory.createSchema().ref(BATCH_ITEM)))
                .addRequired("jobs"));
    List<PayloadCheck> kinds = new ArrayList<>();
    Arc.container().select(PayloadCheck.class).forEach(kinds::add);
    // A stable order, so that the document is the same on every start and every replica.
    kinds.sort(Comparator.comparing(PayloadCheck::kind));
    for (PayloadCheck kind : kinds) {
      String payload = payloadSchemaName(kind.kind());
      openAPI
          .getComponents()
          .addSchema(payload, JsonSchemas.parse(kind.routeDoc().payloadSchema()));
      openAPI
          .getComponents()
          .addSchema(pascal(kind.kind()) + "BatchJob", batchJobSchema(payload))
          .addSchema(pascal(kind.kind()) + "Batch", batchRequestSchema(kind.kind()));
      openAPI
          .getPaths()
          .addPathItem(
              "/api/" + kind.kind(),
              OASFactory.createPathItem().POST(operation(kind.kind(), kind.routeDoc())))
          .addPathItem(
              "/api/" + kind.kind() + "/batch",
              OASFactory.createPathItem().POST(batchOperation(kind.kind(), kind.routeDoc())));
    }
  }

  /** The name of a kind's payload schema: {@code seo_meta} has {@code SeoMetaPayload}. */
  static String payloadSchemaName(String kind) {
    return pascal(kind) + "Payload";
  }

  /** {@code seo_meta} as {@code SeoMeta}, for schema names and operation ids. */
  static String pascal(String kind) {
    StringBuilder name = new StringBuilder();
    for (String word : kind.split("[_\\-]")) {
      if (!word.isEmpty()) {
        name.append(Character.toUpperCase(word.charAt(0))).append(word.substring(1));
      }
    }
    return name.toString();
  }

  private static Schema object(String description) {
    return OASFactory.createSchema().addType(Schema.SchemaType.OBJECT).description(description);
  }

  private static Schema string() {
    return OASFactory.createSchema().addType(Schema.SchemaType.STRING);
  }

  /** One job of a batch's answer (Enqueuer.BatchItemView). */
  private static Schema batchItemSchema() {
    Schema item =
        object("One job of a batch")
            .addProperty("uid", string().format("uuid"))
            .addProperty("kind", string())
            .addProperty(
                "status", string().enumeration(List.of("pending", "running", "done", "failed")))
            .addProperty("status_url", string())
            .addProperty("events_url", string())
            .addProperty(
                "replayed",
                OASFactory.createSchema()
                    .addType(Schema.SchemaType.BOOLEAN)
                    .description("true when its idempotency_key had enqueued this job before"));
    item.getProperties().keySet().forEach(item::addRequired);
    return item;
  }

  /** One job of a kind's batch: a payload and, optionally, the single route's options. */
  private static Schema batchJobSchema(String payload) {
    return object("One job: its payload and, optionally, the single route's options")
        .additionalPropertiesBoolean(false)
        .addProperty("payload", OASFactory.createSchema().ref(payload))
        .addProperty(
            "idempotency_key",
            idempotencyKey().description("the same key from the same caller returns the first job"))
        .addProperty("priority", priority())
        .addProperty("run_after", runAfter())
        .addProperty("delay_seconds", delaySeconds())
        .addProperty("callback_url", callbackUrl())
        .addRequired("payload");
  }

  /** The body of a kind's batch route: its jobs. */
  private static Schema batchRequestSchema(String kind) {
    return object("Up to " + Enqueuer.MAX_REQUEST_BATCH + " " + kind + " jobs")
        .additionalPropertiesBoolean(false)
        .addProperty(
            "jobs",
            OASFactory.createSchema()
                .addType(Schema.SchemaType.ARRAY)
                .minItems(1)
                .maxItems(Enqueuer.MAX_REQUEST_BATCH)
                .items(OASFactory.createSchema().ref(pascal(kind) + "BatchJob")))
        .addRequired("jobs");
  }

  /** 1 to 200 visible ASCII characters, as Enqueuer checks a key. */
  private static Schema idempotencyKey() {
    return string().minLength(1).maxLength(200).pattern("^[!-~]+$");
  }

  private static Schema priority() {
    return OASFactory.createSchema()
        .addType(Schema.SchemaType.INTEGER)
        .minimum(BigDecimal.valueOf(JobPriority.MIN))
        .maximum(BigDecimal.valueOf(JobPriority.MAX))
        .description(
            "claim priority, higher first; callers without the admin role that are not service"
                + " principals may ask for at most jobs.user-max-priority (0 by default), a"
                + " higher one is a 403");
  }

  private static Schema runAfter() {
    return string()
        .format("date-time")
        .description(
            "the earliest start, RFC 3339 with an offset, at most a year ahead and at most a"
                + " year ago (a past time means due at once); not with delay_seconds");
  }

  private static Schema delaySeconds() {
    return OASFactory.createSchema()
        .addType(Schema.SchemaType.INTEGER)
        .minimum(BigDecimal.ZERO)
        .maximum(BigDecimal.valueOf(Enqueuer.MAX_DELAY_SECONDS))
        .description(
            "the earliest start, seconds from now (0 to "
                + Enqueuer.MAX_DELAY_SECONDS
                + ", a year); not with run_after");
  }

  private static Schema callbackUrl() {
    return string()
        .format("uri")
        .description(
            "where the job's status view is POSTed, signed, once it is done or failed; http or"
                + " https to a host jobs.callbacks.allowed-hosts names");
  }

  /** {@code POST /api/<kind>}: one job. */
  static Operation operation(String kind, PayloadCheck.RouteDoc doc) {
    Operation operation =
        enqueue(
                doc.summary(),
                doc.description(),
                doc.exampleName(),
                doc.example(),
                OASFactory.createSchema().ref(payloadSchemaName(kind)))
            .operationId("enqueue" + pascal(kind))
            .addParameter(
                OASFactory.createParameter()
                    .name(Enqueuer.IDEMPOTENCY_KEY)
                    .in(Parameter.In.HEADER)
                    .description("the same key from the same caller returns the first job")
                    .schema(idempotencyKey()))
            .addParameter(query("priority", priority(), 5))
            .addParameter(query("run_after", runAfter(), "2026-12-24T18:00:00Z"))
            .addParameter(query("delay_seconds", delaySeconds(), 600))
            .addParameter(
                query(
                    "callback_url",
                    callbackUrl(),
                    "http://builds.ci.svc.cluster.local/hooks/async-jobs"))
            .addCallback(CALLBACK, OASFactory.createCallback().ref(CALLBACK));
    doc.extraAnswers()
        .forEach(
            (code, description) ->
                operation
                    .getResponses()
                    .addAPIResponse(
                        code,
                        OASFactory.createAPIResponse()
                            .description(description)
                            .content(ProblemAnswersFilter.problemContent())));
    return operation;
  }

  /**
   * {@code POST /api/<kind>/batch}: the shared answers, but a 202 that lists one result per job,
   * and no Idempotency-Key header (each job carries its own key).
   */
  static Operation batchOperation(String kind, PayloadCheck.RouteDoc doc) {
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
                        "http://builds.ci.svc.cluster.local/hooks/async-jobs"))),
            OASFactory.createSchema().ref(pascal(kind) + "Batch"));
    operation
        .operationId("enqueue" + pascal(kind) + "Batch")
        .addCallback(CALLBACK, OASFactory.createCallback().ref(CALLBACK))
        .getResponses()
        .addAPIResponse(
            "202",
            OASFactory.createAPIResponse()
                .description(
                    "All enqueued: one result per job, in the order sent; replayed is true for a"
                        + " job its idempotency_key had enqueued before")
                .content(json(OASFactory.createSchema().ref(BATCH_RESULT))));
    return operation;
  }

  /**
   * The POST a job's callback_url receives once the job is done or failed: its status view, signed.
   * Each receiver answers 2xx once it has the news; anything else is tried again.
   */
  static Callback callback() {
    return OASFactory.createCallback()
        .addPathItem(
            "{$request.query.callback_url}",
            OASFactory.createPathItem()
                .POST(
                    OASFactory.createOperation()
                        .operationId("jobEnded")
                        .summary("The job ended")
                        .description(
                            "The job's status view, POSTed once it is done or failed, signed"
                                + " with the deployment's callback key (docs/api.md says how to"
                                + " check it). Answer 2xx; another answer, or none within the"
                                + " timeout, is tried again with backoff until"
                                + " jobs.callbacks.give-up-after. A batch job's URL is its"
                                + " callback_url field.")
                        .addParameter(
                            header(
                                CallbackSignature.HEADER,
                                "t=<epoch seconds>,v1=<hex HMAC-SHA256 of t.body>"))
                        .addParameter(
                            header(
                                "X-Async-Jobs-Delivery",
                                "<uid>/<attempt>: the same for a repeat of one delivery"))
                        .requestBody(
                            OASFactory.createRequestBody()
                                .required(true)
                                .content(json(OASFactory.createSchema().ref(JOB))))
                        .responses(
                            OASFactory.createAPIResponses()
                                .addAPIResponse(
                                    "2XX",
                                    OASFactory.createAPIResponse()
                                        .description("Delivered; the body is not read")))));
  }

  private static Parameter header(String name, String description) {
    return OASFactory.createParameter()
        .name(name)
        .in(Parameter.In.HEADER)
        .required(true)
        .description(description)
        .schema(string());
  }

  /** An optional query parameter of the single enqueue, with an example. */
  private static Parameter query(String name, Schema schema, Object example) {
    return OASFactory.createParameter()
        .name(name)
        .in(Parameter.In.QUERY)
        .description(schema.getDescription())
        .example(example)
        .schema(schema);
  }

  /** An enqueue route with the answers every kind shares and one example request. */
  private static Operation enqueue(
      String summary, String description, String exampleName, Object example, Schema body) {
    Content request = json(body);
    request
        .getMediaType(JSON)
        .addExample(
            exampleName,
            OASFactory.createExample()
                .value(example instanceof String text ? Examples.parsed(text) : example));
    APIResponses responses = OASFactory.createAPIResponses();
    SHARED.forEach(
        (code, shared) ->
            responses.addAPIResponse(code, OASFactory.createAPIResponse().ref(shared)));
    return OASFactory.createOperation()
        .summary(summary)
        .description(description)
        .tags(List.of(TAG))
        .addSecurityRequirement(OASFactory.createSecurityRequirement().addScheme("bearer"))
        .requestBody(OASFactory.createRequestBody().required(true).content(request))
        .responses(responses);
  }

  /** An application/json body whose schema is {@code schema}. */
  private static Content json(Schema schema) {
    return ProblemAnswersFilter.content(JSON, schema);
  }
}
