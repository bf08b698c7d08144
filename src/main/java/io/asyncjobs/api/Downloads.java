package io.asyncjobs.api;

import io.asyncjobs.operations.JobView;
import io.asyncjobs.problem.Problem;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.JobReads;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.storage.DataDirectory;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.net.URLConnection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.resteasy.reactive.PathPart;

/**
 * Sends a job's artifact from the data directory: only the file its result names, only when it
 * resolves inside the data directory, with ranges, validators and a download name. The bytes go
 * from the file to the socket without passing through the heap ({@link PathPart} is sent with
 * sendfile).
 */
@ApplicationScoped
public class Downloads {

  private static final Pattern SINGLE_RANGE = Pattern.compile("bytes=(\\d*)-(\\d*)");

  private final DataDirectory data;
  private final JobReads reads;
  private final SettingsStore settings;

  Downloads(DataDirectory data, JobReads reads, SettingsStore settings) {
    this.data = data;
    this.reads = reads;
    this.settings = settings;
  }

  /** The response for a download of {@code job}, which the caller may see. */
  Response send(Job job, String range, String ifNoneMatch, String ifRange) {
    if (job.status != JobStatus.DONE) {
      throw ProblemException.conflict(
          "job-not-done",
          "Job not done",
          "job " + job.uid + " is " + job.status.dbValue() + "; only a done job has a download");
    }
    String artifact = JobView.artifact(job);
    if (artifact == null) {
      throw ProblemException.notFound("job " + job.uid + " made no file to download");
    }
    Path file = resolve(artifact);
    BasicFileAttributes attributes;
    try {
      attributes = Files.readAttributes(file, BasicFileAttributes.class);
    } catch (NoSuchFileException e) {
      throw gone(job);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + file, e);
    }
    if (!attributes.isRegularFile()) {
      throw gone(job);
    }
    long size = attributes.size();
    String etag =
        "\""
            + job.uid
            + "-"
            + Long.toHexString(size)
            + "-"
            + Long.toHexString(attributes.lastModifiedTime().toMillis())
            + "\"";
    boolean useRange = range != null && (ifRange == null || ifRange.trim().equals(etag));
    // A refused range throws here, before anything is written.
    long[] span = useRange ? span(range, size) : null;
    reads.touchJob(job.uid, settings.effective(job.kind).retention().toSeconds());

