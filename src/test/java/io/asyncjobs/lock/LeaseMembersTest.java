package io.asyncjobs.lock;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The members Lease against the CRUD API server: who beats is alive, who stopped is removed. */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class LeaseMembersTest {

  private static final Duration LEASE = Duration.ofSeconds(6);

  @Inject KubernetesClient client;

  private final String name = "members-" + UUID.randomUUID().toString().substring(0, 8);
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

  @Test
  void shouldSeeWhoBeatsAndForgetWhoStopped() {
    LeaseMembers a = member("replica-a");
    LeaseMembers b = member("replica-b");
    a.beat();
    b.beat();
    assertThat(a.live()).containsExactlyInAnyOrder("replica-a", "replica-b");

    // b stops; a keeps beating. Its age is a's own monotonic time since b's value last changed.
    for (int second = 1; second <= 7; second++) {
      nanos.addAndGet(Duration.ofSeconds(1).toNanos());
      a.beat();
      a.live();
    }
    assertThat(a.live()).as("b unchanged for a lease duration").containsExactly("replica-a");
    nanos.addAndGet(LEASE.toNanos());
    a.beat();
    assertThat(a.live()).containsExactly("replica-a");
    Map<String, String> annotations = annotations();
    assertThat(annotations.get(LeaseMembers.KEY_PREFIX + "replica-b"))
        .as("removed after two lease durations (this test server keeps a nulled key, as null)")
        .isNullOrEmpty();

    // Reading goes on after a removal, and a newcomer is seen at once.
    LeaseMembers c = member("replica-c");
    c.beat();
    assertThat(a.live()).containsExactlyInAnyOrder("replica-a", "replica-c");
    assertThat(c.live()).contains("replica-a", "replica-c");
  }

  @Test
  void shouldNameAMemberByAValidAnnotationKey() {
    assertThat(LeaseMembers.memberName("async-jobs-7d9f8c6b5-x2x9z"))
        .isEqualTo("async-jobs-7d9f8c6b5-x2x9z");
    String long1 = LeaseMembers.memberName("a".repeat(70) + "1");
    String long2 = LeaseMembers.memberName("a".repeat(70) + "2");
    assertThat(long1).hasSizeLessThanOrEqualTo(63).matches("[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]");
    assertThat(long1).isNotEqualTo(long2);
    assertThat(LeaseMembers.memberName("Host Name/1")).matches("[A-Za-z0-9][-A-Za-z0-9_.]*");
  }

  private Map<String, String> annotations() {
    Map<String, String> annotations =
        client.leases().inNamespace("default").withName(name).get().getMetadata().getAnnotations();
    return annotations == null ? Map.of() : annotations;
  }

  private LeaseMembers member(String identity) {
    return new LeaseMembers(
        client, "default", name, identity, LEASE, Clock.systemUTC(), nanos::get);
  }
}
