package io.asyncjobs.engine;

import io.asyncjobs.queue.Completion;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.tracing.Traceparent;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

/**
 * The engine's spans: one per job it processes, {@code job.process <kind>}, from the claim until
 * the outcome is written, whose parent is the trace the job was enqueued in (and linked to it as
 * well, for back ends that show links rather than remote parents), with the claim and the outcome
 * write as child spans. The claim and the outcome write are single statements for many jobs, so
 * their spans are recorded after the statement, with its start and end. When tracing is off ({@link
 * #OFF}) nothing here reads a clock or makes a span.
 */
final class JobTraces {

  /** Tracing is off: every span is the invalid one. */
  static final JobTraces OFF = new JobTraces(null);

  static final String PROCESS = "job.process ";
  static final String CLAIM = "job.claim";
  static final String OUTCOME = "job.outcome";

  static final AttributeKey<String> UID = AttributeKey.stringKey("job.uid");
  static final AttributeKey<String> KIND = AttributeKey.stringKey("job.kind");
  static final AttributeKey<String> OWNER = AttributeKey.stringKey("job.owner");
  static final AttributeKey<String> SHARD = AttributeKey.stringKey("job.shard");
  static final AttributeKey<Long> RETRY_COUNT = AttributeKey.longKey("job.retry_count");

  /** Failed attempts before this one (the retry policy's count), 0 on a first attempt. */
  static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("job.attempt");

  static final AttributeKey<String> STATUS = AttributeKey.stringKey("job.status");

  private static final AttributeKey<String> MESSAGING_SYSTEM =
      AttributeKey.stringKey("messaging.system");
  private static final AttributeKey<String> MESSAGING_OPERATION =
      AttributeKey.stringKey("messaging.operation.type");
  private static final AttributeKey<String> MESSAGING_DESTINATION =
      AttributeKey.stringKey("messaging.destination.name");
  private static final AttributeKey<String> MESSAGING_MESSAGE_ID =
      AttributeKey.stringKey("messaging.message.id");

  /** Null when tracing is off. */
  private final Tracer tracer;

  JobTraces(Tracer tracer) {
    this.tracer = tracer;
  }

  /**
   * A statement's start or end for a span recorded after it, in epoch nanoseconds; 0 when tracing
   * is off. The wall clock on purpose: span times are read against other processes' spans, not
   * against the engine's clock, which tests set.
   */
  long now() {
    if (tracer == null) {
      return 0;
    }
    Instant now = Instant.now();
    return TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano();
  }

  /**
   * Starts the processing span of a job just claimed, at the claim's start, with the claim as its
   * first child.
   *
   * @param claimStart the claim statement's start ({@link #now()})
   * @param claimEnd its end
   * @return the span, to end with {@link #end}; the invalid span when tracing is off
   */
  Span claimed(Job job, String shard, long claimStart, long claimEnd) {
    if (tracer == null) {
      return Span.getInvalid();
    }
    SpanBuilder builder =
        tracer
            .spanBuilder(PROCESS + job.kind)
            .setSpanKind(SpanKind.CONSUMER)
            .setStartTimestamp(claimStart, TimeUnit.NANOSECONDS)
            .setAttribute(UID, job.uid.toString())
            .setAttribute(KIND, job.kind)
            .setAttribute(SHARD, shard)
            .setAttribute(RETRY_COUNT, (long) job.retryCount)
            .setAttribute(ATTEMPT, (long) job.attempt)
            .setAttribute(MESSAGING_SYSTEM, "async-jobs")
            .setAttribute(MESSAGING_OPERATION, "process")
            .setAttribute(MESSAGING_DESTINATION, job.kind)
            .setAttribute(MESSAGING_MESSAGE_ID, job.uid.toString());
    if (job.ownerKind != null) {
      builder.setAttribute(OWNER, job.ownerKind + ":" + job.ownerId);
    }
    SpanContext enqueue = Traceparent.context(job.traceparent);
    if (enqueue.isValid()) {
      builder.setParent(Context.root().with(Span.wrap(enqueue))).addLink(enqueue);
    } else {
      builder.setNoParent();
    }
    Span span = builder.startSpan();
    step(span, CLAIM, claimStart, claimEnd);
    return span;
  }

  /** Records a step of a job's processing that ran from {@code start} to {@code end}. */
  void step(Span parent, String name, long start, long end) {
    if (tracer == null || !parent.isRecording()) {
      return;
    }
    tracer
        .spanBuilder(name)
        .setParent(Context.root().with(parent))
        .setStartTimestamp(start, TimeUnit.NANOSECONDS)
        .startSpan()
        .end(end, TimeUnit.NANOSECONDS);
  }

  /** Makes the job's span current on the thread that runs {@code process}; close it after. */
  Scope enter(Span span) {
    return tracer == null ? Scope.noop() : span.makeCurrent();
  }

  /** {@code process} threw: the exception is recorded on the job's span. */
  void threw(Span span, Throwable failure) {
    if (span.isRecording()) {
      span.recordException(failure);
    }
  }

  /**
   * Ends a job's span once what became of it is written: its status, and an error status with the
   * reason when the job failed.
   */
  void end(Task task) {
    Span span = task.span;
    if (!span.isRecording()) {
      return;
    }
    Completion outcome = task.outcome();
    if (outcome == null || outcome.isRetry() || task.wasRescheduled()) {
      // Back to pending (a failed attempt, or the database went away): the job has not failed;
      // the attempt's exception is on the span as an event.
      span.setAttribute(STATUS, JobStatus.PENDING.dbValue());
    } else {
      span.setAttribute(STATUS, outcome.status().dbValue());
      if (outcome.status() == JobStatus.FAILED) {
        span.setStatus(StatusCode.ERROR, outcome.error());
      }
    }
    span.end();
  }
}
