package io.asyncjobs.cli;

import io.asyncjobs.operations.Requests;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;
import jakarta.inject.Inject;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The entry point of the one artifact (jar or native binary): without arguments it runs the
 * service, as it always has; with {@value #CLI_WORD} first it runs one admin command and exits.
 */
@QuarkusMain
public class Main {

  /** The first argument that selects the admin CLI. */
  public static final String CLI_WORD = "admin";

  /**
   * Configuration of a CLI run, set as system properties before Quarkus starts, so they outrank the
   * environment the CLI inherits from the server's container. The server in the same pod holds the
   * HTTP port and competes for the owner lock; a CLI run does neither, runs no tick, listens for no
   * notification, never changes the schema, and keeps standard output for its answer.
   */
  static final Map<String, String> CLI_CONFIG =
      Map.of(
          "quarkus.http.host-enabled", "false",
          "quarkus.scheduler.enabled", "false",
          "jobs.lock.mode", "none",
          "jobs.wake-ups", "false",
          "quarkus.flyway.migrate-at-start", "false",
          "quarkus.banner.enabled", "false",
          "quarkus.log.level", "WARN",
          "quarkus.log.console.stderr", "true");

  /** Starts the service, or runs one admin command. */
  public static void main(String... args) {
    if (Arrays.stream(args).allMatch(arg -> arg.startsWith("-"))) {
      // No arguments, or only options such as -Dkey=value that a native binary takes: the service.
      Quarkus.run(args);
      return;
    }
    if (!CLI_WORD.equals(args[0])) {
      // A mistyped command must not start a second server that competes for the lock.
      System.err.println(
          "error: unknown command "
              + Requests.quote(args[0])
              + ". Without arguments this starts the service; '"
              + CLI_WORD
              + " --help' lists the admin commands.");
      System.exit(AdminCli.USAGE);
    }
    CLI_CONFIG.forEach(System::setProperty);
    Quarkus.run(Admin.class, Arrays.copyOfRange(args, 1, args.length));
  }

  /** Runs one admin command once Quarkus has started, and exits with its code. */
  public static class Admin implements QuarkusApplication {

    @Inject AdminCli cli;

    @Override
    public int run(String... args) {
      return cli.run(List.of(args), System.out, System.err);
    }
  }
}
