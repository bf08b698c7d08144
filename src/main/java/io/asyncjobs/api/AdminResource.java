package io.asyncjobs.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.auth.Caller;
import io.asyncjobs.operations.BulkActions;
import io.asyncjobs.operations.BulkRequest;
import io.asyncjobs.operations.BulkResult;
import io.asyncjobs.operations.JobActions;
import io.asyncjobs.operations.JobListView;
import io.asyncjobs.operations.JobLists;
import io.asyncjobs.operations.JobView;
import io.asyncjobs.operations.PauseView;
import io.asyncjobs.operations.Requests;
import io.asyncjobs.operations.ServiceCard;
import io.asyncjobs.operations.ServiceCards;
import io.asyncjobs.operations.ServicePauses;
import io.asyncjobs.operations.SettingsView;
import io.asyncjobs.operations.SettingsViews;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.Owner;
import io.asyncjobs.settings.SettingsOverride;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** Routes for the {@code admin} role: service settings, every owner's jobs, retries. */
@Path("/api/admin")
@RolesAllowed(Caller.ADMIN)
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "admin", description = "Settings and job management; needs the admin role")
@SecurityRequirement(name = "bearer")
public class AdminResource {

  @Inject SettingsViews settings;
  @Inject JobActions actions;
  @Inject JobLists jobs;
  @Inject ServiceCards cards;
  @Inject ServicePauses pauses;
  @Inject BulkActions bulk;
  @Inject Caller caller;
  @Inject ObjectMapper json;

