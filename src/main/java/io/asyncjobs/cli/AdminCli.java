package io.asyncjobs.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.engine.TickResult;
import io.asyncjobs.operations.JobActions;
import io.asyncjobs.operations.JobLists;
import io.asyncjobs.operations.JobView;
import io.asyncjobs.operations.Requests;
import io.asyncjobs.operations.SettingsView;
import io.asyncjobs.operations.SettingsViews;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.CancelOutcome;
import io.asyncjobs.queue.JobPage;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.queue.Owner;
import io.asyncjobs.settings.SettingsOverride;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfoService;
import org.flywaydb.core.api.MigrationState;

/**
 * The admin CLI's commands (list, show, retry, cancel, prune, settings). Each goes through the same
 * classes as the HTTP API, so it finds the same jobs and refuses the same input with the same
 * words; {@link Main} runs it in a process that serves no HTTP and processes no jobs.
 */
@ApplicationScoped
// The views are written as JSON here as well as by the API; a native image needs them either way.
@RegisterForReflection(
    targets = {
      JobView.class,
      JobView.Progress.class,
      SettingsView.class,
      SettingsView.Values.class,
      SettingsOverride.class
    })
public class AdminCli {

  /** Exit code: done as asked. */
  public static final int OK = 0;

  /** Exit code: something failed that the command line did not cause (database, schema). */
  public static final int FAILED = 1;

  /** Exit code: the command line is wrong; the message says what to change. */
  public static final int USAGE = 2;

  /** Exit code: there is no such job or service. */
  public static final int NOT_FOUND = 3;

  /** Exit code: the job's state does not allow it (retrying a job that did not fail, ...). */
  public static final int CONFLICT = 4;

  private static final String JSON = "--json";

  private static final String OVERVIEW =
      """
      Usage: admin <command> [options]

      Commands:
        list       list jobs, newest first, filtered by kind, status and owner
        show       show one job
        retry      run a failed job again
        cancel     cancel a pending job, or ask the owner to stop a running one
        prune      delete expired finished jobs now, after their kind's cleanup
        settings   show or change the services' settings

      Every command takes --json (one JSON document on standard output) and --help.
      Exit codes: 0 done, 1 failed, 2 usage error, 3 not found, 4 conflict.
      """;

  private final JobQueue queue;
  private final JobLists lists;
  private final JobActions actions;
  private final SettingsViews settings;
  private final ServiceManager services;
  private final Flyway flyway;
  private final ObjectMapper json;
  private final Map<String, Command> commands = new LinkedHashMap<>();

  AdminCli(
      JobQueue queue,
      JobLists lists,
      JobActions actions,
      SettingsViews settings,
      ServiceManager services,
      Flyway flyway,
      ObjectMapper json) {
    this.queue = queue;
    this.lists = lists;
    this.actions = actions;
    this.settings = settings;
    this.services = services;
    this.flyway = flyway;
    this.json = json;
    add(
        new Command(
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
            Set.of("--all", JSON),
            this::list));
    add(
        new Command(
            "show",
            "admin show UID [--json]",
            """
            Shows one job: status, owner, times, error, result.
            """,
            Set.of(),
            Set.of(JSON),
            this::show));
    add(
        new Command(
            "retry",
            "admin retry UID [--json]",
            """
            Runs a failed job again: it becomes pending with its error and result cleared, and
            the owner picks it up. A job that has not failed is refused (exit 4).
            """,
            Set.of(),
            Set.of(JSON),
            this::retry));
    add(
        new Command(
            "cancel",
            "admin cancel UID [--json]",
            """
            Cancels a pending job: it fails at once and never runs. A running job is asked to
            stop: the owner interrupts it and fails it on its next tick. A finished job is
            refused (exit 4).
            """,
            Set.of(),
            Set.of(JSON),
            this::cancel));
    add(
        new Command(
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
            Set.of("--dry-run", JSON),
            this::prune));
    add(
        new Command(
            "settings",
            "admin settings [SERVICE] [--retention-seconds N] [--max-concurrent N]"
                + " [--job-timeout-seconds N] [--max-retries N] [--reset] [--json]",
            """
            Without SERVICE, shows every service's settings; with SERVICE alone, that one's.
            With values, stores them as run-time overrides of SERVICE (its other overrides
            stay); --reset drops every override of SERVICE, back to the configuration. Every
            replica sees a change, and the owner applies it on its next tick.

              --retention-seconds N     how long a finished job is kept, 1 to 315360000
              --max-concurrent N        jobs of the service processed at once, 1 to 256
              --job-timeout-seconds N   how long one job may run, 1 to 315360000
              --max-retries N           recoveries of a vanished job before it fails, 0 to 100
              --reset                   drop every override of SERVICE
            """,
            Set.of(
                "--retention-seconds",
                "--max-concurrent",
                "--job-timeout-seconds",
                "--max-retries"),
            Set.of("--reset", JSON),
            this::settings));
  }

