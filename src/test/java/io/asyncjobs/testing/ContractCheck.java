package io.asyncjobs.testing;

import com.networknt.schema.Error;
import io.asyncjobs.testing.ContractDocument.Located;
import io.asyncjobs.testing.ContractDocument.Operation;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * Holds one HTTP exchange against a {@link ContractDocument} and lists how it departs from it:
 *
 * <ul>
 *   <li>the route and method are in the document (a 404 or 405 to a route it lacks is fine: the
 *       test asked for a bad path on purpose);
 *   <li>the status is declared for the operation (or {@code default}, or {@code 2XX}-style);
 *   <li>the answer's Content-Type is one the declared response lists, a body is sent only where
 *       content is declared (and one is sent where it is, but for 204/304), and a JSON body
 *       validates against that media type's schema, read strictly (see {@link ContractDocument});
 *   <li>the headers a client acts on ({@link #MEANINGFUL_HEADERS}) are declared on the response;
 *   <li>a request the document refuses (a declared parameter of the wrong type or out of bounds, a
 *       missing required one, a body its schema refuses) is answered 4xx: a 2xx means the server
 *       accepts what a generated client is told it may not send.
 * </ul>
 *
 * Bodies of event streams and binary downloads are not read: their content type is checked only.
 */
public final class ContractCheck {

  /** Answer headers a client reads and so must find in the document. Transport ones are not. */
  static final Set<String> MEANINGFUL_HEADERS =
      Set.of(
          "location",
          "retry-after",
          "idempotent-replayed",
          "content-range",
          "etag",
          "content-disposition",
          "allow",
          "accept-ranges",
          "last-modified",
          "cache-control",
          "www-authenticate");

  /**
   * One exchange as the client saw it. Header maps are keyed in lower case; {@code requestBody} is
   * null when none was sent, and {@code requestBodyOpaque} says one was sent that cannot be read
   * back (a stream, a file); {@code responseBody} is read only when needed.
   */
  public record Exchange(
      String method,
      String path,
      Map<String, List<String>> query,
      Map<String, List<String>> requestHeaders,
      String requestBody,
      boolean requestBodyOpaque,
      int status,
      Map<String, List<String>> responseHeaders,
      Supplier<byte[]> responseBody) {

    String requestContentType() {
      return first(requestHeaders, "content-type");
    }

    String responseContentType() {
      return first(responseHeaders, "content-type");
    }

    private static String first(Map<String, List<String>> headers, String name) {
      List<String> values = headers.get(name);
      return values == null || values.isEmpty() ? null : values.get(0);
    }
  }

  private final ContractDocument document;

  /** A check against {@code document}. */
  public ContractCheck(ContractDocument document) {
    this.document = document;
  }

  /** The violations of {@code exchange}; empty when it keeps to the document. */
  public List<ContractViolation> check(Exchange exchange) {
    List<ContractViolation> found = new ArrayList<>();
    Optional<Operation> operation = document.operation(exchange.method(), exchange.path());
    if (operation.isEmpty()) {
      int status = exchange.status();
      if (status != 404 && status != 405) {
        String what =
            document.describes(exchange.path())
                ? "the document describes this path but not this method"
                : "the document has no such route";
        found.add(
            new ContractViolation(
                exchange.method(),
                exchange.path(),
                status,
                "",
                "undocumented-route",
                what + ", yet it answered " + status));
      }
      return found;
    }
    Operation op = operation.get();
    Reporter report = new Reporter(exchange, op, found);
    List<String> refused = requestRefusals(exchange, op);
    if (!refused.isEmpty() && exchange.status() >= 200 && exchange.status() < 300) {
      for (String why : refused) {
        report.add(
            why.substring(0, why.indexOf('|')),
            "accepted-invalid-request",
            "the document refuses this request ("
                + why.substring(why.indexOf('|') + 1)
                + ") yet it was answered "
                + exchange.status());
      }
    }
    checkAnswer(exchange, op, report);
    return found;
  }

  // ---- requests ----

  /** Why the document refuses the request, as "pointer|reason" lines; empty when it accepts it. */
  private List<String> requestRefusals(Exchange exchange, Operation op) {
    List<String> refused = new ArrayList<>();
    String opPointer =
        ContractDocument.child(ContractDocument.child("/paths", op.template()), op.method());
    for (Located parameter : parameters(op, opPointer)) {
      JsonNode p = parameter.node();
      String name = p.path("name").asString();
      String in = p.path("in").asString();
      List<String> values =
          switch (in) {
            case "path" ->
                op.path().containsKey(name)
                    ? List.of(ContractDocument.decode(op.path().get(name)))
                    : List.of();
            case "query" -> exchange.query().getOrDefault(name, List.of());
            case "header" ->
                Set.of("accept", "content-type", "authorization")
                        .contains(name.toLowerCase(Locale.ROOT))
                    ? List.of() // OpenAPI ignores these as parameters
                    : exchange
                        .requestHeaders()
                        .getOrDefault(name.toLowerCase(Locale.ROOT), List.of());
            default -> List.of();
          };
      if (values.isEmpty()) {
        if (p.path("required").asBoolean(false)) {
          refused.add(in + ":" + name + "|required " + in + " parameter " + name + " is missing");
        }
        continue;
      }
      String schemaPointer = parameter.pointer() + "/schema";
      JsonNode schema = p.path("schema");
      if (schema.isMissingNode()) {
        continue;
      }
      JsonNode value = coerce(values, document.resolve(schema, schemaPointer).node());
      for (Error error : document.validate(schemaPointer, value, false)) {
        refused.add(
            in
                + ":"
                + name
                + "|"
                + in
                + " parameter "
                + name
                + "="
                + values
                + ": "
                + error.getMessage());
      }
    }
    requestBodyRefusals(exchange, op, opPointer, refused);
    return refused;
  }

  private void requestBodyRefusals(
      Exchange exchange, Operation op, String opPointer, List<String> refused) {
    boolean sent = exchange.requestBody() != null || exchange.requestBodyOpaque();
    if (!op.node().has("requestBody")) {
      if (sent && exchange.requestBody() != null && !exchange.requestBody().isEmpty()) {
        refused.add("body|the operation declares no request body, one was sent");
      }
      return;
    }
    Located body = document.resolve(op.node().get("requestBody"), opPointer + "/requestBody");
    if (!sent || (exchange.requestBody() != null && exchange.requestBody().isEmpty())) {
      if (body.node().path("required").asBoolean(false)) {
        refused.add("body|the request body is required, none was sent");
      }
      return;
    }
    String contentType = exchange.requestContentType();
    Optional<String> mediaType = mediaType(body.node().path("content"), contentType);
    if (mediaType.isEmpty()) {
      refused.add("body|request Content-Type " + contentType + " is not one the operation accepts");
      return;
    }
    if (exchange.requestBody() == null || !isJson(mediaType.get())) {
      return;
    }
    String schemaPointer =
        ContractDocument.child(body.pointer() + "/content", mediaType.get()) + "/schema";
    if (document.tree().at(schemaPointer).isMissingNode()) {
      return;
    }
    JsonNode instance;
    try {
      instance = ContractDocument.JSON.readTree(exchange.requestBody());
    } catch (JacksonException e) {
      refused.add("body|the request body is not JSON");
      return;
    }
    for (Error error : document.validate(schemaPointer, instance, false)) {
      refused.add(pointerOf(error) + "|request body: " + error.getMessage());
    }
  }

  /** The operation's parameters with the path item's, the operation's winning on name and place. */
  private List<Located> parameters(Operation op, String opPointer) {
    Map<String, Located> byKey = new LinkedHashMap<>();
    String itemPointer = ContractDocument.child("/paths", op.template());
    addParameters(op.pathItem().path("parameters"), itemPointer + "/parameters", byKey);
    addParameters(op.node().path("parameters"), opPointer + "/parameters", byKey);
    return new ArrayList<>(byKey.values());
  }

  private void addParameters(JsonNode list, String pointer, Map<String, Located> byKey) {
    int i = 0;
    for (JsonNode p : list) {
      Located parameter = document.resolve(p, pointer + "/" + i++);
      byKey.put(
          parameter.node().path("in").asString() + ":" + parameter.node().path("name").asString(),
          parameter);
    }
  }

  /** Parameter text as the JSON value its schema's type asks for (left as text if it won't go). */
  private static JsonNode coerce(List<String> values, JsonNode schema) {
    if (types(schema).contains("array")) {
      List<JsonNode> items = new ArrayList<>();
      for (String v : values) {
        for (String part : v.split(",", -1)) {
          items.add(scalar(part, schema.path("items")));
        }
      }
      return ContractDocument.array(items);
    }
    return scalar(values.get(0), schema);
  }

  private static JsonNode scalar(String value, JsonNode schema) {
    Set<String> types = types(schema);
    JsonNodeFactory json = JsonNodeFactory.instance;
    try {
      if (types.contains("integer")) {
        return json.numberNode(new java.math.BigInteger(value.trim()));
      }
      if (types.contains("number")) {
        return json.numberNode(new java.math.BigDecimal(value.trim()));
      }
    } catch (NumberFormatException e) {
      return ContractDocument.text(value);
    }
    if (types.contains("boolean") && (value.equals("true") || value.equals("false"))) {
      return json.booleanNode(Boolean.parseBoolean(value));
    }
    return ContractDocument.text(value);
  }

  private static Set<String> types(JsonNode schema) {
    JsonNode type = schema.path("type");
    if (type.isString()) {
      return Set.of(type.asString());
    }
    Set<String> types = new java.util.HashSet<>();
    for (JsonNode t : type) {
      types.add(t.asString());
    }
    return types;
  }

  // ---- answers ----

  private void checkAnswer(Exchange exchange, Operation op, Reporter report) {
    String responsesPointer =
        ContractDocument.child(ContractDocument.child("/paths", op.template()), op.method())
            + "/responses";
    JsonNode responses = op.node().path("responses");
    String status = Integer.toString(exchange.status());
    String key =
        responses.has(status)
            ? status
            : responses.has(status.charAt(0) + "XX")
                ? status.charAt(0) + "XX"
                : responses.has("default") ? "default" : null;
    if (key == null) {
      report.add(
          "",
          "undeclared-status",
          "status " + status + " is not declared (declared: " + responses.propertyNames() + ")");
      return;
    }
    Located response =
        document.resolve(responses.get(key), ContractDocument.child(responsesPointer, key));
    checkHeaders(exchange, response, report);
    checkBody(exchange, op, response, report);
  }

  private void checkHeaders(Exchange exchange, Located response, Reporter report) {
    Set<String> declared = new java.util.HashSet<>();
    for (String name : response.node().path("headers").propertyNames()) {
      declared.add(name.toLowerCase(Locale.ROOT));
    }
    for (String name : exchange.responseHeaders().keySet()) {
      if (MEANINGFUL_HEADERS.contains(name) && !declared.contains(name)) {
        report.add(
            "header:" + name,
            "undeclared-header",
            "header " + name + " is sent but not declared on this response");
      }
    }
  }

  private void checkBody(Exchange exchange, Operation op, Located response, Reporter report) {
    JsonNode content = response.node().path("content");
    boolean declaresContent = content.isObject() && !content.isEmpty();
    String contentType = exchange.responseContentType();
    String essence = essence(contentType);
    boolean streamOrBinary =
        essence != null && (essence.equals("text/event-stream") || isBinary(essence));
    byte[] body = null;
    boolean empty;
    boolean head = exchange.method().equalsIgnoreCase("HEAD");
    if (head) {
      empty = true;
    } else if (streamOrBinary) {
      // Not read: an event stream may not end, a download may be large.
      List<String> length = exchange.responseHeaders().get("content-length");
      empty = length != null && !length.isEmpty() && length.get(0).trim().equals("0");
    } else {
      body = exchange.responseBody().get();
      empty = body == null || body.length == 0;
    }
    int status = exchange.status();
    if (empty) {
      // An empty file under '*/*' is a body; an empty answer where only JSON is declared is not.
      boolean onlyJson = true;
      for (String key : content.propertyNames()) {
        onlyJson &= isJson(essence(key));
      }
      if (declaresContent && onlyJson && status != 204 && status != 304 && !head) {
        report.add(
            "",
            "missing-body",
            "declares content " + content.propertyNames() + " but no body was sent");
      }
      return;
    }
    if (!declaresContent) {
      report.add(
          "",
          "undeclared-body",
          "a body (" + contentType + ") was sent but the response declares no content");
      return;
    }
    Optional<String> mediaType = mediaType(content, contentType);
    if (mediaType.isEmpty()) {
      report.add(
          "header:content-type",
          "undeclared-content-type",
          "Content-Type " + contentType + " is not among the declared " + content.propertyNames());
      return;
    }
    if (streamOrBinary || !isJson(essence) || !isJson(essence(mediaType.get()))) {
      return; // a JSON file downloaded under '*/*' is the user's data, not an API body
    }
    String schemaPointer =
        ContractDocument.child(response.pointer() + "/content", mediaType.get()) + "/schema";
    if (document.tree().at(schemaPointer).isMissingNode()) {
      report.add(
          "", "no-schema", "a JSON body is declared without a schema (" + mediaType.get() + ")");
      return;
    }
    JsonNode instance;
    try {
      instance = ContractDocument.JSON.readTree(new String(body, StandardCharsets.UTF_8));
    } catch (JacksonException e) {
      report.add("", "not-json", "the body is not JSON: " + e.getOriginalMessage());
      return;
    }
    for (Error error : document.validate(schemaPointer, instance, true)) {
      report.add(pointerOf(error), kindOf(error), error.getMessage());
    }
  }

  // ---- helpers ----

  /** The declared media type (a key of {@code content}) that {@code contentType} falls under. */
  private static Optional<String> mediaType(JsonNode content, String contentType) {
    String essence = essence(contentType);
    if (essence == null) {
      essence = "";
    }
    String wildcard =
        essence.contains("/") ? essence.substring(0, essence.indexOf('/')) + "/*" : "";
    String exact = null;
    String partial = null;
    String any = null;
    for (String key : content.propertyNames()) {
      String declared = essence(key);
      if (declared.equals(essence)) {
        exact = key;
      } else if (declared.equals(wildcard)) {
        partial = key;
      } else if (declared.equals("*/*")) {
        any = key;
      }
    }
    return Optional.ofNullable(exact != null ? exact : partial != null ? partial : any);
  }

  /** The type/subtype of a Content-Type, lower case, without parameters; null if absent. */
  static String essence(String contentType) {
    if (contentType == null) {
      return null;
    }
    int semicolon = contentType.indexOf(';');
    return (semicolon < 0 ? contentType : contentType.substring(0, semicolon))
        .trim()
        .toLowerCase(Locale.ROOT);
  }

  private static boolean isJson(String essence) {
    return essence.equals("application/json") || essence.endsWith("+json");
  }

  private static boolean isBinary(String essence) {
    return essence.equals("application/octet-stream")
        || essence.equals("application/zip")
        || essence.equals("application/gzip")
        || essence.equals("application/pdf")
        || essence.startsWith("image/")
        || essence.startsWith("audio/")
        || essence.startsWith("video/");
  }

  private static String pointerOf(Error error) {
    String at = error.getInstanceLocation() == null ? "" : error.getInstanceLocation().toString();
    if (error.getProperty() != null
        && ("unevaluatedProperties".equals(error.getKeyword())
            || "additionalProperties".equals(error.getKeyword())
            || "required".equals(error.getKeyword()))
        && !at.endsWith("/" + error.getProperty())) {
      at = at + "/" + error.getProperty();
    }
    return at.isEmpty() ? "/" : at;
  }

  /** A short name of what went wrong, for grouping violations. */
  private static String kindOf(Error error) {
    String keyword = error.getKeyword() == null ? "schema" : error.getKeyword();
    return switch (keyword) {
      case "unevaluatedProperties", "additionalProperties" -> "undeclared-field";
      case "required" -> "missing-field";
      case "type" ->
          error.getInstanceNode() != null && error.getInstanceNode().isNull()
              ? "null-not-allowed"
              : "wrong-type";
      default -> keyword;
    };
  }

  /** Adds violations of one exchange with its method, route and status filled in. */
  private record Reporter(Exchange exchange, Operation op, List<ContractViolation> found) {
    void add(String pointer, String kind, String message) {
      found.add(
          new ContractViolation(
              exchange.method().toUpperCase(Locale.ROOT),
              op.template(),
              exchange.status(),
              pointer,
              kind,
              message));
    }
  }
}
