package io.asyncjobs.testing;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SchemaRegistryConfig;
import com.networknt.schema.dialect.OpenApi31;
import com.networknt.schema.path.PathType;
import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * An OpenAPI 3.1 document read for checking exchanges against it: finds the operation of a method
 * and path, follows {@code $ref}s between its objects, and validates JSON against its schemas with
 * networknt's JSON Schema 2020-12 validator in the OpenAPI 3.1 dialect (type arrays with {@code
 * "null"}, {@code $ref} with siblings, {@code const}...).
 *
 * <p>Answers are held to a stricter reading than requests: a field of a response object that the
 * schema's {@code properties} do not list is a violation unless the schema says {@code
 * additionalProperties} (true or a schema). That is done by giving every such schema {@code
 * unevaluatedProperties: false} in a private copy of the document (unevaluated, not additional, so
 * that {@code $ref} siblings and {@code allOf} wrappers still see the fields their parts declare).
 * Requests are checked against the document as served.
 */
public final class ContractDocument {

  /** Where the validator believes the document lives; nothing is fetched from it. */
  private static final String STRICT_IRI = "urn:contract:strict";

  private static final String AS_SERVED_IRI = "urn:contract:served";

  static final JsonMapper JSON = JsonMapper.builder().build();

  private final JsonNode document;
  private final SchemaRegistry strict;
  private final SchemaRegistry asServed;
  private final Map<String, Schema> schemas = new ConcurrentHashMap<>();

  private ContractDocument(JsonNode document) {
    hoistSchemas(document);
    this.document = document;
    JsonNode strictCopy = document.deepCopy();
    new Strictener(strictCopy).apply();
    this.strict = registry(STRICT_IRI, strictCopy);
    this.asServed = registry(AS_SERVED_IRI, document);
  }

  /** The document from its JSON text. */
  public static ContractDocument parse(String json) {
    return new ContractDocument(JSON.readTree(json));
  }

  /** The document from its JSON tree (for tests that alter a served document first). */
  public static ContractDocument of(JsonNode document) {
    return new ContractDocument(document.deepCopy());
  }

