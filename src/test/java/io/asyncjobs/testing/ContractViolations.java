package io.asyncjobs.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Collectors;

/**
 * What becomes of contract violations: by default the test fails with them; with {@code
 * -Dcontract.mode=collect} they are appended to {@code target/contract-violations.txt} instead (one
 * tab-separated line each: test, method, route, status, pointer, kind, message), so one run of the
 * suite lists every departure of the app from its document.
 */
public final class ContractViolations {

  /** The system property that switches the mode: {@code fail} (default) or {@code collect}. */
  public static final String MODE = "contract.mode";

  static final Path FILE = Path.of("target", "contract-violations.txt");

  private ContractViolations() {}

  /** Whether violations are collected rather than failing the test. */
  public static boolean collecting() {
    return "collect".equalsIgnoreCase(System.getProperty(MODE, "fail"));
  }

  /** Fails the running test ({@code test} names it) with {@code violations}, or collects them. */
  public static void report(String test, List<ContractViolation> violations) {
    if (collecting()) {
      String lines =
          violations.stream()
              .map(
                  v ->
                      String.join(
                          "\t",
                          test,
                          v.method(),
                          v.route(),
                          Integer.toString(v.status()),
                          v.pointer(),
                          v.kind(),
                          v.message().replace('\n', ' ').replace('\t', ' ')))
              .collect(Collectors.joining("\n", "", "\n"));
      synchronized (ContractViolations.class) {
        try {
          Files.createDirectories(FILE.getParent());
          Files.writeString(
              FILE,
              lines,
              StandardCharsets.UTF_8,
              StandardOpenOption.CREATE,
              StandardOpenOption.APPEND);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      return;
    }
    throw new AssertionError(
        "The exchange departs from the served OpenAPI document (/q/openapi):\n  "
            + violations.stream()
                .map(ContractViolation::describe)
                .collect(Collectors.joining("\n  "))
            + "\nFix the document (or the answer); a test that must step outside the contract is"
            + " marked @ContractExempt.");
  }
}
