package io.asyncjobs.testing;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The programs some tests drive (Chromium and its driver, Prometheus and promtool, unzip) come from
 * Debian packages, as zonky's PostgreSQL comes from a Maven artifact. A test asks for them here:
 * when one is missing and the build runs as root on a machine with apt, the packages are installed
 * on the spot, and the test says so on standard error; otherwise the test fails with the command
 * that installs them. Nothing is skipped.
 */
public final class DebianPackages {

  private static final Path APT_GET = Path.of("/usr/bin/apt-get");

  /** How long one install may take: Chromium alone is some 100 MB to fetch. */
  private static final long INSTALL_MINUTES = 20;

  private static boolean updated;

  private DebianPackages() {}

  /**
   * Makes sure every executable in {@code programs} (path to the Debian package that holds it) is
   * there, installing the missing packages when it can.
   *
   * @param what the tests that need them, for the messages
   */
  public static synchronized void require(String what, Map<Path, String> programs) {
    Map<Path, String> missing = new LinkedHashMap<>();
    programs.forEach(
        (path, pkg) -> {
          if (!Files.isExecutable(path)) {
            missing.put(path, pkg);
          }
        });
    if (missing.isEmpty()) {
      return;
    }
    List<String> packages = missing.values().stream().distinct().toList();
    String command = "apt-get install -y --no-install-recommends " + String.join(" ", packages);
    if (!isRoot() || !Files.isExecutable(APT_GET)) {
      fail(
          "%s need %s, missing here. Install them with: sudo %s (the build installs them itself"
              + " when it runs as root on a machine with apt).",
          what, missing.keySet(), command);
    }
    System.err.printf(
        "[tests] %s need %s: installing the Debian packages %s (running as root with apt)%n",
        what, missing.keySet(), packages);
    Path log = Path.of("target", "apt-" + String.join("-", packages) + ".log").toAbsolutePath();
    if (!updated) {
      run(List.of(APT_GET.toString(), "update"), log, what);
      updated = true;
    }
    List<String> install = new ArrayList<>(List.of(APT_GET.toString(), "install", "-y"));
    // Wait for another apt (an unattended upgrade) instead of failing at once.
    install.addAll(List.of("-o", "DPkg::Lock::Timeout=300", "--no-install-recommends"));
    install.addAll(packages);
    run(install, log, what);
    List<Path> still = missing.keySet().stream().filter(p -> !Files.isExecutable(p)).toList();
    if (!still.isEmpty()) {
      fail("%s: %s installed, but %s still missing; see %s", what, packages, still, log);
    }
  }

  private static void run(List<String> command, Path log, String what) {
    try {
      Files.createDirectories(log.getParent());
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
      builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      // No questions, and no services started by the packages' scripts in a container.
      builder.environment().put("DEBIAN_FRONTEND", "noninteractive");
      Process process = builder.start();
      if (!process.waitFor(INSTALL_MINUTES, TimeUnit.MINUTES)) {
        process.destroyForcibly();
        fail(
            "%s: %s did not finish within %d minutes; see %s", what, command, INSTALL_MINUTES, log);
      }
      if (process.exitValue() != 0) {
        fail(
            "%s: %s exited with %d:%n%s",
            what, String.join(" ", command), process.exitValue(), tail(log));
      }
    } catch (IOException e) {
      fail("%s: could not run %s: %s", what, command, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      fail("%s: interrupted while running %s", what, command);
    }
  }

  private static boolean isRoot() {
    try {
      return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() == 0;
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return false;
    }
  }

  private static String tail(Path log) throws IOException {
    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
  }
}
