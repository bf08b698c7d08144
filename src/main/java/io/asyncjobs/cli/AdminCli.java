package io.asyncjobs.cli;

import io.asyncjobs.operations.BulkResult;
import io.asyncjobs.operations.JobView;
import io.asyncjobs.operations.PauseView;
import io.asyncjobs.operations.Requests;
import io.asyncjobs.operations.SettingsView;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.settings.SettingsOverride;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The admin CLI: picks the command (list, show, retry, cancel, prune, settings, owners, pause,
 * resume, bulk, one class each), parses its arguments, checks the schema, and turns what went wrong
 * into an exit code and a message. Each command goes through the same operations as the HTTP API,
 * so it finds the same jobs and refuses the same input with the same words; {@link Main} runs it in
 * a process that serves no HTTP and processes no jobs.
 */
@ApplicationScoped
// The views are written as JSON here as well as by the API; a native image needs them either way.
@RegisterForReflection(
    targets = {
      JobView.class,
      JobView.Progress.class,
      SettingsView.class,
      PauseView.class,
      BulkResult.class,
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
        owners     show who owns each shard, since when, and its queued jobs
        pause      stop a service's owner from claiming jobs (running ones finish)
        resume     let a paused service's owner claim again
        bulk       cancel or retry every job a filter matches, or count them

      Every command takes --json (one JSON document on standard output) and --help.
      Exit codes: 0 done, 1 failed, 2 usage error, 3 not found, 4 conflict.
      """;

  private final SchemaCheck schema;
  private final Map<String, Command> commands = new LinkedHashMap<>();

  AdminCli(
      SchemaCheck schema,
      ListCommand list,
      ShowCommand show,
      RetryCommand retry,
      CancelCommand cancel,
      PruneCommand prune,
      SettingsCommand settings,
      OwnersCommand owners,
      PauseCommand pause,
      ResumeCommand resume,
      BulkCommand bulk) {
    this.schema = schema;
    for (Command command :
        List.of(list, show, retry, cancel, prune, settings, owners, pause, resume, bulk)) {
      commands.put(command.name(), command);
    }
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
      err.println("error: unknown command " + Requests.quote(name));
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
      Optional<String> unready = schema.problem();
      if (unready.isPresent()) {
        err.println("error: " + unready.get());
        return FAILED;
      }
      int code = command.run(arguments, out, err);
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
}
