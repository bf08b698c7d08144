package io.asyncjobs.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.testing.Database;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

@QuarkusTest
class JobsMigrationTest {

  @Inject Database db;

  @Test
  void shouldCreateExactlyTheSpecColumnsWithTheirTypes() {
    Map<String, String> columns =
        db
            .query(
                // Columns added later for features beyond the spec follow these twenty.
                "SELECT column_name, data_type FROM information_schema.columns"
                    + " WHERE table_name = 'jobs' AND ordinal_position <= 20"
                    + " ORDER BY ordinal_position")
            .stream()
            .collect(
                Collectors.toMap(
                    r -> (String) r.get("column_name"),
                    r -> (String) r.get("data_type"),
                    (a, b) -> a,
                    LinkedHashMap::new));

    Map<String, String> expected = new LinkedHashMap<>();
    expected.put("uid", "uuid");
    expected.put("kind", "text");
    expected.put("status", "text");
    expected.put("owner_kind", "text");
    expected.put("owner_id", "text");
    expected.put("preferred_name", "text");
    expected.put("payload", "jsonb");
    expected.put("result", "jsonb");
    expected.put("error", "text");
    expected.put("retry_count", "integer");
    expected.put("created_at", "timestamp with time zone");
    expected.put("started_at", "timestamp with time zone");
    expected.put("completed_at", "timestamp with time zone");
    expected.put("updated_at", "timestamp with time zone");
    expected.put("duration_ms", "bigint");
    expected.put("last_accessed_at", "timestamp with time zone");
    expected.put("expires_at", "timestamp with time zone");
    expected.put("bytes_in", "bigint");
    expected.put("bytes_out", "bigint");
    expected.put("item_count", "bigint");
    assertThat(columns).containsExactlyEntriesOf(expected);
  }

  @Test
  void shouldMakeUidThePrimaryKey() {
    List<Map<String, Object>> pk =
        db.query(
            "SELECT a.attname FROM pg_index i"
                + " JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)"
                + " WHERE i.indrelid = 'jobs'::regclass AND i.indisprimary");
    assertThat(pk).extracting(r -> r.get("attname")).containsExactly("uid");
  }

  @Test
  void shouldCreateTheSpecIndexesAndThePartialClaimIndex() {
    Map<String, String> indexes =
        db.query("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'jobs'").stream()
            .collect(
                Collectors.toMap(
                    r -> (String) r.get("indexname"), r -> (String) r.get("indexdef")));

    // The spec's three: (kind, status), (owner_kind, owner_id) and expires_at, each ending in what
    // its lookups page or sort by (V9): expiry applies to finished jobs only, and the sweep reads
    // one kind's at a time.
    assertThat(indexes.get("jobs_kind_status_idx")).endsWith("USING btree (kind, status, uid)");
    assertThat(indexes.get("jobs_owner_uid_idx"))
        .endsWith("USING btree (owner_kind, owner_id, uid)");
    assertThat(indexes.get("jobs_expiry_idx"))
        .endsWith(
            "USING btree (kind, expires_at)"
                + " WHERE (status = ANY (ARRAY['done'::text, 'failed'::text]))");
    assertThat(indexes).doesNotContainKeys("jobs_owner_idx", "jobs_expires_at_idx");
    // Superseded claim indexes that no release in service reads, dropped (V25): V1's by kind
    // alone and V14's fair one in the database's collation.
    assertThat(indexes).doesNotContainKeys("jobs_pending_claim_idx", "jobs_fair_claim_idx");
    // One shard's pending rows of a kind in uid order (V11), which the loose scan of the active
    // shards walks.
    assertThat(indexes.get("jobs_pending_shard_claim_idx"))
        .endsWith("USING btree (kind, shard, uid) WHERE (status = 'pending'::text)");
    // Pending and running rows with their kind, shard and creation time, for the queue gauges
    // (V12, in place of V9's index without the shard).
    assertThat(indexes.get("jobs_active_shard_idx"))
        .endsWith(
            "USING btree (status, uid) INCLUDE (kind, shard, created_at)"
                + " WHERE (status = ANY (ARRAY['pending'::text, 'running'::text]))");
    assertThat(indexes).doesNotContainKey("jobs_active_idx");
    // The claims by priority, and in turns between owners (V14): due pending rows only.
    assertThat(indexes.get("jobs_due_claim_idx"))
        .endsWith(
            "USING btree (kind, shard, ((- priority)), uid)"
                + " WHERE ((status = 'pending'::text) AND (delayed_until IS NULL))");
    // The fair claim's owners in byte order whatever the database's collation (V23).
    assertThat(indexes.get("jobs_fair_claim_bytes_idx"))
        .contains("(- priority)", "owner_kind", "COLLATE \"C\"", "uid)")
        .endsWith("WHERE ((status = 'pending'::text) AND (delayed_until IS NULL))");
    for (String concurrently :
        List.of(
            "jobs_pending_shard_claim_idx",
            "jobs_active_shard_idx",
            "jobs_due_claim_idx",
            "jobs_fair_claim_bytes_idx",
            "jobs_pending_owner_idx",
            "jobs_delayed_idx")) {
      assertThat(
              db.query(
                  "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                      + " WHERE c.relname = ?",
                  concurrently))
          .as(concurrently + " built to the end")
          .containsExactly(Map.of("indisvalid", true));
    }
  }

  @Test
  void shouldRestrictStatusWithANamedCheck() {
    List<Map<String, Object>> checks =
        db.query(
            "SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint"
                + " WHERE conrelid = 'jobs'::regclass AND conname = 'jobs_status_check'");
    assertThat(checks).hasSize(1);
    assertThat((String) checks.get(0).get("def"))
        .contains("'pending'", "'running'", "'done'", "'failed'");
  }

  @Test
  void shouldRejectAnUnknownStatus() {
    Timestamp now = Timestamp.from(Instant.now());
    assertThatThrownBy(
            () ->
                db.update(
                    "INSERT INTO jobs (uid, kind, status, created_at, updated_at, expires_at)"
                        + " VALUES (?, 'zip', 'cancelled', ?, ?, ?)",
                    UUID.randomUUID(),
                    now,
                    now,
                    now))
        .hasStackTraceContaining("jobs_status_check");
  }

  @Test
  void shouldCommentEveryColumn() {
    List<Map<String, Object>> uncommented =
        db.query(
            "SELECT c.column_name FROM information_schema.columns c"
                + " WHERE c.table_name = 'jobs'"
                + " AND col_description('jobs'::regclass, c.ordinal_position) IS NULL");
    assertThat(uncommented).isEmpty();
  }
}