    if (ifNoneMatch != null && matches(ifNoneMatch, etag)) {
      return Response.notModified()
          .header(HttpHeaders.ETAG, etag)
          .header(HttpHeaders.CACHE_CONTROL, "private, no-cache")
          .build();
    }
    Response.ResponseBuilder response;
    if (span != null) {
      long length = span[1] - span[0] + 1;
      response =
          Response.status(206)
              .entity(new PathPart(file, span[0], length))
              .header("Content-Range", "bytes " + span[0] + "-" + span[1] + "/" + size)
              .header(HttpHeaders.CONTENT_LENGTH, length);
    } else {
      response = Response.ok(new PathPart(file, 0, size)).header(HttpHeaders.CONTENT_LENGTH, size);
    }
    return response
        .type(contentType(file))
        .header("Accept-Ranges", "bytes")
        .header(HttpHeaders.ETAG, etag)
        .header(HttpHeaders.CACHE_CONTROL, "private, no-cache")
        .header("X-Content-Type-Options", "nosniff")
        .header("Content-Disposition", contentDisposition(downloadName(job, file)))
        .build();
  }

  /**
   * The artifact's absolute path. The result is written by our own kinds, but it is still checked:
   * the path, and whatever its links point to, must stay inside the data directory.
   */
  private Path resolve(String artifact) {
    Path root = data.root();
    Path file = root.resolve(artifact).normalize();
    if (!file.startsWith(root) || file.equals(root)) {
      throw ProblemException.notFound("this job's file is outside the data directory");
    }
    try {
      Path real = file.toRealPath();
      if (!real.startsWith(root.toRealPath())) {
        throw ProblemException.notFound("this job's file is outside the data directory");
      }
      return real;
    } catch (NoSuchFileException e) {
      return file;
    } catch (IOException e) {
      throw new IllegalStateException("cannot resolve " + file, e);
    }
  }

  private static ProblemException gone(Job job) {
    return ProblemException.notFound("the file of job " + job.uid + " no longer exists");
  }

  /**
   * The first and last byte of a single satisfiable range, or null to send the whole file (no
   * range, several ranges, or a header this server does not understand, as RFC 9110 allows).
   *
   * @throws ProblemException 416 when the range lies wholly outside the file
   */
  static long[] span(String header, long size) {
    Matcher m = SINGLE_RANGE.matcher(header.trim());
    if (!m.matches() || (m.group(1).isEmpty() && m.group(2).isEmpty())) {
      return null;
    }
    try {
      long first;
      long last;
      if (m.group(1).isEmpty()) {
        long suffix = Long.parseLong(m.group(2));
        if (suffix == 0) {
          throw unsatisfiable(size);
        }
        if (size == 0) {
          // A suffix of an empty file is satisfiable: the whole (empty) file.
          return null;
        }
        first = Math.max(0, size - suffix);
        last = size - 1;
      } else {
        first = Long.parseLong(m.group(1));
        last = m.group(2).isEmpty() ? size - 1 : Math.min(Long.parseLong(m.group(2)), size - 1);
        if (!m.group(2).isEmpty() && Long.parseLong(m.group(2)) < first) {
          return null;
        }
      }
      if (first >= size || size == 0) {
        throw unsatisfiable(size);
      }
      return new long[] {first, last};
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static ProblemException unsatisfiable(long size) {
    return new ProblemException(
        Problem.of(
            416,
            "range-not-satisfiable",
            "Range not satisfiable",
            "the file has " + size + " bytes; the range lies outside them"),
        Map.of("Content-Range", "bytes */" + size));
  }

  private static boolean matches(String ifNoneMatch, String etag) {
    for (String candidate : ifNoneMatch.split(",")) {
      String tag = candidate.trim();
      if (tag.startsWith("W/")) {
        tag = tag.substring(2);
      }
      if (tag.equals("*") || tag.equals(etag)) {
        return true;
      }
    }
    return false;
  }

  private static String contentType(Path file) {
    String name = file.getFileName().toString().toLowerCase(java.util.Locale.ROOT);
    if (name.endsWith(".zip")) {
      return "application/zip";
    }
    if (name.endsWith(".json")) {
      return "application/json";
    }
    if (name.endsWith(".csv")) {
      return "text/csv; charset=utf-8";
    }
    if (name.endsWith(".txt") || name.endsWith(".md")) {
      return "text/plain; charset=utf-8";
    }
    String guessed = URLConnection.guessContentTypeFromName(name);
    // HTML or SVG from an artifact must never render inline on our origin.
    if (guessed == null || guessed.contains("html") || guessed.contains("svg")) {
      return "application/octet-stream";
    }
    return guessed;
  }

  /** The preferred name when the job has one, else the artifact's own file name. */
  private static String downloadName(Job job, Path file) {
    String name = job.preferredName;
    if (name == null || name.isBlank()) {
      return file.getFileName().toString();
    }
    return name;
  }

  /**
   * {@code attachment} with an ASCII {@code filename} for old clients (other characters become
   * underscores) and the exact name as a UTF-8 {@code filename*} (RFC 6266), which clients prefer.
   */
  static String contentDisposition(String name) {
    String clean = name.replaceAll("[\\p{Cntrl}/\\\\]", "_").strip();
    if (clean.isEmpty()) {
      clean = "download";
    }
    StringBuilder ascii = new StringBuilder();
    clean
        .codePoints()
        .forEach(cp -> ascii.append(cp >= 0x20 && cp < 0x7f && cp != '"' ? (char) cp : '_'));
    return "attachment; filename=\"" + ascii + "\"; filename*=UTF-8''" + percentEncode(clean);
  }

  private static String percentEncode(String text) {
    StringBuilder out = new StringBuilder();
    for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      boolean attrChar =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || "!#$&+-.^_`|~".indexOf(c) >= 0;
      if (attrChar) {
        out.append((char) c);
      } else {
        out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)));
        out.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return out.toString();
  }
}
