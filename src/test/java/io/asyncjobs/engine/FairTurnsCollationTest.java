package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.queue.EnqueueRequest;
import io.asyncjobs.queue.Enqueued;
import io.asyncjobs.queue.Owner;
import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.testing.EnglishCollationDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Fair turns on a database that does not sort text byte by byte: the application's database here
 * sorts as American English does ({@link EnglishCollationDatabase}), where {@code user:alice} comes
 * before {@code user:Bob}. The claim walks the owners in the database and the runner picks up the
 * next turn after the owner it served last, so both have to agree on one order of owners whatever
 * the database's collation is; otherwise an owner is served twice while another waits.
 */
@QuarkusTest
@TestProfile(FairTurnsCollationTest.EnglishCollation.class)
class FairTurnsCollationTest extends ControlledKindFixture {

  private static final Map<String, Object> BLOCK = Map.of("block", true);

  /** The application on a database created with the ICU locale en-US. */
  public static class EnglishCollation implements QuarkusTestProfile {
    @Override
    public List<TestResourceEntry> testResources() {
      return List.of(new TestResourceEntry(EnglishCollationDatabase.class));
    }
  }

  @Test
  void shouldServeEveryOwnerOnceARoundUnderAnEnglishCollation() throws Exception {
    assertThat(db.query("SELECT 'user:alice' < 'user:Bob' AS english").get(0).get("english"))
        .as("the database sorts as English does, not by bytes")
        .isEqualTo(true);

    assertEveryOwnerServedOnceARound(List.of("alice", "Bob", "carol", "Dave"));
  }

  @Test
  void shouldServeEveryOwnerOnceARoundWhateverCharactersTheirIdsHold() throws Exception {
    // A fullwidth letter (one UTF-16 unit, U+FF5A) and an emoji (two units, U+1F600) sort one way
    // by their UTF-16 units and the other way by their code points, as PostgreSQL's bytes do.
    List<String> owners = List.of("a", "b", "\uFF5A", "\uD83D\uDE00");

    assertEveryOwnerServedOnceARound(owners);
  }

  /**
   * Three jobs for each of four owners, claimed two at a time (max-concurrent 2) in fair order:
   * every two claims serve each owner once, starting where the claims before stopped.
   */
  private void assertEveryOwnerServedOnceARound(List<String> owners) throws Exception {
    settings.update("controlled", new SettingsOverride(null, 2, null, null, "fair"));
    Map<UUID, String> ownerOf = new HashMap<>();
    for (String owner : owners) {
      List<EnqueueRequest> jobs = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        jobs.add(EnqueueRequest.of("controlled", new Owner("user", owner), BLOCK));
      }
      for (Enqueued job : queue.enqueue(jobs)) {
        ownerOf.put(job.uid(), owner);
      }
    }
    List<Set<String>> claims = new ArrayList<>();
    for (int claim = 0; claim < 6; claim++) {
      service.runOnce();
      List<UUID> started = List.of(service.nextStarted(), service.nextStarted());
      Set<String> served = new TreeSet<>();
      for (UUID uid : started) {
        served.add(ownerOf.get(uid));
        service.release(uid);
        service.awaitReturned(uid);
      }
      claims.add(served);
    }
    for (int round = 0; round < 3; round++) {
      Set<String> served = new TreeSet<>(claims.get(2 * round));
      served.addAll(claims.get(2 * round + 1));
      assertThat(served)
          .as("round %d of two claims of two jobs, claims %s", round, claims)
          .containsExactlyInAnyOrderElementsOf(owners);
    }
  }
}
