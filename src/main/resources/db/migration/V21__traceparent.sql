-- Traces (docs/design/sharing.md, step 7): the W3C traceparent of the request that enqueued a job,
-- so that its processing joins that trace. A nullable column without a default only changes the
-- catalog; no row is rewritten. Null for a job enqueued without a trace.
ALTER TABLE jobs ADD COLUMN traceparent text;
COMMENT ON COLUMN jobs.traceparent IS 'The enqueuing request''s W3C traceparent (00-<trace id>-<span id>-<flags>), or null.';
