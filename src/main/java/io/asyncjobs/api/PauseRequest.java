package io.asyncjobs.api;

import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * The optional body of a pause.
 *
 * @param reason why the service is paused, shown on its card; 1 to 500 characters, or left out
 */
@Schema(
    name = "PauseRequest",
    nullable = true,
    description = "Why the service is paused; the body may be left out, or be the JSON null")
@RegisterForReflection(registerFullHierarchy = true)
public record PauseRequest(
    @Schema(
            nullable = true,
            minLength = 1,
            maxLength = 500,
            example = "storage maintenance until 10:00")
        String reason) {}
