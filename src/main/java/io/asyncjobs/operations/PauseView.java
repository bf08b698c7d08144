package io.asyncjobs.operations;

import io.asyncjobs.settings.PauseStore;
import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * Whether a service is paused, as the admin API, the admin page and the CLI show it.
 *
 * @param service the service's name (its kind)
 * @param paused whether its owner claims nothing now
 * @param pausedAt when it was paused, null while it runs
 * @param pausedBy who paused it, null while it runs (or when unknown)
 * @param reason why, as the admin wrote it, or null
 */
@Schema(name = "Pause", description = "Whether a service is paused, since when, by whom and why")
@RegisterForReflection(registerFullHierarchy = true)
public record PauseView(
    @Schema(example = "zip") String service,
    @Schema(description = "True while the owner claims no job of the service", example = "true")
        boolean paused,
    @Schema(nullable = true, example = "2026-05-01T08:00:00Z") Instant pausedAt,
    @Schema(nullable = true, example = "user:root") String pausedBy,
    @Schema(nullable = true, example = "storage maintenance until 10:00") String reason) {

  /** The view of {@code service} with {@code pause}, or a running one when that is null. */
  static PauseView of(String service, PauseStore.Pause pause) {
    return pause == null
        ? new PauseView(service, false, null, null, null)
        : new PauseView(service, true, pause.pausedAt(), pause.pausedBy(), pause.reason());
  }
}
