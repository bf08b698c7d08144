package io.asyncjobs.api;

import static io.asyncjobs.testing.Jobs.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.settings.SettingsStore;
import io.asyncjobs.testing.Database;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code max-pending-per-owner}: past it an enqueue is a 429 with {@code Retry-After} and adds
 * nothing, however many enqueue at once; other owners and admins are not held back; a batch is
 * admitted whole or refused whole.
 */
@QuarkusTest
class PendingQuotaApiTest {

  private static final String ALICE = Tokens.user("alice");
  private static final String BOB = Tokens.user("bob");
  private static final String ADMIN = Tokens.admin("root");

  @Inject Database db;
  @Inject SettingsStore settings;

  @BeforeEach
  void quota() throws InterruptedException {
    db.clearJobs();
    settings.update(NoopService.KIND, new SettingsOverride(null, null, null, null, null, 5, null));
    Thread.sleep(1100); // the enqueue path reads the quota at most once a second
  }

  @AfterEach
  void noQuota() {
    db.update("DELETE FROM service_settings");
  }

  @Test
  void shouldRefuseTheEnqueueThatGoesOverTheQuotaAndAddNothing() throws Exception {
    // Twenty enqueues at once: exactly five get in.
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<Integer>> answers = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      answers.add(
          pool.submit(
              () ->
                  as(ALICE)
                      .contentType(ContentType.JSON)
                      .body("{}")
                      .post("/api/noop")
                      .statusCode()));
    }
    int accepted = 0;
    int refused = 0;
    for (Future<Integer> answer : answers) {
      int status = answer.get();
      accepted += status == 202 ? 1 : 0;
      refused += status == 429 ? 1 : 0;
    }
    pool.shutdown();
    assertThat(accepted).isEqualTo(5);
    assertThat(refused).isEqualTo(15);
    assertThat(pendingOf("alice")).isEqualTo(5);

    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop")
        .then()
        .statusCode(429)
        .header("Retry-After", org.hamcrest.Matchers.matchesPattern("[1-9][0-9]*"))
        .body("type", equalTo("urn:async-jobs:problem:quota-exceeded"))
        .body("detail", containsString("may hold 5 pending noop job(s)"));
    // Another owner, and an admin, are not held back by alice's backlog.
    as(BOB).contentType(ContentType.JSON).body("{}").post("/api/noop").then().statusCode(202);
    for (int i = 0; i < 7; i++) {
      as(ADMIN).contentType(ContentType.JSON).body("{}").post("/api/noop").then().statusCode(202);
    }
    assertThat(pendingOf("alice")).isEqualTo(5);
  }

  @Test
  void shouldAdmitABatchWholeOrRefuseItWhole() {
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{\"jobs\": [{\"payload\": {}}, {\"payload\": {}}, {\"payload\": {}}]}")
        .post("/api/noop/batch")
        .then()
        .statusCode(202);
    as(ALICE)
        .contentType(ContentType.JSON)
        .body("{\"jobs\": [{\"payload\": {}}, {\"payload\": {}}, {\"payload\": {}}]}")
        .post("/api/noop/batch")
        .then()
        .statusCode(429)
        .body("detail", containsString("this would make 6"));
    assertThat(pendingOf("alice")).isEqualTo(3);
    // An idempotent replay adds nothing, so it is answered whatever the quota.
    for (int i = 0; i < 2; i++) {
      as(ALICE)
          .header("Idempotency-Key", "k-" + i)
          .contentType(ContentType.JSON)
          .body("{}")
          .post("/api/noop")
          .then()
          .statusCode(202);
    }
    as(ALICE)
        .header("Idempotency-Key", "k-0")
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop")
        .then()
        .statusCode(202)
        .header("Idempotent-Replayed", "true");
    as(ALICE)
        .header("Idempotency-Key", "k-9")
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/api/noop")
        .then()
        .statusCode(429);
    assertThat(pendingOf("alice")).isEqualTo(5);
  }

  private long pendingOf(String owner) {
    return ((Number)
            db.query(
                    "SELECT count(*) AS n FROM jobs WHERE kind = 'noop' AND owner_id = ?"
                        + " AND status = 'pending'",
                    owner)
                .get(0)
                .get("n"))
        .longValue();
  }
}
