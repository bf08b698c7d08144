package io.asyncjobs.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import io.asyncjobs.operations.JobLists;
import io.asyncjobs.operations.JobView;
import io.asyncjobs.operations.Requests;
import io.asyncjobs.queue.JobPage;
import io.asyncjobs.queue.JobReads;
import io.asyncjobs.queue.Owner;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/** {@code admin list}: jobs, newest first, page by page, as an admin sees them in the API. */
@Singleton
class ListCommand extends Command {

  private final JobReads reads;
  private final JobLists lists;
  private final Output output;

  ListCommand(JobReads reads, JobLists lists, Output output) {
    super(
        "list",
        "admin list [--kind KIND] [--status STATUS] [--owner OWNER_KIND:OWNER_ID]"
            + " [--limit N] [--before UID | --all] [--json]",
        """
        Lists jobs, newest first, one page at a time (every owner's jobs, as an admin sees
        them in the API).

          --kind KIND        only jobs of this kind
          --status STATUS    only jobs in this status: pending, running, done or failed
          --owner KIND:ID    only this owner's jobs, such as user:alice
          --limit N          page size, 1 to 500 (default 50; with --all, 500)
          --before UID       the page after this uid: the "next" of the page before
          --all              every matching job, page after page
          --json             {"jobs": [...], "next": UID or null}
        """,
        Set.of("--kind", "--status", "--owner", "--limit", "--before"),
        Set.of("--all"));
    this.reads = reads;
    this.lists = lists;
    this.output = output;
  }

  @Override
  int run(Arguments args, PrintStream out, PrintStream err) {
    args.requireNoWords("list");
    boolean all = args.has("--all");
    if (all && args.has("--before")) {
      throw new UsageException("--all starts at the newest job; leave out --before");
    }
    Owner owner = args.value("--owner").map(ListCommand::owner).orElse(null);
    String limit =
        args.value("--limit").orElse(all ? Integer.toString(JobReads.MAX_PAGE_SIZE) : null);
    JobLists.Filters filters =
        lists.filters(
            args.value("--kind").orElse(null),
            args.value("--status").orElse(null),
            owner,
            args.value("--before").orElse(null),
            limit);
    JobSink sink = args.json() ? new JsonJobs(out) : new TableJobs(out);
    UUID cursor = filters.before();
    JobPage page;
    do {
      page =
          reads.listJobs(
              filters.kind(), filters.status(), filters.owner(), cursor, filters.limit());
      sink.page(page.jobs().stream().map(JobView::withoutLink).toList());
      cursor = page.next();
    } while (all && cursor != null);
    sink.end(page.next());
    return AdminCli.OK;
  }

  static Owner owner(String text) {
    int colon = text.indexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new UsageException(
          "--owner must be OWNER_KIND:OWNER_ID, such as user:alice; got " + Requests.quote(text));
    }
    return new Owner(text.substring(0, colon), text.substring(colon + 1));
  }

  /** Where listed jobs go, page by page. */
  private interface JobSink {
    void page(List<JobView> jobs);

    /** After the last page; {@code next} is the cursor of the page after it, or null. */
    void end(UUID next);
  }

  private static final class TableJobs implements JobSink {
    private final PrintStream out;
    private final Table table;

    TableJobs(PrintStream out) {
      this.out = out;
      this.table = new Table(out, "UID", "KIND", "STATUS", "OWNER", "CREATED", "FINISHED", "ERROR");
    }

    @Override
    public void page(List<JobView> jobs) {
      for (JobView job : jobs) {
        table.row(
            job.uid().toString(),
            job.kind(),
            job.cancelRequested() && "running".equals(job.status()) ? "stopping" : job.status(),
            Output.ownerText(job),
            Output.time(job.createdAt()),
            Output.time(job.completedAt()),
            Output.oneLine(job.error(), 80));
      }
      table.flush();
    }

    @Override
    public void end(UUID next) {
      if (!table.printedAny()) {
        out.println("no jobs");
      }
      if (next != null) {
        out.println("more: add --before " + next + " for the next page, or --all");
      }
    }
  }

  /** Streams {@code {"jobs": [...], "next": ...}}, so {@code --all} holds one page at a time. */
  private final class JsonJobs implements JobSink {
    private final PrintStream out;
    private final JsonGenerator generator;

    JsonJobs(PrintStream out) {
      this.out = out;
      try {
        generator = output.mapper().getFactory().createGenerator(out);
        // Closing the generator must not close standard output.
        generator.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        generator.useDefaultPrettyPrinter();
        generator.writeStartObject();
        generator.writeArrayFieldStart("jobs");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public void page(List<JobView> jobs) {
      try {
        for (JobView job : jobs) {
          output.mapper().writeValue(generator, job);
        }
        generator.flush();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public void end(UUID next) {
      try {
        generator.writeEndArray();
        generator.writeStringField("next", next == null ? null : next.toString());
        generator.writeEndObject();
        generator.close();
        out.println();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
