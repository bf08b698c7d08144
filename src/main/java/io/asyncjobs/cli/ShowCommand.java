package io.asyncjobs.cli;

import io.asyncjobs.operations.JobView;
import io.asyncjobs.operations.Requests;
import io.asyncjobs.queue.JobReads;
import jakarta.inject.Singleton;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/** {@code admin show UID}: one job, field by field. */
@Singleton
class ShowCommand extends Command {

  private final JobReads reads;
  private final Output output;

  ShowCommand(JobReads reads, Output output) {
    super(
        "show",
        "admin show UID [--json]",
        """
        Shows one job: status, owner, times, error, result.
        """,
        Set.of(),
        Set.of());
    this.reads = reads;
    this.output = output;
  }

  @Override
  int run(Arguments args, PrintStream out, PrintStream err) {
    UUID uid = args.oneUid("show");
    JobView job = JobView.withoutLink(reads.getJob(uid).orElseThrow(() -> Requests.noSuchJob(uid)));
    if (args.json()) {
      output.printJson(job, out);
    } else {
      printJob(job, out);
    }
    return AdminCli.OK;
  }

  private void printJob(JobView job, PrintStream out) {
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("uid", job.uid().toString());
    fields.put("kind", job.kind());
    fields.put("status", job.status());
    if (job.cancelRequested()) {
      fields.put("cancel requested", "yes");
    }
    fields.put("owner", Output.ownerText(job));
    fields.put("preferred name", job.preferredName());
    fields.put("created", Output.time(job.createdAt()));
    fields.put("started", Output.time(job.startedAt()));
    fields.put("completed", Output.time(job.completedAt()));
    fields.put("updated", Output.time(job.updatedAt()));
    fields.put("expires", Output.time(job.expiresAt()));
    fields.put("last accessed", Output.time(job.lastAccessedAt()));
    fields.put("retries", Integer.toString(job.retryCount()));
    if (job.progress() != null) {
      JobView.Progress p = job.progress();
      String fraction = p.fraction() == null ? "" : Math.round(p.fraction() * 100) + "%";
      String items = p.items() == null ? "" : p.items() + " item(s)";
      fields.put("progress", (fraction + " " + items).trim() + " at " + Output.time(p.updatedAt()));
    }
    fields.put("duration", job.durationMs() == null ? null : job.durationMs() + " ms");
    fields.put("bytes in", Output.number(job.bytesIn()));
    fields.put("bytes out", Output.number(job.bytesOut()));
    fields.put("items", Output.number(job.itemCount()));
    fields.put("error", job.error());
    fields.put("result", job.result() == null ? null : output.compactJson(job.result()));
    int width = fields.keySet().stream().mapToInt(String::length).max().orElse(0);
    fields.forEach(
        (name, value) -> {
          if (value != null && !value.equals("-")) {
            out.println(name + " ".repeat(width - name.length()) + "  " + Table.printable(value));
          }
        });
  }
}