  private void add(Command command) {
    commands.put(command.name(), command);
  }

  /**
   * Runs one command.
   *
   * @param args the command's name and its arguments, without the word that selected the CLI
   * @param out where the answer goes: a table, or with {@code --json} one JSON document
   * @param err where errors and usage hints go
   * @return the exit code: {@link #OK}, {@link #FAILED}, {@link #USAGE}, {@link #NOT_FOUND} or
   *     {@link #CONFLICT}
   */
  public int run(List<String> args, PrintStream out, PrintStream err) {
    if (args.isEmpty()) {
      err.print(OVERVIEW);
      return USAGE;
    }
    String name = args.get(0);
    if (List.of("--help", "-h", "help").contains(name)) {
      out.print(OVERVIEW);
      return OK;
    }
    Command command = commands.get(name);
    if (command == null) {
      err.println("error: unknown command " + quote(name));
      err.print(OVERVIEW);
      return USAGE;
    }
    List<String> rest = args.subList(1, args.size());
    if (Arguments.askForHelp(rest)) {
      out.println("Usage: " + command.synopsis());
      out.println();
      out.print(command.help());
      return OK;
    }
    try {
      Arguments arguments = Arguments.parse(rest, command.valued(), command.flags());
      Optional<String> unready = schemaProblem();
      if (unready.isPresent()) {
        err.println("error: " + unready.get());
        return FAILED;
      }
      int code = command.handler().run(arguments, out, err);
      out.flush();
      return code;
    } catch (UsageException e) {
      return usage(command, e.getMessage(), err);
    } catch (ProblemException e) {
      return switch (e.problem().status()) {
        case 400, 422 -> usage(command, e.problem().detail(), err);
        case 404 -> error(e.problem().detail(), NOT_FOUND, err);
        case 409 -> error(e.problem().detail(), CONFLICT, err);
        default -> error(e.problem().detail(), FAILED, err);
      };
    } catch (RuntimeException e) {
      return error(describe(e), FAILED, err);
    }
  }

  private static int usage(Command command, String message, PrintStream err) {
    err.println("error: " + message);
    err.println("usage: " + command.synopsis());
    err.println("(admin " + command.name() + " --help explains every option)");
    return USAGE;
  }

  private static int error(String message, int code, PrintStream err) {
    err.println("error: " + message);
    return code;
  }

  /**
   * Why the database is not one this build can work with, if it is not. The CLI never migrates
   * (only the service does, at start), so a schema that lags behind this build is refused here with
   * a message instead of failing later on a missing column.
   */
  private Optional<String> schemaProblem() {
    MigrationInfoService info = flyway.info();
    if (Arrays.stream(info.all()).anyMatch(m -> m.getState() == MigrationState.FAILED)) {
      return Optional.of(
          "a database migration failed; the service's log says which, and nothing was done");
    }
    int pending = info.pending().length;
    if (pending > 0) {
      return Optional.of(
          "the database schema lacks "
              + pending
              + " migration(s) of this build; the service applies them when it starts (the"
              + " admin CLI never changes the schema), so start it first");
    }
    return Optional.empty();
  }

  // ---- list ------------------------------------------------------------------------------

  private int list(Arguments args, PrintStream out, PrintStream err) {
    noWords(args, "list");
    boolean all = args.has("--all");
    if (all && args.has("--before")) {
      throw new UsageException("--all starts at the newest job; leave out --before");
    }
    Owner owner = args.value("--owner").map(AdminCli::owner).orElse(null);
    String limit =
        args.value("--limit").orElse(all ? Integer.toString(JobQueue.MAX_PAGE_SIZE) : null);
    JobLists.Filters filters =
        lists.filters(
            args.value("--kind").orElse(null),
            args.value("--status").orElse(null),
            owner,
            args.value("--before").orElse(null),
            limit);
    JobSink sink = args.has(JSON) ? new JsonJobs(out) : new TableJobs(out);
    UUID cursor = filters.before();
    JobPage page;
    do {
      page =
          queue.listJobs(
              filters.kind(), filters.status(), filters.owner(), cursor, filters.limit());
      sink.page(page.jobs().stream().map(JobView::withoutLink).toList());
      cursor = page.next();
    } while (all && cursor != null);
    sink.end(page.next());
    return OK;
  }

