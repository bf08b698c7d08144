package io.asyncjobs.cli;

import io.asyncjobs.operations.PauseView;
import io.asyncjobs.operations.ServicePauses;
import jakarta.inject.Singleton;
import java.io.PrintStream;
import java.util.Set;

/** {@code admin resume SERVICE}: a paused service's owner claims again, at once. */
@Singleton
class ResumeCommand extends Command {

  private final ServicePauses pauses;
  private final Output output;

  ResumeCommand(ServicePauses pauses, Output output) {
    super(
        "resume",
        "admin resume SERVICE [--json]",
        """
        Resumes a paused SERVICE: its owner claims its waiting jobs again at once. Resuming
        a service that is not paused changes nothing.
        """,
        Set.of(),
        Set.of());
    this.pauses = pauses;
    this.output = output;
  }

  @Override
  int run(Arguments args, PrintStream out, PrintStream err) {
    if (args.words().size() != 1) {
      throw new UsageException("resume takes one service name");
    }
    PauseView view = pauses.resume(args.words().get(0));
    if (args.json()) {
      output.printJson(view, out);
    } else {
      out.println(view.service() + " runs: its owner claims again");
    }
    return AdminCli.OK;
  }
}
