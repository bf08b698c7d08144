package io.asyncjobs.cli;

import io.asyncjobs.operations.PauseView;
import io.asyncjobs.operations.ServicePauses;
import jakarta.inject.Singleton;
import java.io.PrintStream;
import java.util.Set;

/** {@code admin pause SERVICE}: the service's owner claims nothing until it is resumed. */
@Singleton
class PauseCommand extends Command {

  private final ServicePauses pauses;
  private final Output output;

  PauseCommand(ServicePauses pauses, Output output) {
    super(
        "pause",
        "admin pause SERVICE [--reason TEXT] [--json]",
        """
        Pauses SERVICE: its owner claims no more jobs until it is resumed (admin resume).
        Running jobs finish, enqueues are accepted and wait, delayed jobs fall due and
        expired jobs are swept as before. The pause holds across restarts and handovers,
        and admin settings SERVICE --reset keeps it. Pausing a paused service keeps the
        first pause (its time, who and why).

          --reason TEXT   why, shown on the service's card; up to 500 characters
          --json          {"service", "paused", "paused_at", "paused_by", "reason"}
        """,
        Set.of("--reason"),
        Set.of());
    this.pauses = pauses;
    this.output = output;
  }

  @Override
  int run(Arguments args, PrintStream out, PrintStream err) {
    if (args.words().size() != 1) {
      throw new UsageException("pause takes one service name");
    }
    String by = "cli:" + System.getProperty("user.name", "unknown");
    PauseView view = pauses.pause(args.words().get(0), by, args.value("--reason").orElse(null));
    if (args.json()) {
      output.printJson(view, out);
    } else {
      out.println(
          view.service()
              + " is paused since "
              + Output.time(view.pausedAt())
              + " by "
              + view.pausedBy()
              + (view.reason() == null ? "" : " (" + view.reason() + ")")
              + "; nothing is claimed until admin resume "
              + view.service());
    }
    return AdminCli.OK;
  }
}