  private static Owner owner(String text) {
    int colon = text.indexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new UsageException(
          "--owner must be OWNER_KIND:OWNER_ID, such as user:alice; got " + quote(text));
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
            ownerText(job),
            time(job.createdAt()),
            time(job.completedAt()),
            oneLine(job.error(), 80));
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
        generator = json.getFactory().createGenerator(out);
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
          json.writeValue(generator, job);
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

  // ---- show, retry, cancel ---------------------------------------------------------------

  private int show(Arguments args, PrintStream out, PrintStream err) {
    UUID uid = uidWord(args, "show");
    JobView job = JobView.withoutLink(queue.getJob(uid).orElseThrow(() -> Requests.noSuchJob(uid)));
    if (args.has(JSON)) {
      printJson(job, out);
    } else {
      printJob(job, out);
    }
    return OK;
  }

  private int retry(Arguments args, PrintStream out, PrintStream err) {
    UUID uid = uidWord(args, "retry");
    JobView job = JobView.withoutLink(actions.retry(uid));
    if (args.has(JSON)) {
      printJson(job, out);
    } else {
      out.println("job " + uid + " is pending again; the owner runs it next");
    }
    return OK;
  }

  private int cancel(Arguments args, PrintStream out, PrintStream err) {
    UUID uid = uidWord(args, "cancel");
    CancelOutcome outcome = actions.cancel(uid);
    if (args.has(JSON)) {
      printJson(
          JobView.withoutLink(queue.getJob(uid).orElseThrow(() -> Requests.noSuchJob(uid))), out);
    } else if (outcome == CancelOutcome.STOP_REQUESTED) {
      out.println("job " + uid + " is running; the owner stops it and fails it on its next tick");
    } else {
      out.println("job " + uid + " is cancelled: failed now, it will never run");
    }
    return OK;
  }

  private static UUID uidWord(Arguments args, String command) {
    if (args.words().size() != 1) {
      throw new UsageException(command + " takes one job uid");
    }
    return Requests.uid(args.words().get(0), "uid");
  }

  private void printJob(JobView job, PrintStream out) {
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("uid", job.uid().toString());
    fields.put("kind", job.kind());
    fields.put("status", job.status());
    if (job.cancelRequested()) {
      fields.put("cancel requested", "yes");
    }
    fields.put("owner", ownerText(job));
    fields.put("preferred name", job.preferredName());
    fields.put("created", time(job.createdAt()));
    fields.put("started", time(job.startedAt()));
    fields.put("completed", time(job.completedAt()));
    fields.put("updated", time(job.updatedAt()));
    fields.put("expires", time(job.expiresAt()));
    fields.put("last accessed", time(job.lastAccessedAt()));
    fields.put("retries", Integer.toString(job.retryCount()));
    if (job.progress() != null) {
      JobView.Progress p = job.progress();
      String fraction = p.fraction() == null ? "" : Math.round(p.fraction() * 100) + "%";
      String items = p.items() == null ? "" : p.items() + " item(s)";
      fields.put("progress", (fraction + " " + items).trim() + " at " + time(p.updatedAt()));
    }
    fields.put("duration", job.durationMs() == null ? null : job.durationMs() + " ms");
    fields.put("bytes in", number(job.bytesIn()));
    fields.put("bytes out", number(job.bytesOut()));
    fields.put("items", number(job.itemCount()));
    fields.put("error", job.error());
    fields.put("result", job.result() == null ? null : compactJson(job.result()));
    int width = fields.keySet().stream().mapToInt(String::length).max().orElse(0);
    fields.forEach(
        (name, value) -> {
          if (value != null && !value.equals("-")) {
            out.println(name + " ".repeat(width - name.length()) + "  " + Table.printable(value));
          }
        });
  }

  // ---- prune -----------------------------------------------------------------------------

  private int prune(Arguments args, PrintStream out, PrintStream err) {
    noWords(args, "prune");
    List<String> kinds =
        args.value("--kind")
            // The list filter's check, so an unknown kind reads as it does there.
            .map(kind -> List.of(lists.filters(kind, null, null, null, null).kind()))
            .orElseGet(services::kinds);
    boolean dryRun = args.has("--dry-run");
    ObjectNode report = json.createObjectNode().put("dry_run", dryRun);
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
    if (args.has(JSON)) {
      printJson(report, out);
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
      return FAILED;
    }
    return OK;
  }

  // ---- settings --------------------------------------------------------------------------

