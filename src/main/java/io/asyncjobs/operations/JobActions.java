package io.asyncjobs.operations;

import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.CancelOutcome;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobBulk;
import io.asyncjobs.queue.JobReads;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.NoSuchElementException;
import java.util.UUID;

/**
 * Retry and cancel, with the refusals a caller sees: the routes and the admin CLI both go through
 * here, so a job in the wrong state is refused the same way whichever asked.
 */
@ApplicationScoped
public class JobActions {

  private final JobBulk actions;
  private final JobReads reads;

  JobActions(JobBulk actions, JobReads reads) {
    this.actions = actions;
    this.reads = reads;
  }

  /**
   * Runs a failed job again.
   *
   * @return the job, pending again
   * @throws ProblemException 404 when there is no such job, 409 when it is not failed
   */
  public Job retry(UUID uid) {
    boolean retried;
    try {
      retried = actions.retryJob(uid);
    } catch (NoSuchElementException e) {
      throw Requests.noSuchJob(uid);
    }
    if (!retried) {
      throw ProblemException.conflict(
          "job-not-failed", "Job not failed", "only a failed job can be retried");
    }
    return reads.getJob(uid).orElseThrow(() -> Requests.noSuchJob(uid));
  }

  /**
   * Cancels a pending job, or asks the owner to stop a running one. Who may cancel is the caller's
   * business; this checks only the job's state.
   *
   * @return {@link CancelOutcome#CANCELLED} or {@link CancelOutcome#STOP_REQUESTED}
   * @throws ProblemException 404 when there is no such job, 409 when it has already finished
   */
  public CancelOutcome cancel(UUID uid) {
    CancelOutcome outcome = actions.cancelJob(uid);
    return switch (outcome) {
      case CANCELLED, STOP_REQUESTED -> outcome;
      case ALREADY_FINISHED ->
          throw ProblemException.conflict(
              "job-finished", "Job already finished", "job " + uid + " has already finished");
      case NOT_FOUND -> throw Requests.noSuchJob(uid);
    };
  }
}
