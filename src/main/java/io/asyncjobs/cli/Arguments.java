package io.asyncjobs.cli;

import io.asyncjobs.operations.Requests;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * One command's arguments: its options by name and its other words, checked against the options the
 * command takes. Options are {@code --name value}, {@code --name=value} or a bare flag; {@code --}
 * ends them.
 */
final class Arguments {

  private final Map<String, String> options;
  private final List<String> words;

  private Arguments(Map<String, String> options, List<String> words) {
    this.options = options;
    this.words = words;
  }

  /** Whether the arguments ask for help ({@code --help} or {@code -h} before any {@code --}). */
  static boolean askForHelp(List<String> args) {
    for (String arg : args) {
      if (arg.equals("--")) {
        return false;
      }
      if (arg.equals("--help") || arg.equals("-h")) {
        return true;
      }
    }
    return false;
  }

  /**
   * Splits {@code args} into options and words.
   *
   * @param valued the options that take a value
   * @param flags the options that take none
   * @throws UsageException for an unknown option, a missing or unexpected value, or a repeat
   */
  static Arguments parse(List<String> args, Set<String> valued, Set<String> flags) {
    Map<String, String> options = new LinkedHashMap<>();
    List<String> words = new ArrayList<>();
    boolean optionsEnded = false;
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (optionsEnded || !arg.startsWith("-") || arg.equals("-")) {
        words.add(arg);
        continue;
      }
      if (arg.equals("--")) {
        optionsEnded = true;
        continue;
      }
      int equals = arg.indexOf('=');
      String name = equals < 0 ? arg : arg.substring(0, equals);
      String value;
      if (valued.contains(name)) {
        if (equals >= 0) {
          value = arg.substring(equals + 1);
        } else if (i + 1 < args.size()) {
          value = args.get(++i);
        } else {
          throw new UsageException(name + " needs a value");
        }
      } else if (flags.contains(name)) {
        if (equals >= 0) {
          throw new UsageException(name + " takes no value");
        }
        value = "";
      } else {
        throw new UsageException("unknown option " + Requests.quote(name));
      }
      if (options.putIfAbsent(name, value) != null) {
        throw new UsageException(name + " is given twice");
      }
    }
    return new Arguments(options, List.copyOf(words));
  }

  /** The value of an option that takes one, if given. */
  Optional<String> value(String name) {
    return Optional.ofNullable(options.get(name));
  }

  /** Whether a flag (or an option) was given. */
  boolean has(String name) {
    return options.containsKey(name);
  }

  /** The words that are not options, in order. */
  List<String> words() {
    return words;
  }

  /** Whether {@code --json} was given: the answer is then one JSON document. */
  boolean json() {
    return has(Command.JSON);
  }

  /** Refuses any word: {@code command} takes options only. */
  void requireNoWords(String command) {
    if (!words.isEmpty()) {
      throw new UsageException(command + " takes no " + Requests.quote(words.get(0)));
    }
  }

  /** The one job uid {@code command} takes, refused as the API refuses it. */
  UUID oneUid(String command) {
    if (words.size() != 1) {
      throw new UsageException(command + " takes one job uid");
    }
    return Requests.uid(words.get(0), "uid");
  }
}
