package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The claim's functions keep the plans they make on a session's first call (V28), rather than
 * planning their statements again on every claim. The plan cache planned them anew while a plan for
 * the call's own values looked cheaper than the generic one (one address in the array against the
 * ten a generic plan assumes): about 70 us of a one-job claim. A kept plan lives in the session's
 * memory as a "CachedPlan" context named by its statement; one made for a single call does not
 * stay.
 */
@QuarkusTest
class ClaimPlansKeptTest {

  @Inject Database db;

  @Test
  void shouldKeepTheClaimFunctionsPlansFromTheirFirstCall() throws Exception {
    // A session of its own: a pooled one may have made the plans in an earlier test.
    try (Connection c = db.newSession();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      try {
        s.execute(
            "INSERT INTO jobs (uid, kind, status, owner_kind, owner_id, payload, created_at,"
                + " updated_at, expires_at) SELECT gen_random_uuid(), 'plans_kept_test',"
                + " 'pending', 'user', 'bob', '{}', now(), now(), now() FROM generate_series(1, 3)");
        // One call each, as a session's first claim and a fair claim's first lock make them.
        s.execute(
            "SELECT count(*) FROM jobs_start_tids(ARRAY(SELECT jobs_due_for_claim_tids("
                + "'plans_kept_test', 'all', -32767::smallint,"
                + " '00000000-0000-0000-0000-000000000000', 1)), now(), 1)");
        s.execute(
            "SELECT count(*) FROM jobs_lock_pending_tids(ARRAY(SELECT ctid FROM jobs"
                + " WHERE kind = 'plans_kept_test' AND status = 'pending'))");

        List<String> kept = new ArrayList<>();
        try (ResultSet rs =
            s.executeQuery(
                "SELECT regexp_replace(ident, '\\s+', ' ', 'g') FROM pg_backend_memory_contexts"
                    + " WHERE name = 'CachedPlan' AND ident IS NOT NULL")) {
          while (rs.next()) {
            kept.add(rs.getString(1));
          }
        }
        assertThat(kept)
            .as("the walk")
            .anyMatch(q -> q.startsWith("SELECT j.ctid FROM jobs j WHERE j.kind = p_kind"));
        assertThat(kept)
            .as("the update")
            .anyMatch(q -> q.startsWith("UPDATE jobs SET status = 'running'"));
        assertThat(kept)
            .as("the fair claim's lock")
            .anyMatch(q -> q.startsWith("SELECT j.ctid FROM jobs j WHERE j.ctid = ANY (p_tids)"));
      } finally {
        c.rollback();
        c.setAutoCommit(true);
      }
    }
  }
}
