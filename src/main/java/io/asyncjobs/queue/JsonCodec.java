package io.asyncjobs.queue;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;

/**
 * Encodes and decodes the JSON the engine writes to and reads from {@code payload} and {@code
 * result}.
 */
public final class JsonCodec {

  private static final ObjectMapper MAPPER = new ObjectMapper().findAndRegisterModules();
  private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {};
  private static final TypeReference<List<Map<String, Object>>> LIST = new TypeReference<>() {};

  private JsonCodec() {}

  /** The JSON text of a map; null stays null. */
  public static String encode(Map<String, Object> value) {
    if (value == null) {
      return null;
    }
    try {
      return MAPPER.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not representable as JSON: " + e.getOriginalMessage(), e);
    }
  }

  /** The map a JSON object decodes to; null stays null. */
  public static Map<String, Object> decode(String json) {
    if (json == null) {
      return null;
    }
    try {
      return MAPPER.readValue(json, MAP);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("stored JSON is not an object: " + e.getOriginalMessage(), e);
    }
  }

  /** The list of objects a JSON array decodes to; null stays null. */
  public static List<Map<String, Object>> decodeList(String json) {
    if (json == null) {
      return null;
    }
    try {
      return MAPPER.readValue(json, LIST);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(
          "stored JSON is not an array of objects: " + e.getOriginalMessage(), e);
    }
  }
}
