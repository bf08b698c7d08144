package io.asyncjobs.example;

import io.asyncjobs.engine.JobService;
import io.asyncjobs.queue.Job;
import io.asyncjobs.storage.DataDirectory;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** Counts the lines of text files under the data directory and writes a small report. */
@ApplicationScoped
public class LineCountService extends JobService {

  private final DataDirectory data;

  LineCountService(DataDirectory data) {
    this.data = data;
  }

  @Override
  public String kind() {
    return "linecount";
  }

  @Override
  public String title() {
    return "Line counts";
  }

  @Override
  protected Map<String, Object> process(Job job) throws Exception {
    @SuppressWarnings("unchecked")
    List<String> paths = (List<String>) job.payload.get("paths");
    List<String> lines = new ArrayList<>();
    long bytesIn = 0;
    for (String name : paths) {
      Path file = data.root().resolve(name).normalize();
      if (!file.startsWith(data.root())) {
        throw new IllegalArgumentException("path leaves the data directory: " + name);
      }
      bytesIn += Files.size(file);
      try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
        lines.add(reader.lines().count() + " " + name);
      }
      reportProgress((double) lines.size() / paths.size(), (long) lines.size());
    }
    Path folder = Files.createDirectories(artifactFolder(job));
    Path report = Files.write(folder.resolve("report.txt"), lines, StandardCharsets.UTF_8);
    return Map.of(
        RESULT_FILE,
        data.root().relativize(report).toString(),
        "item_count",
        paths.size(),
        "bytes_in",
        bytesIn,
        "bytes_out",
        Files.size(report));
  }

  @Override
  protected void cleanup(Job job) throws Exception {
    Path folder = artifactFolder(job);
    if (Files.exists(folder)) {
      try (Stream<Path> tree = Files.walk(folder)) {
        for (Path p : tree.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
  }

  private Path artifactFolder(Job job) {
    return data.root().resolve("artifacts").resolve(kind()).resolve(job.uid.toString());
  }
}
