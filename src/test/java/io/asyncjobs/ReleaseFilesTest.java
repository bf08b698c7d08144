package io.asyncjobs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The places that name a release agree with {@code pom.xml}: the image tag in the Deployment and in
 * every overlay (never {@code latest}), the README's and the operations guide's commands, the
 * version the OpenAPI document states, and the CHANGELOG's sections. A release changes the version
 * in one commit (docs/operations.md, "Releases"); this test names every place it forgot.
 */
class ReleaseFilesTest {

  /** A semantic version, with {@code -SNAPSHOT} between releases. */
  static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+)(-SNAPSHOT)?");

  /** The files outside k8s/ that show an image tag in a command. */
  static final List<String> COMMANDS =
      List.of("README.md", "docs/operations.md", "Dockerfile.native");

  @Test
  void shouldGiveThePomASemanticVersion() throws IOException {
    assertThat(version()).matches(VERSION);
  }

  @Test
  void shouldTagEveryImageOfOursWithTheReleaseNeverLatest() throws IOException {
    String release = release();
    List<String> wrong = new ArrayList<>();
    List<Path> files = new ArrayList<>();
    try (Stream<Path> k8s = Files.walk(Path.of("k8s"))) {
      k8s.filter(p -> p.toString().endsWith(".yaml")).sorted().forEach(files::add);
    }
    COMMANDS.forEach(name -> files.add(Path.of(name)));
    Pattern image = Pattern.compile("async-jobs:([\\w.\\-]+)");
    Pattern newTag = Pattern.compile("newTag:\\s*\"?([\\w.\\-]+)\"?");
    int seen = 0;
    for (Path file : files) {
      String text = Files.readString(file);
      for (Pattern pattern : List.of(image, newTag)) {
        Matcher m = pattern.matcher(text);
        while (m.find()) {
          seen++;
          if (!m.group(1).equals(release)) {
            wrong.add(file + ": " + m.group());
          }
        }
      }
      assertThat(text).as(file.toString()).doesNotContainPattern("image:\\s*\\S+:latest\\b");
    }
    assertThat(wrong).as("image tags other than the release " + release).isEmpty();
    assertThat(seen).as("image tags found").isGreaterThanOrEqualTo(6);
  }

  @Test
  void shouldStateTheReleaseInTheOpenApiDocument() throws IOException {
    String stated =
        new ObjectMapper()
            .readTree(Path.of("docs/openapi.json").toFile())
            .at("/info/version")
            .asText();
    assertThat(stated).isEqualTo(release());
  }

  @Test
  void shouldKeepTheChangelogInReleasedSectionsNewestFirst() throws IOException {
    String changelog = Files.readString(Path.of("CHANGELOG.md"));
    assertThat(changelog).contains("\n## [Unreleased]\n");
    Matcher headers = Pattern.compile("(?m)^## \\[([^\\]]+)\\](.*)$").matcher(changelog);
    List<int[]> released = new ArrayList<>();
    boolean first = true;
    while (headers.find()) {
      if (first) {
        assertThat(headers.group(1)).as("the first section").isEqualTo("Unreleased");
        first = false;
        continue;
      }
      Matcher v = VERSION.matcher(headers.group(1));
      assertThat(v.matches() && v.group(4) == null).as(headers.group()).isTrue();
      assertThat(headers.group(2)).as(headers.group()).matches(" - \\d{4}-\\d{2}-\\d{2}");
      released.add(
          new int[] {
            Integer.parseInt(v.group(1)), Integer.parseInt(v.group(2)), Integer.parseInt(v.group(3))
          });
    }
    for (int i = 1; i < released.size(); i++) {
      assertThat(java.util.Arrays.compare(released.get(i - 1), released.get(i)))
          .as("sections newest first")
          .isPositive();
    }
    if (!version().endsWith("-SNAPSHOT")) {
      assertThat(changelog).as("a release has its section").contains("\n## [" + version() + "] - ");
    }
  }

  /** The version in pom.xml: the project's own, after its artifactId. */
  static String version() throws IOException {
    String pom = Files.readString(Path.of("pom.xml"));
    Matcher m =
        Pattern.compile("<artifactId>async-jobs</artifactId>\\s*<version>([^<]+)</version>")
            .matcher(pom);
    assertThat(m.find()).as("the project's version in pom.xml").isTrue();
    return m.group(1);
  }

  /** The release the version names: the version itself, or the one a snapshot leads to. */
  static String release() throws IOException {
    return version().replace("-SNAPSHOT", "");
  }
}
