package io.asyncjobs.lock;

import java.util.Set;

/**
 * The replicas alive now, as the coordination store itself shows them: the shards are balanced over
 * these. There is no registry of our own: in PostgreSQL mode the replicas' lock sessions are the
 * members, in Kubernetes mode a Lease that each replica keeps an annotation on.
 */
public interface Members {

  /** Says that this replica is alive; called every retry period. */
  void beat() throws Exception;

  /**
   * The replicas alive now, this one included, each by the name {@link #self()} gives it.
   *
   * @throws Exception when the store could not be read; the caller keeps its last view
   */
  Set<String> live() throws Exception;

  /** This replica's name among the members. */
  String self();

  /** Only this replica: for mode {@code none}, and for tests. */
  static Members alone(String identity) {
    return new Members() {
      @Override
      public void beat() {}

      @Override
      public Set<String> live() {
        return Set.of(identity);
      }

      @Override
      public String self() {
        return identity;
      }
    };
  }
}
