package io.asyncjobs.files;

import static io.asyncjobs.testing.Jobs.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;

import io.asyncjobs.queue.Owner;
import io.asyncjobs.storage.DataDirectory;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Whose folder a caller's paths, and a job's, are resolved in. */
@QuarkusTest
class FileScopesTest {

  @Inject DataDirectory data;
  @Inject Database db;
  @Inject FileScopes scopes;

  @BeforeEach
  void clean() {
    db.clearJobs();
  }

  @Test
  void shouldKeepTheFilesOfAUserAndAServiceWithTheSameIdApart() throws Exception {
    String id = "twin-" + UUID.randomUUID();
    Path users = FileScope.ofOwner(data.root(), new Owner("user", id)).ensureBase();
    Files.writeString(users.resolve("secret.txt"), "the user's");
    String body = "{\"paths\": [\"secret.txt\"]}";

    post(Tokens.ofKind("user", id), "zip", body).then().statusCode(202);
    post(Tokens.ofKind("service", id), "zip", body)
        .then()
        .statusCode(400)
        .body("detail", containsString("no file or folder \"secret.txt\""));

    assertThat(db.query("SELECT owner_kind FROM jobs"))
        .containsExactly(java.util.Map.of("owner_kind", "user"));
  }
}