  @GET
  @Path("services")
  @Operation(
      operationId = "listServices",
      summary = "Every service's card",
      description =
          """
          Per service: jobs by status, jobs finished in the last hour and in each of its \
          minutes, p50/p95 processing time of the last hour's done jobs, bytes and items \
          of the jobs kept, how long the oldest pending job has waited, and the settings.""")
  @APIResponse(
      responseCode = "200",
      description = "One card per registered service",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(type = SchemaType.ARRAY, implementation = ServiceCard.class)))
  @APIResponse(responseCode = "401", ref = "unauthenticated")
  @APIResponse(responseCode = "403", ref = "forbidden")
  public List<ServiceCard> services() {
    return cards.all();
  }

  @GET
  @Path("services/{name}/settings")
  @Operation(
      operationId = "getServiceSettings",
      summary = "One service's settings: configured, overridden, effective")
  @APIResponse(
      responseCode = "200",
      description = "The settings",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = SettingsView.class),
              examples = @ExampleObject(name = "zip", value = Examples.SETTINGS)))
  @APIResponse(responseCode = "404", ref = "notFound")
  public SettingsView settings(
      @Parameter(description = "the service (the kind)", example = "zip") @PathParam("name")
          String name) {
    return settings.of(name);
  }

  @PUT
  @Path("services/{name}/settings")
  @Consumes(MediaType.APPLICATION_JSON)
  @Operation(
      operationId = "updateServiceSettings",
      summary = "Replace a service's overrides",
      description =
          """
          Every field is optional; a missing or null one goes back to the configured \
          value. Every replica sees the change; the owner applies it on its next tick.""")
  @RequestBody(
      required = true,
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = SettingsOverride.class),
              examples =
                  @ExampleObject(
                      name = "keep zips two days, three at once",
                      value = "{\"retention_seconds\": 172800, \"max_concurrent\": 3}")))
  @APIResponse(
      responseCode = "200",
      description = "The settings now",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = SettingsView.class)))
  @APIResponse(responseCode = "415", ref = "unsupportedMediaType")
  @APIResponse(responseCode = "400", ref = "malformed")
  @APIResponse(responseCode = "404", ref = "notFound")
  public SettingsView updateSettings(
      @Parameter(description = "the service (the kind)", example = "zip") @PathParam("name")
          String name,
      SettingsOverride override) {
    return settings.replace(name, override);
  }

  @POST
  @Path("services/{name}/pause")
  @Operation(
      operationId = "pauseService",
      summary = "Pause a service",
      description =
          """
          Its owner claims no more jobs until it is resumed: running jobs finish, delayed \
          jobs fall due, expired jobs are swept and enqueues are accepted as before. The \
          pause holds across restarts and handovers, and resetting the service's overrides \
          keeps it. Pausing a paused service keeps the first pause. The body is optional.""")
  @RequestBody(
      required = false,
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = PauseRequest.class),
              examples =
                  @ExampleObject(
                      name = "with a reason",
                      value = "{\"reason\": \"storage maintenance until 10:00\"}")))
  @APIResponse(
      responseCode = "200",
      description = "The pause in force",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = PauseView.class),
              examples = @ExampleObject(name = "paused", value = Examples.PAUSED)))
  @APIResponse(responseCode = "400", ref = "malformed")
  @APIResponse(responseCode = "404", ref = "notFound")
  @APIResponse(responseCode = "415", ref = "unsupportedMediaType")
  // Any type reaches the route, so that a pause without a body needs none; a body must be JSON.
  @Consumes(MediaType.WILDCARD)
  public PauseView pause(
      @Parameter(description = "the service (the kind)", example = "zip") @PathParam("name")
          String name,
      @HeaderParam(HttpHeaders.CONTENT_TYPE) String type,
      @OptionalBody String body)
      throws JsonProcessingException {
    String reason = null;
    if (body != null && !body.isBlank()) {
      if (type == null
          || !type.trim()
              .toLowerCase(java.util.Locale.ROOT)
              .startsWith(MediaType.APPLICATION_JSON)) {
        throw new ProblemException(
            Problem.of(
                415,
                "unsupported-media-type",
                "Unsupported media type",
                "send the body as application/json"));
      }
      // The JSON body null is what a generated client sends when the reason is left out.
      PauseRequest request = json.readValue(body, PauseRequest.class);
      reason = request == null ? null : request.reason();
    }
    Owner admin = caller.owner();
    return pauses.pause(name, admin.kind() + ":" + admin.id(), reason);
  }

  @POST
  @Path("services/{name}/resume")
  @Operation(
      operationId = "resumeService",
      summary = "Resume a paused service",
      description =
          """
          Its owner claims again at once. Resuming a service that is not paused changes \
          nothing.""")
  @APIResponse(
      responseCode = "200",
      description = "The service, running",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = PauseView.class),
              examples = @ExampleObject(name = "running", value = Examples.RESUMED)))
  @APIResponse(responseCode = "404", ref = "notFound")
  public PauseView resume(
      @Parameter(description = "the service (the kind)", example = "zip") @PathParam("name")
          String name) {
    return pauses.resume(name);
  }

  @GET
  @Path("jobs")
  @Operation(
      operationId = "listAllJobs",
      summary = "Every owner's jobs, newest first, filtered by kind, status and owner")
  @APIResponse(
      responseCode = "200",
      description = "One page of jobs",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = JobListView.class)))
  @APIResponse(responseCode = "400", ref = "malformed")
  public JobListView allJobs(
      @Parameter(description = "only jobs of this kind", example = "zip") @QueryParam("kind")
          String kind,
      @Parameter(
              description = "only jobs in this status",
              schema =
                  @Schema(
                      type = SchemaType.STRING,
                      enumeration = {"pending", "running", "done", "failed"}))
          @QueryParam("status")
          String status,
      @Parameter(description = "only this owner's jobs: its kind (with owner_id)", example = "user")
          @QueryParam("owner_kind")
          String ownerKind,
      @Parameter(
              description = "only this owner's jobs: its id (with owner_kind)",
              example = "alice")
          @QueryParam("owner_id")
          String ownerId,
      @Parameter(
              description = "the next value of the previous page",
              schema = @Schema(type = SchemaType.STRING, format = "uuid"))
          @QueryParam("before")
          String before,
      @Parameter(
              description = "page size, 1 to 500 (default 50)",
              schema =
                  @Schema(
                      type = SchemaType.INTEGER,
                      minimum = "1",
                      maximum = "500",
                      defaultValue = "50"))
          @QueryParam("limit")
          String limit) {
    Owner owner = null;
    if (ownerKind != null || ownerId != null) {
      if (ownerKind == null || ownerId == null || ownerKind.isEmpty() || ownerId.isEmpty()) {
        throw ProblemException.badRequest("owner_kind and owner_id filter together: give both");
      }
      owner = new Owner(ownerKind, ownerId);
    }
    return jobs.page("/api/admin/jobs", kind, status, owner, before, limit);
  }

  @POST
  @Path("jobs/cancel")
  @Consumes(MediaType.APPLICATION_JSON)
  @Operation(
      operationId = "cancelJobs",
      summary = "Cancel every job a filter matches",
      description =
          """
          As the single cancel does, job by job: a pending job fails at once ("cancelled on \
          request"), a running one is asked to stop and its owner interrupts it. Give at \
          least one filter, or "all": true; status may be pending or running (default both). \
          The jobs are walked in uid order in batches of 1,000, each its own transaction. \
          With "dry_run": true nothing changes and the answer counts the matches.""")
  @RequestBody(
      required = true,
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = BulkRequest.class),
              examples = {
                @ExampleObject(name = "one owner's waiting zips", value = Examples.BULK_CANCEL),
                @ExampleObject(name = "count first", value = Examples.BULK_DRY_RUN)
              }))
  @APIResponse(
      responseCode = "200",
      description = "How many jobs matched and were cancelled",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = BulkResult.class),
              examples = @ExampleObject(name = "done", value = Examples.BULK_RESULT)))
  @APIResponse(responseCode = "400", ref = "malformed")
  @APIResponse(responseCode = "401", ref = "unauthenticated")
  @APIResponse(responseCode = "403", ref = "forbidden")
  public BulkResult cancelMany(BulkRequest request) {
    return bulk.cancel(request);
  }

  @POST
  @Path("jobs/retry")
  @Consumes(MediaType.APPLICATION_JSON)
  @Operation(
      operationId = "retryJobs",
      summary = "Retry every failed job a filter matches",
      description =
          """
          As the single retry does, job by job: a failed job becomes pending again with the \
          same uid, its error and result cleared, and its owner is woken. Give at least one \
          filter, or "all": true; status may only be failed (the default). Batches of 1,000 \
          by uid, each its own transaction; "dry_run": true only counts.""")
  @RequestBody(
      required = true,
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = BulkRequest.class),
              examples =
                  @ExampleObject(name = "yesterday's failed zips", value = Examples.BULK_RETRY)))
  @APIResponse(
      responseCode = "200",
      description = "How many jobs matched and were retried",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = BulkResult.class),
              examples = @ExampleObject(name = "done", value = Examples.BULK_RESULT)))
  @APIResponse(responseCode = "400", ref = "malformed")
  @APIResponse(responseCode = "401", ref = "unauthenticated")
  @APIResponse(responseCode = "403", ref = "forbidden")
  public BulkResult retryMany(BulkRequest request) {
    return bulk.retry(request);
  }

  @POST
  @Path("jobs/{uid}/retry")
  @Operation(
      operationId = "retryJob",
      summary = "Run a failed job again",
      description = "The job becomes pending with its error and result cleared.")
  @APIResponse(
      responseCode = "200",
      description = "The job, pending again",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              schema = @Schema(implementation = JobView.class)))
  @APIResponse(responseCode = "404", ref = "notFound")
  @APIResponse(responseCode = "409", ref = "conflict")
  public JobView retry(
      @Parameter(
              description = "the job's uid",
              schema = @Schema(type = SchemaType.STRING, format = "uuid"))
          @PathParam("uid")
          String uid) {
    return jobs.view(actions.retry(Requests.uid(uid, "uid")));
  }
}
