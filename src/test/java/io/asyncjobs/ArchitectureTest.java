package io.asyncjobs;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import io.asyncjobs.queue.JobClaims;
import io.asyncjobs.queue.JobOutcomes;
import io.asyncjobs.queue.JobRecovery;
import io.asyncjobs.queue.JobSweep;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The packages of {@code src/main} as layers: each may use only the layers below it, and no package
 * cycle exists; every statement on the {@code jobs} table lives in the queue package, new rows come
 * in through one class, requests never reach the engine's statements, and the tick's roles do not
 * know the runner that orders them. docs/architecture.md draws the same picture, and its layer
 * diagram is read here; change both together.
 */
class ArchitectureTest {

  /** Top to bottom; a layer may use any layer listed after it, never one before. */
  private static final Map<String, String[]> LAYERS = new LinkedHashMap<>();

  static {
    LAYERS.put("Kinds", new String[] {"io.asyncjobs.kinds.."});
    LAYERS.put("Api", new String[] {"io.asyncjobs.api.."});
    LAYERS.put("Cli", new String[] {"io.asyncjobs.cli.."});
    LAYERS.put("Callbacks", new String[] {"io.asyncjobs.callbacks.."});
    LAYERS.put("Operations", new String[] {"io.asyncjobs.operations.."});
    LAYERS.put("Metrics", new String[] {"io.asyncjobs.metrics.."});
    LAYERS.put("Engine", new String[] {"io.asyncjobs.engine.."});
    LAYERS.put("Lock", new String[] {"io.asyncjobs.lock.."});
    LAYERS.put("Access", new String[] {"io.asyncjobs.auth..", "io.asyncjobs.files.."});
    LAYERS.put("Queue", new String[] {"io.asyncjobs.queue.."});
    LAYERS.put("Settings", new String[] {"io.asyncjobs.settings.."});
    LAYERS.put(
        "Base",
        new String[] {
          "io.asyncjobs.channels..",
          "io.asyncjobs.config..",
          "io.asyncjobs.devdb..",
          "io.asyncjobs.problem..",
          "io.asyncjobs.storage..",
          "io.asyncjobs.time..",
          "io.asyncjobs.tracing.."
        });
  }

  private static JavaClasses classes;

  @BeforeAll
  static void importMain() {
    classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.asyncjobs");
  }

  @Test
  void shouldHaveNoPackageCycle() {
    slices().matching("io.asyncjobs.(**)").should().beFreeOfCycles().check(classes);
  }

  @Test
  void shouldOnlyUseLayersBelow() {
    LayeredArchitecture rule = layeredArchitecture().consideringOnlyDependenciesInLayers();
    for (Map.Entry<String, String[]> layer : LAYERS.entrySet()) {
      rule = rule.layer(layer.getKey()).definedBy(layer.getValue());
    }
    List<String> above = new ArrayList<>();
    for (String layer : LAYERS.keySet()) {
      // The API and the CLI sit side by side: neither uses the other.
      List<String> users = new ArrayList<>(above);
      if (layer.equals("Cli")) {
        users.remove("Api");
      }
      rule =
          users.isEmpty()
              ? rule.whereLayer(layer).mayNotBeAccessedByAnyLayer()
              : rule.whereLayer(layer).mayOnlyBeAccessedByLayers(users.toArray(String[]::new));
      above.add(layer);
    }
    rule.check(classes);
  }

  @Test
  void shouldPlaceEveryPackageInALayer() {
    List<String> unplaced = new ArrayList<>();
    classes.stream()
        .map(c -> c.getPackageName())
        .distinct()
        .filter(p -> !p.equals("io.asyncjobs"))
        .filter(
            p ->
                LAYERS.values().stream()
                    .flatMap(java.util.Arrays::stream)
                    .map(glob -> glob.substring(0, glob.length() - 2))
                    .noneMatch(prefix -> p.equals(prefix) || p.startsWith(prefix + ".")))
        .forEach(unplaced::add);
    assertThat(unplaced)
        .as("packages without a layer (add them to LAYERS and docs/architecture.md)")
        .isEmpty();
  }

  /** A statement naming the {@code jobs} table (not {@code jobs_*} or {@code job_totals}). */
  private static final Pattern JOBS_SQL =
      Pattern.compile("\\b(FROM|UPDATE|INTO|JOIN|TABLE)\\s+jobs\\b");

