package io.asyncjobs.cli;

import io.asyncjobs.operations.BulkActions;
import io.asyncjobs.operations.BulkRequest;
import io.asyncjobs.operations.BulkResult;
import io.asyncjobs.operations.Requests;
import io.asyncjobs.queue.Owner;
import jakarta.inject.Singleton;
import java.io.PrintStream;
import java.util.Set;

/** {@code admin bulk cancel|retry}: every job a filter matches, in batches, or only a count. */
@Singleton
class BulkCommand extends Command {

  private final BulkActions bulk;
  private final Output output;

  BulkCommand(BulkActions bulk, Output output) {
    super(
        "bulk",
        "admin bulk cancel|retry [--kind KIND] [--status STATUS] [--owner OWNER_KIND:OWNER_ID]"
            + " [--created-before TIME] [--created-after TIME] [--all] [--dry-run] [--json]",
        """
        Cancels or retries every job the filters match, as admin cancel and admin retry do
        one job at a time, in batches of 1,000 (each its own transaction), and prints how
        many jobs matched and were changed. Give at least one filter, or --all.

          cancel               pending jobs fail at once; running ones are asked to stop
          retry                failed jobs become pending again, same uid
          --kind KIND          only jobs of this kind
          --status STATUS      cancel: pending or running (default both); retry: failed
          --owner KIND:ID      only this owner's jobs, such as user:alice
          --created-before T   only jobs created before T, an RFC 3339 time such as
                               2026-05-01T08:00:00Z
          --created-after T    only jobs created after T
          --all                every job the statuses allow, with no other filter
          --dry-run            only count the jobs; change nothing
          --json               {"matched", "affected", "dry_run", "batches"}
        """,
        Set.of("--kind", "--status", "--owner", "--created-before", "--created-after"),
        Set.of("--all", "--dry-run"));
    this.bulk = bulk;
    this.output = output;
  }

  @Override
  int run(Arguments args, PrintStream out, PrintStream err) {
    if (args.words().size() != 1) {
      throw new UsageException("bulk takes one action: cancel or retry");
    }
    String action = args.words().get(0);
    if (!action.equals("cancel") && !action.equals("retry")) {
      throw new UsageException("bulk takes cancel or retry; got " + Requests.quote(action));
    }
    Owner owner = args.value("--owner").map(ListCommand::owner).orElse(null);
    BulkRequest request =
        new BulkRequest(
            args.value("--kind").orElse(null),
            args.value("--status").orElse(null),
            owner == null ? null : owner.kind(),
            owner == null ? null : owner.id(),
            args.value("--created-before").orElse(null),
            args.value("--created-after").orElse(null),
            args.has("--all") ? Boolean.TRUE : null,
            args.has("--dry-run"));
    BulkResult result = action.equals("cancel") ? bulk.cancel(request) : bulk.retry(request);
    if (args.json()) {
      output.printJson(result, out);
    } else if (result.dryRun()) {
      out.println(
          result.matched()
              + " job(s) match; a "
              + action
              + " would take "
              + result.batches()
              + " batch(es); nothing was changed (dry run)");
    } else {
      out.println(
          result.matched()
              + " job(s) matched; "
              + result.affected()
              + (action.equals("cancel") ? " cancelled" : " retried")
              + " in "
              + result.batches()
              + " batch(es)");
    }
    return AdminCli.OK;
  }
}
