package io.asyncjobs.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

/** Example bodies for the OpenAPI description. */
final class Examples {

  private Examples() {}

  private static final ObjectMapper JSON = new ObjectMapper();

  /** An example's JSON text as the value the OpenAPI model holds. */
  static Object parsed(String example) {
    try {
      return JSON.readValue(example, Object.class);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("an example is not JSON: " + example, e);
    }
  }

  static final String ENQUEUED =
      """
      {"uid": "0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f", "kind": "zip", "status": "pending",
       "status_url": "/api/jobs/0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f",
       "events_url": "/api/jobs/0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f/events"}
      """;

  static final String JOB_DONE =
      """
      {"uid": "0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f", "kind": "zip", "status": "done",
       "cancel_requested": false, "progress": {"fraction": 1.0, "items": 120,
       "updated_at": "2026-11-29T10:00:03Z"}, "error": null, "preferred_name": "photos.zip",
       "owner_kind": "user", "owner_id": "alice", "retry_count": 0,
       "created_at": "2026-11-29T10:00:00Z", "started_at": "2026-11-29T10:00:00.020Z",
       "completed_at": "2026-11-29T10:00:04Z", "updated_at": "2026-11-29T10:00:04Z",
       "expires_at": "2026-12-06T10:00:04Z", "last_accessed_at": null, "duration_ms": 3980,
       "bytes_in": 52428800, "bytes_out": 31457280, "item_count": 120, "result": {},
       "status_url": "/api/jobs/0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f",
       "events_url": "/api/jobs/0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f/events",
       "download_url": "/api/jobs/0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f/download?expires=1796032804&sig=k1q...",
       "download_expires_at": "2026-11-29T10:15:04Z"}
      """;

  static final String JOB_PAGE =
      """
      {"jobs": [{"uid": "0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f", "kind": "zip", "status": "running",
                 "progress": {"fraction": 0.4, "items": 48, "updated_at": "2026-11-29T10:00:02Z"}}],
       "next": "0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f",
       "next_url": "/api/jobs?before=0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f&limit=1"}
      """;

  static final String EVENTS =
      """
      event: job
      id: 1796032802000
      data: {"uid": "0190a5c8-...", "status": "running", "progress": {"fraction": 0.4, ...}, ...}

      :keep-alive

      event: job
      id: 1796032804000
      data: {"uid": "0190a5c8-...", "status": "done", "download_url": "/api/jobs/.../download?...", ...}
      """;

  static final String SETTINGS =
      """
      {"service": "zip",
       "configured": {"retention_seconds": 604800, "max_concurrent": 4, "job_timeout_seconds": 3600,
                      "max_retries": 3},
       "overrides": {"retention_seconds": 172800, "max_concurrent": null,
                     "job_timeout_seconds": null, "max_retries": null},
       "effective": {"retention_seconds": 172800, "max_concurrent": 4, "job_timeout_seconds": 3600,
                     "max_retries": 3}}
      """;

  static final String PAUSED =
      """
      {"service": "zip", "paused": true, "paused_at": "2026-05-01T08:00:00Z",
       "paused_by": "user:root", "reason": "storage maintenance until 10:00"}
      """;

  static final String RESUMED =
      """
      {"service": "zip", "paused": false, "paused_at": null, "paused_by": null, "reason": null}
      """;

  static final String BULK_CANCEL =
      """
      {"kind": "zip", "status": "pending", "owner_kind": "user", "owner_id": "alice"}
      """;

  static final String BULK_DRY_RUN =
      """
      {"kind": "zip", "created_before": "2026-05-01T08:00:00Z", "dry_run": true}
      """;

  static final String BULK_RETRY =
      """
      {"kind": "zip", "created_after": "2026-04-30T00:00:00Z",
       "created_before": "2026-05-01T00:00:00Z"}
      """;

  static final String BULK_RESULT =
      """
      {"matched": 2500, "affected": 2500, "dry_run": false, "batches": 3}
      """;

  static final String BAD_UID =
      """
      {"type": "urn:async-jobs:problem:bad-request", "title": "Bad request", "status": 400,
       "detail": "uid must be a uuid such as 0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f"}
      """;

  static final String PROBLEM =
      """
      {"type": "urn:async-jobs:problem:not-found", "title": "Not found", "status": 404,
       "detail": "no job 0190a5c8-7c1e-7b3a-9f00-1a2b3c4d5e6f"}
      """;
}
