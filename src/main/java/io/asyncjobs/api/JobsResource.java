package io.asyncjobs.api;

import io.asyncjobs.auth.Caller;
import io.asyncjobs.auth.DownloadLinks;
import io.asyncjobs.operations.JobActions;
import io.asyncjobs.operations.JobListView;
import io.asyncjobs.operations.JobLists;
import io.asyncjobs.operations.JobView;
import io.asyncjobs.operations.Requests;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.CancelOutcome;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobReads;
import io.asyncjobs.queue.Owner;
import io.quarkus.security.Authenticated;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.mutiny.Multi;
import jakarta.annotation.security.PermitAll;
import jakarta.inject.Inject;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.sse.OutboundSseEvent;
import jakarta.ws.rs.sse.Sse;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.ParameterIn;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.extensions.Extension;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The caller's jobs: status, list, cancel and download. Any replica answers these; they read the
 * shared database and data directory and never wait for the owner.
 */
@Path("/api/jobs")
@Authenticated
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "jobs", description = "Status, listing, cancellation and downloads of jobs")
@SecurityRequirement(name = "bearer")
public class JobsResource {

  @Inject JobReads reads;
  @Inject JobActions actions;
  @Inject Caller caller;
  @Inject DownloadLinks links;
  @Inject JobLists lists;
  @Inject Downloads downloads;
  @Inject JobEvents events;

  @GET
  @Path("{uid}")
  @Operation(
      operationId = "getJob",
      summary = "Status of a job",
      description =
          """
          Status, progress, timestamps and error. A done job with a file carries a signed \
          download_url. Another owner's job answers 404, like a missing one.""")
  @APIResponse(
      responseCode = "200",
      description = "The job",
      content =
          @Content(
              schema = @Schema(implementation = JobView.class),
              examples = @ExampleObject(name = "done", value = Examples.JOB_DONE)))
  @APIResponse(responseCode = "400", ref = "malformed")
  @APIResponse(responseCode = "401", ref = "unauthenticated")
  @APIResponse(responseCode = "404", ref = "notFound")
  public JobView get(
      @Parameter(
              description = "the job's uid",
              schema = @Schema(type = SchemaType.STRING, format = "uuid"))
          @PathParam("uid")
          String uid) {
    return JobView.of(Requests.visibleJob(reads, caller, Requests.uid(uid, "uid")), links);
  }

  @GET
  @Operation(
      operationId = "listJobs",
      summary = "List the caller's jobs",
      description =
          """
          Newest first. Filter by kind and status; follow next_url for the following page. \
          An admin sees every owner's jobs here too.""")
  @APIResponse(
      responseCode = "200",
      description = "One page of jobs",
      content =
          @Content(
              schema = @Schema(implementation = JobListView.class),
              examples = @ExampleObject(name = "page", value = Examples.JOB_PAGE)))
  @APIResponse(responseCode = "400", ref = "malformed")
  @APIResponse(responseCode = "401", ref = "unauthenticated")
  public JobListView list(
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
    Owner owner = caller.isAdmin() ? null : caller.owner();
    return lists.page("/api/jobs", kind, status, owner, before, limit);
  }

  @DELETE
  @Path("{uid}")
  @Operation(
      operationId = "cancelJob",
      summary = "Cancel a job",
      description =
          """
          A pending job fails at once and never runs (200). A running job is asked to stop \
          (202): its status shows cancel_requested until the owner interrupts and fails \
          it. A finished job answers 409.""")
  @APIResponse(
      responseCode = "200",
      description = "Cancelled: the job is failed now",
      content = @Content(schema = @Schema(implementation = JobView.class)))
  @APIResponse(
      responseCode = "202",
      description = "Running: the owner stops it on its next tick",
      content = @Content(schema = @Schema(implementation = JobView.class)))
  @APIResponse(responseCode = "404", ref = "notFound")
  @APIResponse(responseCode = "409", ref = "conflict")
  public Response cancel(
      @Parameter(
              description = "the job's uid",
              schema = @Schema(type = SchemaType.STRING, format = "uuid"))
          @PathParam("uid")
          String uid) {
    UUID id = Requests.uid(uid, "uid");
    Requests.visibleJob(reads, caller, id);
    return actions.cancel(id) == CancelOutcome.STOP_REQUESTED
        ? Response.accepted(view(id)).build()
        : Response.ok(view(id)).build();
  }

  private JobView view(UUID uid) {
    return JobView.of(reads.getJob(uid).orElseThrow(() -> Requests.noSuchJob(uid)), links);
  }

