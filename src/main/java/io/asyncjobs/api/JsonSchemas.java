package io.asyncjobs.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.models.media.Schema;

/**
 * Turns a JSON Schema written as text (a kind's payload, {@link PayloadCheck.RouteDoc}) into the
 * OpenAPI model, so that each kind states the shape its check takes in the JSON a reader knows,
 * beside the check, rather than in builder calls.
 */
final class JsonSchemas {

  private static final ObjectMapper JSON = new ObjectMapper();

  private JsonSchemas() {}

  /** The schema {@code text} describes; a malformed text is a programming error. */
  static Schema parse(String text) {
    try {
      return schema(JSON.readTree(text));
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("not a JSON Schema: " + text, e);
    }
  }

  private static Schema schema(JsonNode node) {
    Schema schema = OASFactory.createSchema();
    for (Map.Entry<String, JsonNode> field : node.properties()) {
      JsonNode value = field.getValue();
      switch (field.getKey()) {
        case "type" -> {
          for (JsonNode type : value.isArray() ? value : List.of(value)) {
            schema.addType(Schema.SchemaType.valueOf(type.asText().toUpperCase(Locale.ROOT)));
          }
        }
        case "properties" ->
            value.properties().forEach(p -> schema.addProperty(p.getKey(), schema(p.getValue())));
        case "items" -> schema.items(schema(value));
        case "additionalProperties" -> {
          if (value.isBoolean()) {
            schema.additionalPropertiesBoolean(value.asBoolean());
          } else {
            schema.additionalPropertiesSchema(schema(value));
          }
        }
        case "required" -> value.forEach(name -> schema.addRequired(name.asText()));
        case "enum" -> value.forEach(option -> schema.addEnumeration(plain(option)));
        case "oneOf", "anyOf" -> {
          List<Schema> options = new ArrayList<>();
          value.forEach(option -> options.add(schema(option)));
          if (field.getKey().equals("oneOf")) {
            schema.oneOf(options);
          } else {
            schema.anyOf(options);
          }
        }
        case "$ref" -> schema.ref(value.asText());
        case "minLength" -> schema.minLength(value.asInt());
        case "maxLength" -> schema.maxLength(value.asInt());
        case "minItems" -> schema.minItems(value.asInt());
        case "maxItems" -> schema.maxItems(value.asInt());
        default -> schema.set(field.getKey(), plain(value));
      }
    }
    return schema;
  }

  /** A scalar keyword's value: numbers as BigDecimal, as the model keeps bounds. */
  private static Object plain(JsonNode value) {
    if (value.isNumber()) {
      return value.decimalValue();
    }
    if (value.isBoolean()) {
      return value.asBoolean();
    }
    if (value.isTextual()) {
      return value.asText();
    }
    return JSON.convertValue(value, Object.class);
  }
}
