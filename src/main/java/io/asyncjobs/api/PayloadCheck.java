package io.asyncjobs.api;

import io.asyncjobs.files.FileScope;
import java.io.IOException;
import java.util.Map;

/**
 * How a kind takes what a caller sends to {@code POST /api/<kind>}: its payload check, declared
 * once, on the kind's service, and the description of its route. {@link KindsResource} serves that
 * route for every kind that implements this, through {@link Enqueuer#accept}. A kind that reads the
 * caller's files checks the paths against the caller's scope here and again in {@code process}
 * (through the same methods), since the files may change in between.
 */
public interface PayloadCheck {

  /** The kind the checked payloads are enqueued as. */
  String kind();

  /** How the kind's route is described at {@code /q/openapi}. */
  RouteDoc routeDoc();

  /**
   * Checks a request body and says what to store.
   *
   * @param scope what the caller may name: its own folder, or all of {@code files/} for an admin
   * @param body the JSON object the caller sent
   * @throws IllegalArgumentException (a {@code PathRefusedException} too) for a 400 naming the
   *     problem; a {@link io.asyncjobs.problem.ProblemException} passes through as it is
   * @throws IOException when the caller's files cannot be read
   */
  Accepted check(FileScope scope, Map<String, Object> body) throws IOException;

  /**
   * The description of a kind's {@code POST /api/<kind>}; the answers every kind shares are added
   * by {@link KindOperationsFilter}.
   *
   * @param summary one line
   * @param description what the job does and leaves to download
   * @param exampleName the name of the example request
   * @param example an example request body, also shown to a caller who sent none
   * @param payloadSchema the JSON Schema (2020-12, as OpenAPI 3.1 takes it) of the request body,
   *     kept beside {@link #check}: what the document says the check takes
   * @param extraAnswers answers of this kind's beyond the shared ones: status code to description
   */
  record RouteDoc(
      String summary,
      String description,
      String exampleName,
      String example,
      String payloadSchema,
      Map<String, String> extraAnswers) {}

  /**
   * What a check made of a request body.
   *
   * @param payload the fields to store as the job's input
   * @param preferredName the download's file name, or null
   * @param readsFiles whether the job reads the caller's files: the caller's scope is then recorded
   *     in the payload, for {@code process} to resolve the same paths in
   */
  record Accepted(Map<String, Object> payload, String preferredName, boolean readsFiles) {

    /** A payload of a kind that reads the caller's files. */
    public static Accepted files(Map<String, Object> payload, String preferredName) {
      return new Accepted(payload, preferredName, true);
    }

    /** A payload of a kind that reads no caller's files. */
    public static Accepted plain(Map<String, Object> payload, String preferredName) {
      return new Accepted(payload, preferredName, false);
    }
  }
}
