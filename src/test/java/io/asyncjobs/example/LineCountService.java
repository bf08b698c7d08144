package io.asyncjobs.example;

import io.asyncjobs.api.PayloadCheck;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.files.Artifacts;
import io.asyncjobs.files.FileScope;
import io.asyncjobs.files.FileScopes;
import io.asyncjobs.files.Payloads;
import io.asyncjobs.queue.Job;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Counts the lines of text files in the caller's folder and writes a small report. */
@ApplicationScoped
public class LineCountService extends JobService implements PayloadCheck {

  private final FileScopes scopes;
  private final Artifacts artifacts;

  LineCountService(FileScopes scopes, Artifacts artifacts) {
    this.scopes = scopes;
    this.artifacts = artifacts;
  }

  @Override
  public String kind() {
    return "linecount";
  }

  @Override
  public String title() {
    return "Line counts";
  }

  // How POST /api/linecount, the route every kind gets, is described at /q/openapi.
  @Override
  public RouteDoc routeDoc() {
    return new RouteDoc(
        "Enqueue a line count",
        "Counts the lines of your text files.",
        "two files",
        "{\"paths\": [\"a.txt\", \"b.txt\"]}",
        """
        {"type": "object", "required": ["paths"], "additionalProperties": false,
         "properties": {"paths": {"type": "array", "minItems": 1, "maxItems": 100,
                                  "items": {"type": "string", "minLength": 1}}}}""",
        Map.of());
  }

  // The payload check, run at enqueue: what it refuses is a 400 and nothing is enqueued.
  @Override
  public Accepted check(FileScope scope, Map<String, Object> body) {
    Payloads.allowOnly(body, Set.of("paths"));
    for (String name : Payloads.strings(body, "paths", 1, 100)) {
      if (!Files.isRegularFile(scope.resolve(name))) {
        throw new IllegalArgumentException("no file \"" + name + "\" in your folder");
      }
    }
    return Accepted.files(body, "line-counts.txt");
  }

  @Override
  protected Map<String, Object> process(Job job) throws Exception {
    // The folder the enqueue endpoint recorded; every path is checked against it again here.
    FileScope scope = scopes.forJob(job);
    @SuppressWarnings("unchecked")
    List<String> paths = (List<String>) job.payload.get("paths");
    List<String> lines = new ArrayList<>();
    long bytesIn = 0;
    for (String name : paths) {
      Path file = scope.resolve(name);
      try (BufferedReader reader =
          new BufferedReader(
              new InputStreamReader(scope.openInputStream(file), StandardCharsets.UTF_8))) {
        lines.add(reader.lines().count() + " " + name);
      }
      bytesIn += Files.size(file);
      reportProgress((double) lines.size() / paths.size(), (long) lines.size());
    }
    Path report = artifacts.folder(kind(), job.uid).resolve("report.txt");
    // A name of this attempt's own, so a second attempt of the job never writes into it.
    Path partial = Artifacts.partial(report);
    try {
      Files.write(partial, lines, StandardCharsets.UTF_8);
      Artifacts.publish(partial, report);
    } finally {
      Files.deleteIfExists(partial); // gone once published; else this attempt's half file
    }
    return Map.of(
        RESULT_FILE,
        artifacts.relative(report),
        "item_count",
        paths.size(),
        "bytes_in",
        bytesIn,
        "bytes_out",
        Files.size(report));
  }

  @Override
  protected void cleanup(Job job) throws Exception {
    artifacts.remove(kind(), job.uid);
  }
}
