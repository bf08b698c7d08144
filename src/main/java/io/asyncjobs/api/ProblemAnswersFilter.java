package io.asyncjobs.api;

import io.asyncjobs.problem.Problem;
import io.quarkus.smallrye.openapi.OpenApiFilter;
import java.util.LinkedHashMap;
import java.util.Map;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.media.MediaType;
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

  private static final Map<String, Answer> ANSWERS = new LinkedHashMap<>();

  static {
    ANSWERS.put(
        "malformed",
        new Answer("A malformed uid, filter, header or body", "bad uid", Examples.BAD_UID));
    ANSWERS.put(
        "unauthenticated", new Answer("No bearer token, or an invalid or expired one", null, null));
    ANSWERS.put(
        "forbidden",
        new Answer("A role the token lacks, or an invalid or expired download link", null, null));
    ANSWERS.put(
        "notFound",
        new Answer(
            "No such job, or another owner's (the two look the same)", "no job", Examples.PROBLEM));
    ANSWERS.put("conflict", new Answer("The job is not in a state that allows this", null, null));
    ANSWERS.put(
        "tooLarge", new Answer("The body is larger than jobs.api.max-body-bytes", null, null));
    ANSWERS.put("unsupportedMediaType", new Answer("The body is not application/json", null, null));
    ANSWERS.put(
        "idempotencyKeyReused",
        new Answer("The Idempotency-Key was used before for a different request", null, null));
    ANSWERS.put(
        DATABASE_UNAVAILABLE,
        new Answer(
            "The database cannot be reached for now (a restart or a failover); try again after"
                + " Retry-After",
            null,
            null));
  }

  @Override
  public void filterOpenAPI(OpenAPI openAPI) {
    if (openAPI.getComponents() == null) {
      openAPI.setComponents(OASFactory.createComponents());
    }
    ANSWERS.forEach((name, answer) -> openAPI.getComponents().addResponse(name, response(answer)));
    openAPI
        .getComponents()
        .getResponses()
        .get(DATABASE_UNAVAILABLE)
        .addHeader(
            "Retry-After",
            OASFactory.createHeader()
                .description("seconds to wait before trying again")
                .schema(OASFactory.createSchema().addType(Schema.SchemaType.INTEGER)));
  }

  @Override
  public Operation filterOperation(Operation operation) {
    if (operation.getResponses() != null
        && operation.getResponses().getAPIResponse("503") == null) {
      operation
          .getResponses()
          .addAPIResponse("503", OASFactory.createAPIResponse().ref(DATABASE_UNAVAILABLE));
    }
    return operation;
  }

  private static APIResponse response(Answer answer) {
    MediaType body = OASFactory.createMediaType().schema(OASFactory.createSchema().ref("Problem"));
    if (answer.example() != null) {
      body.addExample(
          answer.exampleName(),
          OASFactory.createExample().value(Examples.parsed(answer.example())));
    }
    return OASFactory.createAPIResponse()
        .description(answer.description())
        .content(OASFactory.createContent().addMediaType(Problem.MEDIA_TYPE, body));
  }
}
