package io.asyncjobs.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.engine.TickResult;
import io.asyncjobs.operations.JobLists;
import jakarta.inject.Singleton;
import java.io.PrintStream;
import java.util.List;
import java.util.Set;

/** {@code admin prune}: expired finished jobs are deleted now, the way the sweep deletes them. */
@Singleton
class PruneCommand extends Command {

  private final ServiceManager services;
  private final JobLists lists;
  private final Output output;

  PruneCommand(ServiceManager services, JobLists lists, Output output) {
    super(
        "prune",
        "admin prune [--kind KIND] [--dry-run] [--json]",
        """
        Deletes the finished jobs whose retention has passed now, instead of waiting for
        the owner's sweep, the way the sweep does it: the job's kind removes its files
        first. A job whose cleanup fails is kept for the sweep to try again later, and the
        command exits 1.

          --kind KIND   only jobs of this kind
          --dry-run     count the expired jobs and change nothing
        """,
        Set.of("--kind"),
        Set.of("--dry-run"));
    this.services = services;
    this.lists = lists;
    this.output = output;
  }

  @Override
  int run(Arguments args, PrintStream out, PrintStream err) {
    args.requireNoWords("prune");
    List<String> kinds =
        args.value("--kind")
            // The list filter's check, so an unknown kind reads as it does there.
            .map(kind -> List.of(lists.filters(kind, null, null, null, null).kind()))
            .orElseGet(services::kinds);
    boolean dryRun = args.has("--dry-run");
    ObjectNode report = output.mapper().createObjectNode().put("dry_run", dryRun);
    ArrayNode rows = report.putArray("kinds");
    Table table =
        dryRun
            ? new Table(out, "KIND", "EXPIRED")
            : new Table(out, "KIND", "DELETED", "CLEANUP_ERRORS");
    int cleanupErrors = 0;
    for (String kind : kinds) {
      JobService service = services.jobService(kind).orElseThrow();
      ObjectNode row = rows.addObject().put("kind", kind);
      if (dryRun) {
        long expired = service.expiredCount();
        row.put("expired", expired);
        table.row(kind, Long.toString(expired));
      } else {
        TickResult swept = service.sweepExpired();
        row.put("deleted", swept.swept()).put("cleanup_errors", swept.cleanupErrors());
        table.row(kind, Integer.toString(swept.swept()), Integer.toString(swept.cleanupErrors()));
        cleanupErrors += swept.cleanupErrors();
      }
    }
    if (args.json()) {
      output.printJson(report, out);
    } else {
      table.flush();
      if (dryRun) {
        out.println("dry run: nothing was deleted");
      }
    }
    if (cleanupErrors > 0) {
      err.println(
          "error: "
              + cleanupErrors
              + " expired job(s) kept because their cleanup failed (see the warnings above);"
              + " the sweep tries them again later");
      return AdminCli.FAILED;
    }
    return AdminCli.OK;
  }
}
