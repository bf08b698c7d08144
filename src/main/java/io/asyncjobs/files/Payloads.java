package io.asyncjobs.files;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads and checks the fields of an enqueue payload. Each failure is an {@link
 * IllegalArgumentException} whose message names the field, for the 400 the caller gets.
 */
public final class Payloads {

  private Payloads() {}

  /**
   * The JSON Schema {@code pattern} of a string that is not blank ({@code \\S}, one character that
   * is not white space), escaped to sit inside a JSON string: the kinds' payload schemas ({@code
   * RouteDoc.payloadSchema}) give it to the fields {@link #string} refuses blank.
   */
  public static final String NOT_BLANK = "\\\\S";

  /** Refuses any key outside {@code allowed}, naming the allowed ones. */
  public static void allowOnly(Map<String, Object> payload, Set<String> allowed) {
    for (String key : payload.keySet()) {
      if (!allowed.contains(key)) {
        throw new IllegalArgumentException(
            "unknown field " + key + "; allowed: " + String.join(", ", new TreeSet<>(allowed)));
      }
    }
  }

  /** A required non-blank string of at most {@code maxLength} characters. */
  public static String string(Map<String, Object> payload, String key, int maxLength) {
    return optionalString(payload, key, maxLength)
        .orElseThrow(() -> new IllegalArgumentException(key + " is required"));
  }

  /** An optional non-blank string of at most {@code maxLength} characters. */
  public static Optional<String> optionalString(
      Map<String, Object> payload, String key, int maxLength) {
    Object value = payload.get(key);
    if (value == null) {
      return Optional.empty();
    }
    if (!(value instanceof String text) || text.isBlank() || text.length() > maxLength) {
      throw new IllegalArgumentException(
          key + " must be a non-empty string of at most " + maxLength + " characters");
    }
    return Optional.of(text);
  }

  /** A required list of {@code min} to {@code max} non-blank strings. */
  public static List<String> strings(Map<String, Object> payload, String key, int min, int max) {
    Object value = payload.get(key);
    if (!(value instanceof List<?> items) || items.size() < min || items.size() > max) {
      throw new IllegalArgumentException(
          key + " must be a list of " + min + " to " + max + " strings");
    }
    List<String> out = new ArrayList<>(items.size());
    for (Object item : items) {
      if (!(item instanceof String text) || text.isBlank()) {
        throw new IllegalArgumentException(key + " must hold non-empty strings only");
      }
      out.add(text);
    }
    return out;
  }

  /** An optional whole number from {@code min} to {@code max}. */
  public static Optional<Integer> optionalInt(
      Map<String, Object> payload, String key, int min, int max) {
    Object value = payload.get(key);
    if (value == null) {
      return Optional.empty();
    }
    if (!(value instanceof Number n)
        || n.doubleValue() != n.longValue()
        || n.longValue() < min
        || n.longValue() > max) {
      throw new IllegalArgumentException(
          key + " must be a whole number from " + min + " to " + max);
    }
    return Optional.of(n.intValue());
  }

  /** An optional boolean; {@code fallback} when absent. */
  public static boolean optionalBoolean(Map<String, Object> payload, String key, boolean fallback) {
    Object value = payload.get(key);
    if (value == null) {
      return fallback;
    }
    if (!(value instanceof Boolean flag)) {
      throw new IllegalArgumentException(key + " must be true or false");
    }
    return flag;
  }
}
