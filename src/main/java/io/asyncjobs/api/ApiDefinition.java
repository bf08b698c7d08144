package io.asyncjobs.api;

import io.asyncjobs.problem.Problem;
import jakarta.ws.rs.core.Application;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Components;
import org.eclipse.microprofile.openapi.annotations.OpenAPIDefinition;
import org.eclipse.microprofile.openapi.annotations.enums.SecuritySchemeType;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.info.Info;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityScheme;

/**
 * The API's description at {@code /q/openapi}: its bearer scheme and the answer to an enqueue. The
 * shared error answers are added by {@link ProblemAnswersFilter}.
 */
@OpenAPIDefinition(
    info =
        @Info(
            title = "async-jobs",
            version = "0.2.0",
            description =
                "Enqueue slow work, follow it by status, events or JobPoller.js, download the"
                    + " result. Every /api route takes a bearer JWT; errors are"
                    + " application/problem+json."),
    components =
        @Components(
            schemas = @Schema(name = "Problem", implementation = Problem.class),
            responses =
                @APIResponse(
                    name = "enqueued",
                    description = "Enqueued; follow Location or status_url",
                    headers = {
                      @Header(name = "Location", ref = "Location"),
                      @Header(name = "Idempotent-Replayed", ref = "Idempotent-Replayed")
                    },
                    content =
                        @Content(
                            mediaType = MediaType.APPLICATION_JSON,
                            schema = @Schema(implementation = EnqueuedView.class),
                            examples =
                                @ExampleObject(name = "enqueued", value = Examples.ENQUEUED)))))
@SecurityScheme(
    securitySchemeName = "bearer",
    type = SecuritySchemeType.HTTP,
    scheme = "bearer",
    bearerFormat = "JWT")
public class ApiDefinition extends Application {}