  private int settings(Arguments args, PrintStream out, PrintStream err) {
    if (args.words().size() > 1) {
      throw new UsageException("settings takes at most one service name");
    }
    boolean reset = args.has("--reset");
    boolean change =
        args.has("--retention-seconds")
            || args.has("--max-concurrent")
            || args.has("--job-timeout-seconds")
            || args.has("--max-retries");
    if (args.words().isEmpty()) {
      if (reset || change) {
        throw new UsageException(
            "name the service to change, such as: admin settings zip --max-concurrent 2");
      }
      List<SettingsView> all = settings.all();
      if (args.has(JSON)) {
        printJson(all, out);
      } else {
        printSettings(all, out);
      }
      return OK;
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
    if (args.has(JSON)) {
      printJson(view, out);
    } else {
      printSettings(List.of(view), out);
    }
    return OK;
  }

  /** The overrides with the given values replaced, checked as the API checks a body. */
  private static SettingsOverride changed(SettingsOverride current, Arguments args) {
    try {
      return new SettingsOverride(
          whole(args, "--retention-seconds", current.retentionSeconds(), Function.identity()),
          whole(args, "--max-concurrent", current.maxConcurrent(), AdminCli::saturatedInt),
          whole(args, "--job-timeout-seconds", current.jobTimeoutSeconds(), Function.identity()),
          whole(args, "--max-retries", current.maxRetries(), AdminCli::saturatedInt));
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
      throw new UsageException(option + " must be a whole number; got " + quote(text.get()));
    }
  }

  /**
   * A value outside int range is outside every int setting's range too; saturating keeps it out of
   * range, so the settings check refuses it with its usual message.
   */
  private static Integer saturatedInt(long value) {
    return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, value));
  }

  private static void printSettings(List<SettingsView> views, PrintStream out) {
    Table table =
        new Table(
            out,
            "SERVICE",
            "RETENTION_SECONDS",
            "MAX_CONCURRENT",
            "JOB_TIMEOUT_SECONDS",
            "MAX_RETRIES");
    boolean anyOverride = false;
    for (SettingsView view : views) {
      SettingsOverride o = view.overrides();
      SettingsView.Values e = view.effective();
      table.row(
          view.service(),
          marked(e.retentionSeconds(), o.retentionSeconds()),
          marked(e.maxConcurrent(), o.maxConcurrent()),
          marked(e.jobTimeoutSeconds(), o.jobTimeoutSeconds()),
          marked(e.maxRetries(), o.maxRetries()));
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

  // ---- shared ----------------------------------------------------------------------------

  private static void noWords(Arguments args, String command) {
    if (!args.words().isEmpty()) {
      throw new UsageException(command + " takes no " + quote(args.words().get(0)));
    }
  }

  private void printJson(Object value, PrintStream out) {
    try {
      out.println(json.writerWithDefaultPrettyPrinter().writeValueAsString(value));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String compactJson(Object value) {
    try {
      return json.writeValueAsString(value);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String ownerText(JobView job) {
    return job.ownerKind() == null ? null : job.ownerKind() + ":" + job.ownerId();
  }

  private static String time(Instant instant) {
    return instant == null ? null : instant.truncatedTo(ChronoUnit.SECONDS).toString();
  }

  private static String number(Long value) {
    return value == null ? null : value.toString();
  }

  private static String oneLine(String text, int max) {
    if (text == null) {
      return null;
    }
    String line = text.replaceAll("\\s+", " ").strip();
    return line.length() > max ? line.substring(0, max - 3) + "..." : line;
  }

  /** Command-line text shortened and quoted for an error message. */
  static String quote(String text) {
    String shown = text.length() > 60 ? text.substring(0, 60) + "..." : text;
    return "\"" + shown.replaceAll("\\p{Cntrl}", "?") + "\"";
  }

  /** An error's message with its causes', which name what went wrong underneath. */
  private static String describe(Throwable e) {
    List<String> parts = new ArrayList<>();
    for (Throwable t = e; t != null && parts.size() < 4; t = t.getCause()) {
      String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
      if (parts.stream().noneMatch(p -> p.contains(message))) {
        parts.add(message);
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return String.join(": ", parts);
  }

  /** What a command runs. */
  @FunctionalInterface
  private interface Handler {
    int run(Arguments args, PrintStream out, PrintStream err);
  }

  /**
   * One command: its name, a one-line synopsis, the help text, and the options it takes.
   *
   * @param valued options that take a value
   * @param flags options that take none
   */
  private record Command(
      String name,
      String synopsis,
      String help,
      Set<String> valued,
      Set<String> flags,
      Handler handler) {}
}
