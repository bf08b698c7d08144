package io.asyncjobs.api;

import io.asyncjobs.auth.Caller;
import io.asyncjobs.operations.JobActions;
import io.asyncjobs.operations.JobListView;
import io.asyncjobs.operations.JobLists;
import io.asyncjobs.operations.JobView;
import io.asyncjobs.operations.Requests;
import io.asyncjobs.operations.ServiceCard;
import io.asyncjobs.operations.ServiceCards;
import io.asyncjobs.operations.SettingsView;
import io.asyncjobs.operations.SettingsViews;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.Owner;
import io.asyncjobs.settings.SettingsOverride;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
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

  @GET
  @Path("services")
  @Operation(
      summary = "Every service's card",
      description =
          """
          Per service: jobs by status, jobs finished in the last hour and in each of its \
          minutes, p50/p95 processing time of the last hour's done jobs, bytes and items \
          of the jobs kept, how long the oldest pending job has waited, and the settings.""")
  @APIResponse(responseCode = "200", description = "One card per registered service")
  @APIResponse(responseCode = "401", ref = "unauthenticated")
  @APIResponse(responseCode = "403", ref = "forbidden")
  public List<ServiceCard> services() {
    return cards.all();
  }

  @GET
  @Path("services/{name}/settings")
  @Operation(summary = "One service's settings: configured, overridden, effective")
  @APIResponse(
      responseCode = "200",
      description = "The settings",
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              examples = @ExampleObject(name = "zip", value = Examples.SETTINGS)))
  @APIResponse(responseCode = "404", ref = "notFound")
  public SettingsView settings(@PathParam("name") String name) {
    return settings.of(name);
  }

  @PUT
  @Path("services/{name}/settings")
  @Consumes(MediaType.APPLICATION_JSON)
  @Operation(
      summary = "Replace a service's overrides",
      description =
          """
          Every field is optional; a missing or null one goes back to the configured \
          value. Every replica sees the change; the owner applies it on its next tick.""")
  @RequestBody(
      content =
          @Content(
              mediaType = MediaType.APPLICATION_JSON,
              examples =
                  @ExampleObject(
                      name = "keep zips two days, three at once",
                      value = "{\"retention_seconds\": 172800, \"max_concurrent\": 3}")))
  @APIResponse(responseCode = "200", description = "The settings now")
  @APIResponse(responseCode = "400", ref = "malformed")
  @APIResponse(responseCode = "404", ref = "notFound")
  public SettingsView updateSettings(@PathParam("name") String name, SettingsOverride override) {
    return settings.replace(name, override);
  }

  @GET
  @Path("jobs")
  @Operation(summary = "Every owner's jobs, newest first, filtered by kind, status and owner")
  @APIResponse(responseCode = "200", description = "One page of jobs")
  @APIResponse(responseCode = "400", ref = "malformed")
  public JobListView allJobs(
      @QueryParam("kind") String kind,
      @QueryParam("status") String status,
      @QueryParam("owner_kind") String ownerKind,
      @QueryParam("owner_id") String ownerId,
      @QueryParam("before") String before,
      @QueryParam("limit") String limit) {
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
  @Path("jobs/{uid}/retry")
  @Operation(
      summary = "Run a failed job again",
      description = "The job becomes pending with its error and result cleared.")
  @APIResponse(responseCode = "200", description = "The job, pending again")
  @APIResponse(responseCode = "404", ref = "notFound")
  @APIResponse(responseCode = "409", ref = "conflict")
  public JobView retry(@PathParam("uid") String uid) {
    return jobs.view(actions.retry(Requests.uid(uid, "uid")));
  }
}
