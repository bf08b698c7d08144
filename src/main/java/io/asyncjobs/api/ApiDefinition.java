package io.asyncjobs.api;

import io.asyncjobs.problem.Problem;
import jakarta.ws.rs.core.Application;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Components;
import org.eclipse.microprofile.openapi.annotations.OpenAPIDefinition;
import org.eclipse.microprofile.openapi.annotations.enums.SecuritySchemeType;
import org.eclipse.microprofile.openapi.annotations.info.Info;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityScheme;

/** The API's description at {@code /q/openapi}: its bearer scheme and the shared error answers. */
@OpenAPIDefinition(
    info =
        @Info(
            title = "async-jobs",
            version = "0.1.0",
            description =
                "Enqueue slow work, follow it by status, events or JobPoller.js, download the"
                    + " result. Every /api route takes a bearer JWT; errors are"
                    + " application/problem+json."),
    components =
        @Components(
            responses = {
              @APIResponse(
                  name = "enqueued",
                  description = "Enqueued; follow Location or status_url",
                  content =
                      @Content(
                          mediaType = MediaType.APPLICATION_JSON,
                          schema = @Schema(implementation = EnqueuedView.class),
                          examples = @ExampleObject(name = "enqueued", value = Examples.ENQUEUED))),
              @APIResponse(
                  name = "malformed",
                  description = "A malformed uid, filter, header or body",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class),
                          examples =
                              @ExampleObject(
                                  name = "bad uid",
                                  value =
                                      "{\"type\": \"urn:async-jobs:problem:bad-request\", \"title\": \"Bad request\", \"status\": 400, \"detail\": \"uid must be a uuid such as 0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f\"}"))),
              @APIResponse(
                  name = "unauthenticated",
                  description = "No bearer token, or an invalid or expired one",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class))),
              @APIResponse(
                  name = "forbidden",
                  description = "A role the token lacks, or an invalid or expired download link",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class))),
              @APIResponse(
                  name = "notFound",
                  description = "No such job, or another owner's (the two look the same)",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class),
                          examples = @ExampleObject(name = "no job", value = Examples.PROBLEM))),
              @APIResponse(
                  name = "conflict",
                  description = "The job is not in a state that allows this",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class))),
              @APIResponse(
                  name = "tooLarge",
                  description = "The body is larger than jobs.api.max-body-bytes",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class))),
              @APIResponse(
                  name = "unsupportedMediaType",
                  description = "The body is not application/json",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class))),
              @APIResponse(
                  name = "idempotencyKeyReused",
                  description = "The Idempotency-Key was used before for a different request",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class)))
            }))
@SecurityScheme(
    securitySchemeName = "bearer",
    type = SecuritySchemeType.HTTP,
    scheme = "bearer",
    bearerFormat = "JWT")
public class ApiDefinition extends Application {}
