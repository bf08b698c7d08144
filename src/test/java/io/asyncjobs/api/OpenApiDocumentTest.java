package io.asyncjobs.api;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quarkus.arc.Arc;
import io.quarkus.test.junit.QuarkusTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Keeps {@code docs/openapi.json}, the copy of the served OpenAPI document that clients are
 * generated from (the build's Java client, docs/api.md), equal to what {@code /q/openapi} serves. A
 * change to a route, a schema or an annotation fails here until the copy is refreshed with {@value
 * #REFRESH}, so the change shows in review as a diff of the document.
 */
@QuarkusTest
class OpenApiDocumentTest {

  /** The command that rewrites the copy instead of failing. */
  static final String REFRESH = "./mvnw test -Dtest=OpenApiDocumentTest -Dopenapi.write=true";

  static final Path COPY = Path.of("docs", "openapi.json");

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void shouldServeTheDocumentCommittedInDocs() throws IOException {
    JsonNode served = canonical(withoutTestKinds(fetch()));

    if (Boolean.getBoolean("openapi.write")) {
      Files.writeString(COPY, print(served), StandardCharsets.UTF_8);
      return;
    }
    assertThat(COPY).as("the committed copy; write it with: %s", REFRESH).exists();
    JsonNode committed = JSON.readTree(COPY.toFile());
    List<String> differences = new ArrayList<>();
    diff("", committed, served, differences);
    assertThat(differences)
        .as(
            "the served /q/openapi differs from %s at these JSON pointers (committed -> served);"
                + " if the change is meant, refresh the copy with: %s",
            COPY, REFRESH)
        .isEmpty();
  }

  @Test
  void shouldKeepTheCommittedCopyInItsCanonicalForm() throws IOException {
    // A hand edit or a merge that reorders keys would make the next refresh a noisy diff.
    if (!Files.exists(COPY) || Boolean.getBoolean("openapi.write")) {
      return;
    }
    String text = Files.readString(COPY, StandardCharsets.UTF_8);
    // A boolean, so the failure is one line and not two copies of the whole document.
    assertThat(text.equals(print(canonical(JSON.readTree(text)))))
        .as(
            "%s is not in canonical form (sorted keys, as the refresh writes it): %s",
            COPY, REFRESH)
        .isTrue();
  }

  private static JsonNode fetch() throws IOException {
    String body =
        given()
            .queryParam("format", "json")
            .get("/q/openapi")
            .then()
            .statusCode(200)
            .extract()
            .asString();
    return JSON.readTree(body);
  }

  /**
   * Drops the enqueue routes of the kinds only the tests register (the example kind of
   * docs/writing-a-kind.md): the copy describes the application users deploy.
   */
  private static JsonNode withoutTestKinds(JsonNode document) {
    ObjectNode paths = (ObjectNode) document.get("paths");
    ObjectNode schemas = (ObjectNode) document.at("/components/schemas");
    for (String kind : testKinds()) {
      paths.remove("/api/" + kind);
      paths.remove("/api/" + kind + "/batch");
      // Its payload and batch schemas, named as KindOperationsFilter names them.
      String name = KindOperationsFilter.pascal(kind);
      schemas.remove(List.of(name + "Payload", name + "Batch", name + "BatchJob"));
    }
    return document;
  }

  /** The kinds whose class was compiled from src/test (found in target/test-classes). */
  private static Set<String> testKinds() {
    Set<String> kinds = new TreeSet<>();
    for (PayloadCheck kind : Arc.container().select(PayloadCheck.class)) {
      // Climb from Arc's subclasses and proxies to a class that javac wrote.
      for (Class<?> type = kind.getClass(); type != null; type = type.getSuperclass()) {
        Path compiled =
            Path.of("target", "test-classes", type.getName().replace('.', '/') + ".class");
        if (Files.exists(compiled)) {
          kinds.add(kind.kind());
          break;
        }
      }
    }
    return kinds;
  }

  /**
   * The document with every object's keys sorted, so that the copy does not depend on the order in
   * which the kinds' beans were found or the filters ran. Arrays keep their order: the order of
   * parameters is the order of a generated method's arguments.
   */
  static JsonNode canonical(JsonNode node) {
    if (node.isObject()) {
      ObjectNode sorted = JsonNodeFactory.instance.objectNode();
      List<String> names = new ArrayList<>();
      node.fieldNames().forEachRemaining(names::add);
      names.sort(null);
      for (String name : names) {
        sorted.set(name, canonical(node.get(name)));
      }
      return sorted;
    }
    if (node.isArray()) {
      ArrayNode copy = JsonNodeFactory.instance.arrayNode();
      node.forEach(element -> copy.add(canonical(element)));
      return copy;
    }
    return node;
  }

  /** Two-space indentation, {@code "key": value}, and a final newline. */
  static String print(JsonNode node) throws IOException {
    DefaultPrettyPrinter printer =
        new DefaultPrettyPrinter()
            .withSeparators(
                Separators.createDefaultInstance()
                    .withObjectFieldValueSpacing(Separators.Spacing.AFTER))
            .withArrayIndenter(new DefaultIndenter("  ", "\n"))
            .withObjectIndenter(new DefaultIndenter("  ", "\n"));
    return JSON.writer(printer).writeValueAsString(node) + "\n";
  }

  /** Adds the JSON pointer (RFC 6901) of each place where {@code a} and {@code b} differ. */
  static void diff(String pointer, JsonNode a, JsonNode b, List<String> out) {
    if (a.equals(b)) {
      return;
    }
    if (a.isObject() && b.isObject()) {
      Set<String> names = new TreeSet<>();
      a.fieldNames().forEachRemaining(names::add);
      b.fieldNames().forEachRemaining(names::add);
      for (String name : names) {
        String child = pointer + "/" + name.replace("~", "~0").replace("/", "~1");
        if (!a.has(name)) {
          out.add(child + " (only served)");
        } else if (!b.has(name)) {
          out.add(child + " (only committed)");
        } else {
          diff(child, a.get(name), b.get(name), out);
        }
      }
      return;
    }
    if (a.isArray() && b.isArray() && a.size() == b.size()) {
      Iterator<JsonNode> left = a.elements();
      Iterator<JsonNode> right = b.elements();
      for (int i = 0; left.hasNext(); i++) {
        diff(pointer + "/" + i, left.next(), right.next(), out);
      }
      return;
    }
    out.add(pointer + ": " + brief(a) + " -> " + brief(b));
  }

  private static String brief(JsonNode node) {
    String text = node.toString();
    return text.length() > 120 ? text.substring(0, 117) + "..." : text;
  }
}
