package io.asyncjobs.api;

import io.asyncjobs.problem.Problem;
import io.quarkus.smallrye.openapi.OpenApiFilter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.headers.Header;
import org.eclipse.microprofile.openapi.models.media.Content;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;

/**
 * The error answers routes share, under {@code components.responses}, each an {@code
 * application/problem+json} body of the {@code Problem} schema: routes name them with {@code ref}
 * ({@code @APIResponse(responseCode = "404", ref = "notFound")}). Every route may meet a database
 * that cannot be reached, so every operation gets the 503 here, rather than on each route.
 */
@OpenApiFilter(OpenApiFilter.RunStage.BUILD)
public class ProblemAnswersFilter implements OASFilter {

  /** Name, description and, for some, an example of each shared error answer. */
  private record Answer(String description, String exampleName, String example) {}

  /** The shared answer of a database that cannot be reached, which every route may give. */
  static final String DATABASE_UNAVAILABLE = "databaseUnavailable";

  /** The download, which a signed link opens without a token. */
  static final String DOWNLOAD = "downloadJobFile";

  /** The shared answer to an Accept header that names no type the route answers. */
  static final String NOT_ACCEPTABLE = "notAcceptable";

  /** The shared answer to a body that declared its length and did not arrive in time. */
  static final String BODY_TIMEOUT = "bodyTimeout";

  /** The shared answer of an enqueue over its owner's pending quota. */
  static final String QUOTA_EXCEEDED = "quotaExceeded";

  /**
   * Response headers routes declare by reference ({@code @Header(ref = "ETag")}), under {@code
   * components.headers}: name, description and schema type.
   */
  private static final Map<String, String[]> HEADERS = new LinkedHashMap<>();

  static {
    HEADERS.put("Location", new String[] {"the job's status URL", "string"});
    HEADERS.put(
        "Idempotent-Replayed",
        new String[] {
          "true when the Idempotency-Key had enqueued this job before: the answer is the first"
              + " job's",
          "boolean"
        });
    HEADERS.put("Retry-After", new String[] {"seconds to wait before trying again", "integer"});
    HEADERS.put(
        "ETag", new String[] {"the file's version, for If-None-Match and If-Range", "string"});
    HEADERS.put("Accept-Ranges", new String[] {"bytes: a Range may be asked for", "string"});
    HEADERS.put("Cache-Control", new String[] {"private, no-cache", "string"});
    HEADERS.put(
        "Content-Disposition",
        new String[] {"attachment, with the download's file name", "string"});
    HEADERS.put(
        "Content-Range",
        new String[] {
          "the bytes sent and the file's size (bytes 0-1023/4096), or the size alone on a 416"
              + " (bytes */4096)",
          "string"
        });
    HEADERS.put("WWW-Authenticate", new String[] {"Bearer: the scheme a token must use", "string"});
  }

  private static final Map<String, Answer> ANSWERS = new LinkedHashMap<>();

  static {
    ANSWERS.put(
        "malformed",
        new Answer("A malformed uid, filter, header or body", "bad uid", Examples.BAD_UID));
    ANSWERS.put(
        "unauthenticated", new Answer("No bearer token, or an invalid or expired one", null, null));
    ANSWERS.put(
        "forbidden",
        new Answer(
            "A token without a subject, a role the token lacks, a priority above the caller's, or an invalid or expired download link",
            null,
            null));
    ANSWERS.put(
        "notFound",
        new Answer(
            "No such job, or another owner's (the two look the same)", "no job", Examples.PROBLEM));
    ANSWERS.put(
        "unknownKind",
        new Answer(
            "No such kind, or one this deployment has not enabled (unknown-kind)", null, null));
    ANSWERS.put("conflict", new Answer("The job is not in a state that allows this", null, null));
    ANSWERS.put(
        "tooLarge", new Answer("The body is larger than jobs.api.max-body-bytes", null, null));
    ANSWERS.put(
        BODY_TIMEOUT,
        new Answer(
            "The body declared its length and did not arrive whole within the server's read"
                + " timeout (quarkus.http.read-timeout); the connection is closed",
            null,
            null));
    ANSWERS.put("unsupportedMediaType", new Answer("The body is not application/json", null, null));
    ANSWERS.put(
        "idempotencyKeyReused",
        new Answer("The Idempotency-Key was used before for a different request", null, null));
    ANSWERS.put(
        NOT_ACCEPTABLE,
        new Answer(
            "The Accept header names no type this route answers (application/json, and"
                + " application/problem+json for errors)",
            null,
            null));
    ANSWERS.put(
        "rangeNotSatisfiable",
        new Answer("The Range lies outside the file; Content-Range gives its size", null, null));
    ANSWERS.put(
        QUOTA_EXCEEDED,
        new Answer(
            "The owner has as many pending jobs of this kind as its quota allows"
                + " (quota-exceeded); try again after Retry-After",
            null,
            null));
    ANSWERS.put(
        "tooManyStreams",
        new Answer(
            "The owner has as many event streams open on this replica as it may"
                + " (too-many-streams); poll the status, or try again after Retry-After",
            null,
            null));
    ANSWERS.put(
        DATABASE_UNAVAILABLE,
        new Answer(
            "The database cannot be reached for now (a restart or a failover); try again after"
                + " Retry-After",
            null,
            null));
  }

  /**
   * Schemas of request bodies, whose fields a caller may leave out; every other schema is an answer
   * the API writes whole (Jackson writes each field, null or not), so its fields are all required.
   */
  static final Set<String> REQUEST_SCHEMAS =
      Set.of("BulkRequest", "PauseRequest", "SettingsOverride");

