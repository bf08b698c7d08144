package io.asyncjobs.cli;

import java.io.PrintStream;
import java.util.Set;

/** One admin command: how it is called, its help, the options it takes and what it does. */
abstract class Command {

  /** The flag every command takes: answer with one JSON document on standard output. */
  static final String JSON = "--json";

  private final String name;
  private final String synopsis;
  private final String help;
  private final Set<String> valued;
  private final Set<String> flags;

  /**
   * @param name the word that selects the command
   * @param synopsis one line: how the command is called
   * @param help what the command does and what each option means
   * @param valued the options that take a value
   * @param flags the options that take none ({@link #JSON} is added)
   */
  Command(String name, String synopsis, String help, Set<String> valued, Set<String> flags) {
    this.name = name;
    this.synopsis = synopsis;
    this.help = help;
    this.valued = Set.copyOf(valued);
    this.flags = union(flags, JSON);
  }

  String name() {
    return name;
  }

  String synopsis() {
    return synopsis;
  }

  String help() {
    return help;
  }

  Set<String> valued() {
    return valued;
  }

  Set<String> flags() {
    return flags;
  }

  /**
   * Runs the command.
   *
   * @return the exit code, one of {@link AdminCli}'s
   * @throws UsageException when the arguments are wrong
   * @throws io.asyncjobs.problem.ProblemException with the problem the API would answer
   */
  abstract int run(Arguments args, PrintStream out, PrintStream err);

  private static Set<String> union(Set<String> set, String one) {
    java.util.HashSet<String> all = new java.util.HashSet<>(set);
    all.add(one);
    return Set.copyOf(all);
  }
}
