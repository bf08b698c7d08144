package io.asyncjobs.cli;

import io.asyncjobs.operations.JobActions;
import io.asyncjobs.operations.JobView;
import jakarta.inject.Singleton;
import java.io.PrintStream;
import java.util.Set;
import java.util.UUID;

/** {@code admin retry UID}: a failed job runs again. */
@Singleton
class RetryCommand extends Command {

  private final JobActions actions;
  private final Output output;

  RetryCommand(JobActions actions, Output output) {
    super(
        "retry",
        "admin retry UID [--json]",
        """
        Runs a failed job again: it becomes pending with its error and result cleared, and
        the owner picks it up. A job that has not failed is refused (exit 4).
        """,
        Set.of(),
        Set.of());
    this.actions = actions;
    this.output = output;
  }

  @Override
  int run(Arguments args, PrintStream out, PrintStream err) {
    UUID uid = args.oneUid("retry");
    JobView job = JobView.withoutLink(actions.retry(uid));
    if (args.json()) {
      output.printJson(job, out);
    } else {
      out.println("job " + uid + " is pending again; the owner runs it next");
    }
    return AdminCli.OK;
  }
}
