package io.asyncjobs.cli;

import io.asyncjobs.operations.JobActions;
import io.asyncjobs.operations.JobView;
import io.asyncjobs.operations.Requests;
import io.asyncjobs.queue.CancelOutcome;
import io.asyncjobs.queue.JobReads;
import jakarta.inject.Singleton;
import java.io.PrintStream;
import java.util.Set;
import java.util.UUID;

/** {@code admin cancel UID}: a pending job fails at once, a running one is asked to stop. */
@Singleton
class CancelCommand extends Command {

  private final JobReads reads;
  private final JobActions actions;
  private final Output output;

  CancelCommand(JobReads reads, JobActions actions, Output output) {
    super(
        "cancel",
        "admin cancel UID [--json]",
        """
        Cancels a pending job: it fails at once and never runs. A running job is asked to
        stop: the owner interrupts it and fails it on its next tick. A finished job is
        refused (exit 4).
        """,
        Set.of(),
        Set.of());
    this.reads = reads;
    this.actions = actions;
    this.output = output;
  }

  @Override
  int run(Arguments args, PrintStream out, PrintStream err) {
    UUID uid = args.oneUid("cancel");
    CancelOutcome outcome = actions.cancel(uid);
    if (args.json()) {
      output.printJson(
          JobView.withoutLink(reads.getJob(uid).orElseThrow(() -> Requests.noSuchJob(uid))), out);
    } else if (outcome == CancelOutcome.STOP_REQUESTED) {
      out.println("job " + uid + " is running; the owner stops it and fails it on its next tick");
    } else {
      out.println("job " + uid + " is cancelled: failed now, it will never run");
    }
    return AdminCli.OK;
  }
}