  @Override
  public void filterOpenAPI(OpenAPI openAPI) {
    if (openAPI.getComponents() == null) {
      openAPI.setComponents(OASFactory.createComponents());
    }
    if (openAPI.getComponents().getSchemas() != null) {
      openAPI
          .getComponents()
          .getSchemas()
          .forEach(
              (name, schema) -> {
                if (schema.getProperties() == null) {
                  return;
                }
                if (REQUEST_SCHEMAS.contains(name)) {
                  allowNulls(schema);
                  return;
                }
                allowNulls(schema);
                // A problem leaves detail out when it has none (Problem is NON_NULL).
                schema.setRequired(
                    schema.getProperties().keySet().stream()
                        .filter(field -> !("Problem".equals(name) && "detail".equals(field)))
                        .toList());
              });
    }
    HEADERS.forEach(
        (name, about) ->
            openAPI
                .getComponents()
                .addHeader(
                    name,
                    OASFactory.createHeader()
                        .description(about[0])
                        .schema(
                            OASFactory.createSchema()
                                .addType(Schema.SchemaType.valueOf(about[1].toUpperCase())))));
    ANSWERS.forEach((name, answer) -> openAPI.getComponents().addResponse(name, response(answer)));
    for (String waiting : List.of(DATABASE_UNAVAILABLE, QUOTA_EXCEEDED, "tooManyStreams")) {
      openAPI
          .getComponents()
          .getResponses()
          .get(waiting)
          .addHeader("Retry-After", header("Retry-After"));
    }
    openAPI
        .getComponents()
        .getResponses()
        .get("rangeNotSatisfiable")
        .addHeader("Content-Range", header("Content-Range"));
    openAPI
        .getComponents()
        .getResponses()
        .get("unauthenticated")
        .addHeader("WWW-Authenticate", header("WWW-Authenticate"));
  }

  /**
   * Makes a nullable field's schema say so the one way validators and generators read alike: a
   * nullable object is {@code anyOf: [{$ref}, {type: null}]} with no {@code type} of its own (the
   * scanner adds {@code type: object} beside it when the field has a description, which refuses the
   * null), and a nullable enum lists {@code null} among its values (else the enum refuses it).
   */
  static void allowNulls(Schema schema) {
    if (schema == null) {
      return;
    }
    if (schema.getAnyOf() != null
        && schema.getAnyOf().stream().anyMatch(ProblemAnswersFilter::isNullType)) {
      schema.setType(null);
    }
    if (schema.getType() != null
        && schema.getType().contains(Schema.SchemaType.NULL)
        && schema.getEnumeration() != null
        && !schema.getEnumeration().contains(null)) {
      List<Object> values = new java.util.ArrayList<>(schema.getEnumeration());
      values.add(null);
      schema.setEnumeration(values);
    }
    if (schema.getProperties() != null) {
      schema.getProperties().values().forEach(ProblemAnswersFilter::allowNulls);
    }
    allowNulls(schema.getItems());
  }

  private static boolean isNullType(Schema schema) {
    return schema.getType() != null && schema.getType().equals(List.of(Schema.SchemaType.NULL));
  }

  /** A reference to one of {@link #HEADERS}. */
  static Header header(String name) {
    return OASFactory.createHeader().ref(name);
  }

  /**
   * Adds the answers any route may give: 503 (the database), 406 (an Accept header it cannot meet),
   * 400 where it takes a parameter or a body, 408 and 413 where it takes a body, and on a route
   * that takes a token 401 (none, or a bad one) and 403 (a token without a subject, or without the
   * admin role).
   */
  @Override
  public Operation filterOperation(Operation operation) {
    if (operation.getResponses() == null) {
      return operation;
    }
    addShared(operation, "503", DATABASE_UNAVAILABLE);
    addShared(operation, "406", NOT_ACCEPTABLE);
    if ((operation.getParameters() != null && !operation.getParameters().isEmpty())
        || operation.getRequestBody() != null) {
      addShared(operation, "400", "malformed");
    }
    if (operation.getRequestBody() != null) {
      // RequestLimits holds every body, whatever the route.
      addShared(operation, "408", BODY_TIMEOUT);
      addShared(operation, "413", "tooLarge");
    }
    if (operation.getSecurity() != null && !operation.getSecurity().isEmpty()) {
      addShared(operation, "401", "unauthenticated");
      addShared(operation, "403", "forbidden");
      if (DOWNLOAD.equals(operation.getOperationId())) {
        // A signed download_url is the other way in: no token at all (an empty requirement).
        operation.addSecurityRequirement(OASFactory.createSecurityRequirement());
      }
    }
    return operation;
  }

  /** Adds the shared answer {@code name} as {@code code}, unless the route declares its own. */
  static void addShared(Operation operation, String code, String name) {
    if (operation.getResponses().getAPIResponse(code) == null) {
      operation.getResponses().addAPIResponse(code, OASFactory.createAPIResponse().ref(name));
    }
  }

  private static APIResponse response(Answer answer) {
    Content body = problemContent();
    if (answer.example() != null) {
      body.getMediaType(Problem.MEDIA_TYPE)
          .addExample(
              answer.exampleName(),
              OASFactory.createExample().value(Examples.parsed(answer.example())));
    }
    return OASFactory.createAPIResponse().description(answer.description()).content(body);
  }

  /** A body of one media type whose schema is {@code schema}. */
  static Content content(String mediaType, Schema schema) {
    return OASFactory.createContent()
        .addMediaType(mediaType, OASFactory.createMediaType().schema(schema));
  }

  /** An application/problem+json body of the {@code Problem} schema. */
  static Content problemContent() {
    return content(Problem.MEDIA_TYPE, OASFactory.createSchema().ref("Problem"));
  }
}
