package io.asyncjobs.lock;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.testing.Database;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * In Kubernetes mode a holding of a release before shards counts while the Lease names its recorded
 * holder and was renewed within its duration; this release's holdings never count.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class OlderReleaseLeaseTest {

  @Inject KubernetesClient client;
  @Inject Database db;

  private final String name = "older-" + UUID.randomUUID().toString().substring(0, 8);
  private final Instant now = Instant.parse("2026-12-02T12:00:00Z");

  @Test
  void shouldCountAnOlderReleasesLeaseOnlyWhileItsHolderRenewsIt() {
    OlderRelease older =
        OlderRelease.kubernetes(db.dataSource(), client, "default", name, () -> now);
    lease("old-pod", now.minusSeconds(5));
    assertThat(older.holder()).as("no epoch recorded yet").isEmpty();

    db.update(
        "INSERT INTO job_owner_epochs (lock_name, epoch, holder, taken_at)"
            + " VALUES (?, nextval('jobs_owner_epoch_seq'), 'old-pod', now())",
        name);
    assertThat(older.holder()).contains("old-pod");

    lease("old-pod", now.minusSeconds(16));
    assertThat(older.holder()).as("not renewed within its 15 s").isEmpty();

    lease("new-pod", now.minusSeconds(1));
    assertThat(older.holder()).as("held by another than the recorded holder").isEmpty();

    lease("old-pod", now.minusSeconds(1));
    db.update("UPDATE job_owner_epochs SET shard_aware_epoch = epoch WHERE lock_name = ?", name);
    assertThat(older.holder()).as("a holding of this release").isEmpty();
  }

  private void lease(String holder, Instant renewed) {
    client
        .leases()
        .inNamespace("default")
        .resource(
            new LeaseBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .withHolderIdentity(holder)
                .withLeaseDurationSeconds(15)
                .withRenewTime(ZonedDateTime.ofInstant(renewed, ZoneOffset.UTC))
                .endSpec()
                .build())
        .createOr(existing -> existing.update());
  }
}
