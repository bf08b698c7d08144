package io.asyncjobs.kinds.seo;

import static io.restassured.RestAssured.given;

import io.asyncjobs.files.FileScope;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Tokens;
import io.restassured.response.Response;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/** Generated sites, requests and downloads for the tests of the seo and seo_meta kinds. */
public final class SeoFixtures {

  /** A caller with a folder of its own, fresh for each test. */
  public record Owner(String id, String token, Path folder) {}

  private SeoFixtures() {}

  /** A new owner with an empty folder under {@code files/}. */
  public static Owner newOwner(Path dataRoot) {
    String id = "seo-" + UUID.randomUUID();
    Path folder =
        FileScope.ofOwner(dataRoot, new io.asyncjobs.queue.Owner("user", id)).ensureBase();
    return new Owner(id, Tokens.user(id), folder);
  }

  /** Writes {@code html} to {@code folder/path}, creating folders. */
  public static Path write(Path folder, String path, String html) throws IOException {
    Path file = folder.resolve(path);
    Files.createDirectories(file.getParent());
    return Files.writeString(file, html, StandardCharsets.UTF_8);
  }

  /** The status view of a job. */
  public static Response status(String token, String uid) {
    return given().auth().oauth2(token).get("/api/jobs/" + uid);
  }

  /** Downloads the job's file through its signed link, without a token. */
  public static byte[] download(String token, String uid) {
    String link =
        status(token, uid).then().statusCode(200).extract().path("download_url").toString();
    return given().get(link).then().statusCode(200).extract().asByteArray();
  }

  /** The entries of a zip by name. */
  public static Map<String, byte[]> unzip(byte[] zip) throws IOException {
    Map<String, byte[]> entries = new LinkedHashMap<>();
    try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(zip))) {
      for (ZipEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
        entries.put(e.getName(), in.readAllBytes());
      }
    }
    return entries;
  }

  /** How many jobs the owner has. */
  public static long jobsOf(Database db, Owner owner) {
    return ((Number)
            db.query("SELECT count(*) AS n FROM jobs WHERE owner_id = ?", owner.id())
                .get(0)
                .get("n"))
        .longValue();
  }
}