  @GET
  @Path("{uid}/download")
  @PermitAll
  @Produces(MediaType.WILDCARD)
  @Operation(
      operationId = "downloadJobFile",
      summary = "Download a job's file",
      description =
          """
          The artifact of a done job. Authorized either by a bearer token (the job's owner \
          or an admin) or by the signature of a download_url, which needs no token until \
          it expires. Supports one Range (206, or 416 when unsatisfiable) and ETag with \
          If-None-Match (304). Each download keeps the job one more retention period.""")
  @APIResponse(
      responseCode = "200",
      description = "The whole file",
      headers = {
        @Header(ref = "ETag"),
        @Header(ref = "Accept-Ranges"),
        @Header(ref = "Cache-Control"),
        @Header(ref = "Content-Disposition")
      },
      content =
          @Content(
              mediaType = MediaType.WILDCARD,
              schema = @Schema(type = SchemaType.STRING, format = "binary")))
  @APIResponse(
      responseCode = "206",
      description = "The requested range",
      headers = {
        @Header(ref = "Content-Range"),
        @Header(ref = "ETag"),
        @Header(ref = "Accept-Ranges"),
        @Header(ref = "Cache-Control"),
        @Header(ref = "Content-Disposition")
      },
      content =
          @Content(
              mediaType = MediaType.WILDCARD,
              schema = @Schema(type = SchemaType.STRING, format = "binary")))
  @APIResponse(
      responseCode = "304",
      description = "The caller's copy is current (If-None-Match named its ETag)",
      headers = {@Header(ref = "ETag"), @Header(ref = "Cache-Control")})
  @APIResponse(responseCode = "401", ref = "unauthenticated")
  @APIResponse(responseCode = "403", ref = "forbidden")
  @APIResponse(responseCode = "404", ref = "notFound")
  @APIResponse(responseCode = "409", ref = "conflict")
  @APIResponse(responseCode = "416", ref = "rangeNotSatisfiable")
  public Response download(
      @Parameter(
              description = "the job's uid",
              schema = @Schema(type = SchemaType.STRING, format = "uuid"))
          @PathParam("uid")
          String uid,
      @Parameter(
              description = "expiry of a signed link, epoch seconds",
              schema = @Schema(type = SchemaType.INTEGER, format = "int64"))
          @QueryParam("expires")
          String expires,
      @Parameter(description = "signature of a signed link") @QueryParam("sig") String sig,
      @Parameter(
              in = ParameterIn.HEADER,
              name = "Range",
              description = "one byte range, e.g. bytes=0-1023",
              example = "bytes=0-1023")
          @jakarta.ws.rs.HeaderParam("Range")
          String range,
      @Parameter(
              in = ParameterIn.HEADER,
              name = "If-None-Match",
              description = "the ETag of the caller's copy: 304 while it is current")
          @jakarta.ws.rs.HeaderParam(HttpHeaders.IF_NONE_MATCH)
          String ifNoneMatch,
      @Parameter(
              in = ParameterIn.HEADER,
              name = "If-Range",
              description = "the Range applies only while the file still has this ETag")
          @jakarta.ws.rs.HeaderParam("If-Range")
          String ifRange) {
    UUID id = Requests.uid(uid, "uid");
    Job job;
    if (sig != null || expires != null) {
      long expiry;
      try {
        expiry = Long.parseLong(expires == null ? "" : expires);
      } catch (NumberFormatException e) {
        throw ProblemException.forbidden("this download link is invalid");
      }
      if (!links.verify(id, expiry, sig)) {
        throw ProblemException.forbidden("this download link is invalid or has expired");
      }
      job = reads.getJob(id).orElseThrow(() -> Requests.noSuchJob(id));
    } else {
      if (!caller.authenticated()) {
        throw ProblemException.unauthenticated(
            "a download needs a bearer token or a signed download_url");
      }
      job = Requests.visibleJob(reads, caller, id);
    }
    return downloads.send(job, range, ifNoneMatch, ifRange);
  }

  @GET
  @Path("{uid}/events")
  @Produces(MediaType.SERVER_SENT_EVENTS)
  @Blocking
  @Operation(
      operationId = "streamJobEvents",
      summary = "Stream a job's status and progress",
      description =
          """
          Server-sent events: a `job` event carrying the status view at once and whenever \
          the status or progress changes, comment lines while idle, and the end of the \
          stream after the event that shows the job done or failed.""")
  @APIResponse(
      responseCode = "200",
      description = "An event stream",
      content =
          @Content(
              mediaType = MediaType.SERVER_SENT_EVENTS,
              // Bytes to a generated client (which cannot parse a stream as JSON); each event's
              // data line is a Job, which OpenAPI 3.2 would say with itemSchema.
              schema =
                  @Schema(
                      type = SchemaType.STRING,
                      format = "binary",
                      description =
                          "Events named job, each data line a Job (the Job schema) as JSON",
                      extensions =
                          @Extension(
                              name = "x-item-schema",
                              value = "{\"$ref\": \"#/components/schemas/Job\"}",
                              parseValue = true)),
              examples = @ExampleObject(name = "progress", value = Examples.EVENTS)))
  @APIResponse(responseCode = "401", ref = "unauthenticated")
  @APIResponse(responseCode = "404", ref = "notFound")
  @APIResponse(responseCode = "429", ref = "tooManyStreams")
  public Multi<OutboundSseEvent> events(
      @Parameter(
              description = "the job's uid",
              schema = @Schema(type = SchemaType.STRING, format = "uuid"))
          @PathParam("uid")
          String uid,
      @Context Sse sse) {
    UUID id = Requests.uid(uid, "uid");
    Requests.visibleJob(reads, caller, id);
    return events.stream(id, caller.owner(), sse);
  }
}
