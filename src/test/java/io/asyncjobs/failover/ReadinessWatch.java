package io.asyncjobs.failover;

import io.asyncjobs.testing.ServiceProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Probes every replica's readiness as the Deployment's probe does (every {@code period}, unready
 * after {@code failureThreshold} failed answers in a row) from the moment it was ready until it is
 * told to stop, and notices a replica whose process ended without being told to.
 */
final class ReadinessWatch implements AutoCloseable {

  private final Map<ServiceProcess, Integer> failuresInARow = new ConcurrentHashMap<>();
  private final List<String> unready = java.util.Collections.synchronizedList(new ArrayList<>());
  private final List<String> died = java.util.Collections.synchronizedList(new ArrayList<>());
  private final Thread thread;
  private final long started = System.nanoTime();
  private volatile boolean running = true;

  ReadinessWatch(Duration period, int failureThreshold) {
    thread =
        new Thread(
            () -> {
              while (running) {
                for (ServiceProcess replica : List.copyOf(failuresInARow.keySet())) {
                  probe(replica, failureThreshold);
                }
                try {
                  Thread.sleep(period.toMillis());
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "readiness-watch");
    thread.setDaemon(true);
    thread.start();
  }

  /** Watches {@code replica}, which just answered ready. */
  void ready(ServiceProcess replica) {
    failuresInARow.put(replica, 0);
  }

  /** Stops watching {@code replica}: it is about to get SIGTERM, unready from now on by design. */
  void stopping(ServiceProcess replica) {
    failuresInARow.remove(replica);
  }

  /** Each time a replica went unready after it was ready ("name at N s"). */
  List<String> unready() {
    return List.copyOf(unready);
  }

  /** Each replica whose process ended while it was not told to stop ("name exit N at N s"). */
  List<String> died() {
    return List.copyOf(died);
  }

  private void probe(ServiceProcess replica, int failureThreshold) {
    if (!replica.isAlive()) {
      if (failuresInARow.remove(replica) != null) {
        died.add(replica.name + " exit " + replica.exitValue() + " at " + seconds() + " s");
      }
      return;
    }
    int status = replica.readinessStatus();
    Integer failures =
        failuresInARow.computeIfPresent(replica, (r, n) -> status == 200 ? 0 : n + 1);
    if (failures != null && failures == failureThreshold) {
      unready.add(replica.name + " (" + status + ") at " + seconds() + " s");
    }
  }

  private long seconds() {
    return Duration.ofNanos(System.nanoTime() - started).toSeconds();
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    thread.interrupt();
    thread.join(5_000);
  }
}