  /**
   * The document a running app serves at {@code /q/openapi}, fetched with the JDK's client (not
   * RestAssured, whose filters would see this request too).
   */
  public static String fetch(String baseUrl) {
    try {
      HttpResponse<String> answer =
          // HTTP/1.1, as the clients generated from the document speak it: the JDK client's
          // default h2c upgrade over plain HTTP lost the framing of this large answer now and then.
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .build()
              .send(
                  HttpRequest.newBuilder(URI.create(baseUrl + "/q/openapi?format=json"))
                      .timeout(Duration.ofSeconds(30))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      if (answer.statusCode() != 200) {
        throw new IllegalStateException(
            "GET " + baseUrl + "/q/openapi answered " + answer.statusCode());
      }
      return answer.body();
    } catch (IOException e) {
      throw new IllegalStateException("Could not read the OpenAPI document at " + baseUrl, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The document's tree (read only). */
  public JsonNode tree() {
    return document;
  }

  private static SchemaRegistry registry(String iri, JsonNode document) {
    String text = JSON.writeValueAsString(document);
    SchemaRegistryConfig config =
        SchemaRegistryConfig.builder()
            .pathType(PathType.JSON_POINTER)
            // uuid and date-time are part of the contract: a client parses them.
            .formatAssertionsEnabled(true)
            .build();
    return SchemaRegistry.withDefaultDialect(
        OpenApi31.getInstance(),
        builder -> builder.schemaRegistryConfig(config).schemas(Map.of(iri, text)));
  }

  /** An operation of the document: its path template, method and the object describing it. */
  public record Operation(
      String template, String method, JsonNode node, JsonNode pathItem, Map<String, String> path) {}

  /**
   * The operation serving {@code method} on {@code path}; when several templates match, the one
   * with the most literal segments ({@code /api/noop/batch} before {@code /api/noop/{x}}). A HEAD
   * falls back to the GET the document describes.
   */
  public Optional<Operation> operation(String method, String path) {
    String m = method.toLowerCase(Locale.ROOT);
    Optional<Map.Entry<String, Map<String, String>>> item = pathItem(path);
    if (item.isEmpty()) {
      return Optional.empty();
    }
    JsonNode pathItem = document.path("paths").path(item.get().getKey());
    JsonNode op = pathItem.path(m);
    if (op.isMissingNode() && m.equals("head")) {
      m = "get"; // the operation (and its pointers) is the GET's
      op = pathItem.path(m);
    }
    if (!op.isObject()) {
      return Optional.empty();
    }
    return Optional.of(new Operation(item.get().getKey(), m, op, pathItem, item.get().getValue()));
  }

  /** Whether the document describes {@code path} under any method. */
  public boolean describes(String path) {
    return pathItem(path).isPresent();
  }

  private Optional<Map.Entry<String, Map<String, String>>> pathItem(String path) {
    String[] segments = path.split("/", -1);
    Map.Entry<String, Map<String, String>> best = null;
    int bestLiterals = -1;
    for (String template : document.path("paths").propertyNames()) {
      String[] parts = template.split("/", -1);
      if (parts.length != segments.length) {
        continue;
      }
      Map<String, String> values = new LinkedHashMap<>();
      int literals = 0;
      boolean matches = true;
      for (int i = 0; i < parts.length && matches; i++) {
        if (parts[i].startsWith("{") && parts[i].endsWith("}")) {
          matches = !segments[i].isEmpty();
          values.put(parts[i].substring(1, parts[i].length() - 1), segments[i]);
        } else {
          matches = parts[i].equals(segments[i]);
          literals++;
        }
      }
      if (matches && literals > bestLiterals) {
        best = Map.entry(template, values);
        bestLiterals = literals;
      }
    }
    return Optional.ofNullable(best);
  }

  /**
   * Moves every schema found outside {@code components/schemas} (of a media type, parameter or
   * header) into {@code components/schemas} under a made-up name, leaving a {@code $ref} in its
   * place. The validator is then only ever pointed at component schemas: a JSON pointer through
   * {@code /paths/~1api~1jobs~1{uid}} does not survive its IRI handling.
   */
  private static void hoistSchemas(JsonNode document) {
    ObjectNode components =
        document.path("components").isObject()
            ? (ObjectNode) document.get("components")
            : ((ObjectNode) document).putObject("components");
    ObjectNode target =
        components.path("schemas").isObject()
            ? (ObjectNode) components.get("schemas")
            : components.putObject("schemas");
    List<ObjectNode> holders = new ArrayList<>();
    collectSchemaHolders(document, holders);
    int n = 0;
    for (ObjectNode holder : holders) {
      JsonNode schema = holder.get("schema");
      if (schema.size() == 1 && schema.has("$ref")) {
        continue;
      }
      String name = "_contract_inline_" + n++;
      target.set(name, schema);
      holder.putObject("schema").put("$ref", "#/components/schemas/" + name);
    }
  }

  /** The objects (media types, parameters, headers) that hold a {@code schema} object. */
  private static void collectSchemaHolders(JsonNode node, List<ObjectNode> holders) {
    if (node.isArray()) {
      for (JsonNode child : node) {
        collectSchemaHolders(child, holders);
      }
      return;
    }
    if (!node.isObject()) {
      return;
    }
    if (node.path("schema").isObject()) {
      holders.add((ObjectNode) node);
    }
    for (Map.Entry<String, JsonNode> e : node.properties()) {
      String key = e.getKey();
      if (key.equals("example") || key.equals("examples") || key.equals("schema")) {
        continue;
      }
      if (key.equals("components")) {
        for (Map.Entry<String, JsonNode> section : e.getValue().properties()) {
          if (!section.getKey().equals("schemas")) {
            collectSchemaHolders(section.getValue(), holders);
          }
        }
        continue;
      }
      collectSchemaHolders(e.getValue(), holders);
    }
  }

  /** A node of the document and the JSON pointer where it is, after following any $ref. */
  public record Located(JsonNode node, String pointer) {}

  /** Follows {@code $ref} (to this document only) from {@code node} found at {@code pointer}. */
  public Located resolve(JsonNode node, String pointer) {
    for (int hops = 0; node.has("$ref") && hops < 20; hops++) {
      String ref = node.get("$ref").asString();
      if (!ref.startsWith("#")) {
        throw new IllegalStateException("Only local $refs are followed: " + ref);
      }
      pointer = ref.substring(1);
      node = document.at(pointer);
    }
    return new Located(node, pointer);
  }

  /** The JSON pointer of {@code key} under {@code parent}. */
  public static String child(String parent, String key) {
    return parent + "/" + key.replace("~", "~0").replace("/", "~1");
  }

  /**
   * The errors of {@code instance} against the schema at {@code pointer} (a schema object in this
   * document), read strictly for answers and as served for requests.
   */
  public List<Error> validate(String pointer, JsonNode instance, boolean answer) {
    String iri = answer ? STRICT_IRI : AS_SERVED_IRI;
    // Every schema outside components/schemas was moved there (hoistSchemas), so the location is
    // a plain component name: the validator resolves it, and the $refs inside, in the document.
    JsonNode node = document.at(pointer);
    String location =
        node.size() == 1 && node.path("$ref").asString("").startsWith("#/components/schemas/")
            ? node.get("$ref").asString()
            : "#" + pointer;
    Schema schema =
        schemas.computeIfAbsent(
            iri + location, key -> (answer ? strict : asServed).getSchema(SchemaLocation.of(key)));
    return schema.validate(instance);
  }

  /** Decodes one percent-encoded path segment or query component. */
  static String decode(String raw) {
    return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  /**
   * Adds {@code unevaluatedProperties: false} to every schema with {@code properties} that says
   * nothing of other fields, walking only where JSON Schema puts schemas (so an {@code example} or
   * a property that happens to be called {@code properties} is left alone). Schemas that are
   * members of an {@code allOf} are left open, since each member sees only its own fields; the
   * {@code allOf} holder gets the closing keyword only if it has properties of its own.
   */
  private static final class Strictener {
    private final JsonNode document;
    private final Set<String> allOfTargets = new HashSet<>();
    private final Set<JsonNode> seen =
        java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());

    Strictener(JsonNode document) {
      this.document = document;
    }

    void apply() {
      collectAllOfRefs(document);
      JsonNode components = document.path("components").path("schemas");
      for (Map.Entry<String, JsonNode> e : components.properties()) {
        schema(e.getValue(), allOfTargets.contains("#/components/schemas/" + e.getKey()));
      }
    }

    private void collectAllOfRefs(JsonNode node) {
      if (node.isObject()) {
        JsonNode allOf = node.get("allOf");
        if (allOf != null && allOf.isArray()) {
          for (JsonNode member : allOf) {
            if (member.has("$ref")) {
              allOfTargets.add(member.get("$ref").asString());
            }
          }
        }
      }
      for (JsonNode child : node.values()) {
        collectAllOfRefs(child);
      }
    }

    private void schema(JsonNode node, boolean inAllOf) {
      if (!node.isObject() || !seen.add(node)) {
        return;
      }
      ObjectNode schema = (ObjectNode) node;
      if (schema.path("properties").isObject()
          && !schema.has("additionalProperties")
          && !schema.has("unevaluatedProperties")
          && !inAllOf) {
        schema.put("unevaluatedProperties", false);
      }
      for (String key : List.of("properties", "patternProperties", "$defs", "dependentSchemas")) {
        for (JsonNode sub : schema.path(key).values()) {
          schema(sub, false);
        }
      }
      for (String key :
          List.of(
              "items",
              "additionalProperties",
              "not",
              "if",
              "then",
              "else",
              "contains",
              "propertyNames",
              "unevaluatedItems")) {
        schema(schema.path(key), false);
      }
      for (String key : List.of("prefixItems", "anyOf", "oneOf")) {
        for (JsonNode sub : schema.path(key)) {
          schema(sub, false);
        }
      }
      for (JsonNode sub : schema.path("allOf")) {
        schema(sub, true);
      }
    }
  }

  /** A JSON string node, for coercing parameter text. */
  static JsonNode text(String value) {
    return JsonNodeFactory.instance.stringNode(value);
  }

  /** A JSON array of {@code values}. */
  static ArrayNode array(List<JsonNode> values) {
    ArrayNode array = JsonNodeFactory.instance.arrayNode();
    values.forEach(array::add);
    return array;
  }
}
