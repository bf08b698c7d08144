package io.asyncjobs.testing;

/**
 * One way an HTTP exchange departs from the OpenAPI document the app serves: which operation
 * (method and path template, or the raw path when the document has no such route), the status
 * answered, where in the request or answer (a JSON pointer into the body, or {@code header:Name},
 * {@code query:name}...), what kind of departure (for grouping) and a sentence saying what is
 * wrong.
 */
public record ContractViolation(
    String method, String route, int status, String pointer, String kind, String message) {

  /** The line a failing test shows: method, path, status, pointer, what is wrong. */
  public String describe() {
    String at = pointer.isEmpty() ? "" : " at " + pointer;
    return method + " " + route + " -> " + status + at + " [" + kind + "]: " + message;
  }
}
