package io.asyncjobs.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.operations.JobView;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** How the commands print: JSON with the API's mapper, and the short forms the tables use. */
@ApplicationScoped
class Output {

  private final ObjectMapper json;

  Output(ObjectMapper json) {
    this.json = json;
  }

  /** The mapper the API writes its answers with. */
  ObjectMapper mapper() {
    return json;
  }

  /** {@code value} as one indented JSON document. */
  void printJson(Object value, PrintStream out) {
    try {
      out.println(json.writerWithDefaultPrettyPrinter().writeValueAsString(value));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code value} as JSON on one line. */
  String compactJson(Object value) {
    try {
      return json.writeValueAsString(value);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code KIND:ID}, or null for a job without an owner. */
  static String ownerText(JobView job) {
    return job.ownerKind() == null ? null : job.ownerKind() + ":" + job.ownerId();
  }

  /** An instant to the second, or null. */
  static String time(Instant instant) {
    return instant == null ? null : instant.truncatedTo(ChronoUnit.SECONDS).toString();
  }

  /** A number's digits, or null. */
  static String number(Long value) {
    return value == null ? null : value.toString();
  }

  /** {@code text} on one line, at most {@code max} characters. */
  static String oneLine(String text, int max) {
    if (text == null) {
      return null;
    }
    String line = text.replaceAll("\\s+", " ").strip();
    return line.length() > max ? line.substring(0, max - 3) + "..." : line;
  }
}