  @Test
  void shouldKeepEveryStatementOnTheJobsTableInTheQueuePackage() throws IOException {
    // The jobs table has one home: a statement on it elsewhere would escape the indexes, fences
    // and query-plan checks that the queue package keeps next to its statements.
    Path main = Path.of("src/main/java");
    Path queue = main.resolve("io/asyncjobs/queue");
    List<String> outside = new ArrayList<>();
    try (Stream<Path> files = Files.walk(main)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        if (!file.startsWith(queue) && JOBS_SQL.matcher(Files.readString(file)).find()) {
          outside.add(main.relativize(file).toString());
        }
      }
    }
    assertThat(outside).as("statements on the jobs table outside io.asyncjobs.queue").isEmpty();
  }

  /** The node lines of the layer diagram: {@code Id["packages<br/>what they hold"]}. */
  private static final Pattern DIAGRAM_NODE =
      Pattern.compile("^\\s*(\\w+)\\[\"([^\"<]+)<br/>", Pattern.MULTILINE);

  @Test
  void shouldDrawTheSameLayersInTheArchitecturePage() throws IOException {
    // The page's Mermaid diagram is what a newcomer reads: it must name the layers this test
    // enforces, in the same order, with the same packages.
    String page = Files.readString(Path.of("docs/architecture.md"));
    int start = page.indexOf("```mermaid\nflowchart TD");
    assertThat(start).as("the layer diagram in docs/architecture.md").isNotNegative();
    String diagram = page.substring(start, page.indexOf("```\n", start + 3));
    Map<String, List<String>> drawn = new LinkedHashMap<>();
    var nodes = DIAGRAM_NODE.matcher(diagram);
    while (nodes.find()) {
      drawn.put(nodes.group(1), List.of(nodes.group(2).trim().split("\\s*·\\s*")));
    }
    Map<String, List<String>> enforced = new LinkedHashMap<>();
    LAYERS.forEach(
        (layer, globs) ->
            enforced.put(
                layer,
                java.util.Arrays.stream(globs)
                    .map(g -> g.substring("io.asyncjobs.".length(), g.length() - 2))
                    .toList()));
    assertThat(drawn).containsExactlyEntriesOf(enforced);
  }

  @Test
  void shouldKeepRequestPathsOffTheEnginesStatements() {
    // A route or a command that claimed, completed, rescued or swept a job would bypass the
    // owner lock and its fencing epoch: only the engine (on the owner) issues those statements.
    noClasses()
        .that()
        .resideInAnyPackage(
            "io.asyncjobs.api..",
            "io.asyncjobs.cli..",
            "io.asyncjobs.operations..",
            "io.asyncjobs.callbacks..",
            "io.asyncjobs.kinds..")
        .should()
        .dependOnClassesThat()
        .belongToAnyOf(JobClaims.class, JobOutcomes.class, JobRecovery.class, JobSweep.class)
        .check(classes);
  }

  @Test
  void shouldKeepTheTicksRolesUnawareOfTheRunnerThatOrdersThem() {
    // The roles get the shard's state (ShardState) and the engine context; a role that reached
    // back into ShardRunner would make the order of the tick depend on more than runOnce. The
    // runner's own nested classes (the reservation a start on enqueue holds) are the runner.
    noClasses()
        .that()
        .haveNameNotMatching("io\\.asyncjobs\\.engine\\.ShardRunner(\\$.*)?")
        .and()
        .resideInAPackage("io.asyncjobs.engine")
        .and()
        .haveSimpleNameNotStartingWith("JobService")
        .should()
        .dependOnClassesThat()
        .haveSimpleNameStartingWith("ShardRunner")
        .check(classes);
  }

  /** An insert into the {@code jobs} table itself. */
  private static final Pattern JOBS_INSERT = Pattern.compile("\\bINSERT\\s+INTO\\s+jobs\\b");

  @Test
  void shouldAddJobsThroughOneClass() throws IOException {
    // One way in: every new row gets its shard, retention, quota and wake-up from JobInserter.
    Path main = Path.of("src/main/java");
    List<String> inserting = new ArrayList<>();
    try (Stream<Path> files = Files.walk(main)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        if (JOBS_INSERT.matcher(Files.readString(file)).find()) {
          inserting.add(main.relativize(file).toString());
        }
      }
    }
    assertThat(inserting).containsExactly("io/asyncjobs/queue/JobInserter.java");
  }
}
