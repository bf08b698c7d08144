package io.asyncjobs.cli;

import io.asyncjobs.operations.Requests;
import io.asyncjobs.operations.SettingsView;
import io.asyncjobs.operations.SettingsViews;
import io.asyncjobs.settings.SettingsOverride;
import jakarta.inject.Singleton;
import java.io.PrintStream;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/** {@code admin settings}: the services' settings, shown or overridden at run time. */
@Singleton
class SettingsCommand extends Command {

  private final SettingsViews settings;
  private final Output output;

  SettingsCommand(SettingsViews settings, Output output) {
    super(
        "settings",
        "admin settings [SERVICE] [--retention-seconds N] [--max-concurrent N]"
            + " [--job-timeout-seconds N] [--max-retries N] [--claim-order fifo|fair]"
            + " [--max-pending-per-owner N] [--max-running-per-owner N] [--max-attempts N]"
            + " [--reset] [--json]",
        """
        Without SERVICE, shows every service's settings; with SERVICE alone, that one's.
        With values, stores them as run-time overrides of SERVICE (its other overrides
        stay); --reset drops every override of SERVICE, back to the configuration. Every
        replica sees a change, and the owner applies it on its next tick.

          --retention-seconds N     how long a finished job is kept, 1 to 315360000
          --max-concurrent N        jobs of the service processed at once, 1 to 256
          --job-timeout-seconds N   how long one job may run, 1 to 315360000
          --max-retries N           recoveries of a vanished job before it fails, 0 to 100
          --claim-order ORDER       fifo (enqueue order) or fair (turns between owners)
          --max-pending-per-owner N pending jobs one owner may hold, 0 (no limit) to 10^9
          --max-running-per-owner N jobs of one owner running at once, 0 (no limit) to 10000
          --max-attempts N          tries of a job that fails transiently, 1 (no retry) to 100
          --reset                   drop every override of SERVICE
        """,
        Set.of(
            "--retention-seconds",
            "--max-concurrent",
            "--job-timeout-seconds",
            "--max-retries",
            "--claim-order",
            "--max-pending-per-owner",
            "--max-running-per-owner",
            "--max-attempts"),
        Set.of("--reset"));
    this.settings = settings;
    this.output = output;
  }

  @Override
  int run(Arguments args, PrintStream out, PrintStream err) {
    if (args.words().size() > 1) {
      throw new UsageException("settings takes at most one service name");
    }
    boolean reset = args.has("--reset");
    boolean change = valued().stream().anyMatch(args::has);
    if (args.words().isEmpty()) {
      if (reset || change) {
        throw new UsageException(
            "name the service to change, such as: admin settings zip --max-concurrent 2");
      }
      print(settings.all(), args, out);
      return AdminCli.OK;
    }
    String service = args.words().get(0);
    SettingsView view;
    if (reset) {
      if (change) {
        throw new UsageException("--reset drops every override; give it without values");
      }
      view = settings.replace(service, SettingsOverride.NONE);
    } else if (change) {
      SettingsOverride current = settings.of(service).overrides();
      view = settings.replace(service, changed(current, args));
    } else {
      view = settings.of(service);
    }
    if (args.json()) {
      output.printJson(view, out);
    } else {
      printTable(List.of(view), out);
    }
    return AdminCli.OK;
  }

  private void print(List<SettingsView> all, Arguments args, PrintStream out) {
    if (args.json()) {
      output.printJson(all, out);
    } else {
      printTable(all, out);
    }
  }

  /** The overrides with the given values replaced, checked as the API checks a body. */
  private static SettingsOverride changed(SettingsOverride current, Arguments args) {
    try {
      return new SettingsOverride(
          whole(args, "--retention-seconds", current.retentionSeconds(), Function.identity()),
          whole(args, "--max-concurrent", current.maxConcurrent(), SettingsCommand::saturatedInt),
          whole(args, "--job-timeout-seconds", current.jobTimeoutSeconds(), Function.identity()),
          whole(args, "--max-retries", current.maxRetries(), SettingsCommand::saturatedInt),
          args.value("--claim-order").map(String::trim).orElse(current.claimOrder()),
          whole(
              args,
              "--max-pending-per-owner",
              current.maxPendingPerOwner(),
              SettingsCommand::saturatedInt),
          whole(
              args,
              "--max-running-per-owner",
              current.maxRunningPerOwner(),
              SettingsCommand::saturatedInt),
          whole(args, "--max-attempts", current.maxAttempts(), SettingsCommand::saturatedInt));
    } catch (IllegalArgumentException e) {
      throw new UsageException(e.getMessage());
    }
  }

  private static <T> T whole(Arguments args, String option, T current, Function<Long, T> type) {
    Optional<String> text = args.value(option);
    if (text.isEmpty()) {
      return current;
    }
    try {
      return type.apply(Long.parseLong(text.get().trim()));
    } catch (NumberFormatException e) {
      throw new UsageException(
          option + " must be a whole number; got " + Requests.quote(text.get()));
    }
  }

  /**
   * A value outside int range is outside every int setting's range too; saturating keeps it out of
   * range, so the settings check refuses it with its usual message.
   */
  private static Integer saturatedInt(long value) {
    return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, value));
  }

  private static void printTable(List<SettingsView> views, PrintStream out) {
    Table table =
        new Table(
            out,
            "SERVICE",
            "RETENTION_SECONDS",
            "MAX_CONCURRENT",
            "JOB_TIMEOUT_SECONDS",
            "MAX_RETRIES",
            "CLAIM_ORDER",
            "MAX_PENDING_PER_OWNER",
            "MAX_RUNNING_PER_OWNER",
            "MAX_ATTEMPTS");
    boolean anyOverride = false;
    for (SettingsView view : views) {
      SettingsOverride o = view.overrides();
      SettingsView.Values e = view.effective();
      table.row(
          view.service(),
          marked(e.retentionSeconds(), o.retentionSeconds()),
          marked(e.maxConcurrent(), o.maxConcurrent()),
          marked(e.jobTimeoutSeconds(), o.jobTimeoutSeconds()),
          marked(e.maxRetries(), o.maxRetries()),
          o.claimOrder() == null ? e.claimOrder() : e.claimOrder() + "*",
          marked(e.maxPendingPerOwner(), o.maxPendingPerOwner()),
          marked(e.maxRunningPerOwner(), o.maxRunningPerOwner()),
          marked(e.maxAttempts(), o.maxAttempts()));
      anyOverride |= !o.equals(SettingsOverride.NONE);
    }
    table.flush();
    if (anyOverride) {
      out.println("* overridden at run time; admin settings SERVICE --reset goes back to config");
    }
  }

  private static String marked(long effective, Number override) {
    return override == null ? Long.toString(effective) : effective + "*";
  }
}
