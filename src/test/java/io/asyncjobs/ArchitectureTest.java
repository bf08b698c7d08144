package io.asyncjobs;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
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
 * cycle exists; and every statement on the {@code jobs} table lives in the queue package.
 * docs/architecture.md draws the same picture; change both together.
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
}
