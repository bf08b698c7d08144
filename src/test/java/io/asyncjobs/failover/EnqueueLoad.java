package io.asyncjobs.failover;

import io.asyncjobs.testing.ServiceProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Clients enqueueing noop jobs over HTTP through the replicas a Service would route to (the ready
 * ones not yet told to stop), round robin, each pausing between requests. Keeps the uid of every
 * acknowledged (202) enqueue, so a run can check that each of them got done.
 */
final class EnqueueLoad implements AutoCloseable {

  private static final Pattern UID = Pattern.compile("\"uid\"\\s*:\\s*\"([0-9a-f-]{36})\"");

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final List<ServiceProcess> serving = new CopyOnWriteArrayList<>();
  private final ConcurrentLinkedQueue<UUID> acknowledged = new ConcurrentLinkedQueue<>();
  private final AtomicLong refused = new AtomicLong();
  private final AtomicLong sent = new AtomicLong();
  private final List<Thread> clients = new ArrayList<>();
  private final String token;
  private final String body;
  private volatile boolean running = true;

  /**
   * Starts {@code clients} client threads, each pausing {@code pause} between requests; every job
   * sleeps {@code sleepMs} and records its executions.
   */
  EnqueueLoad(String token, int clients, Duration pause, long sleepMs) {
    this.token = token;
    this.body = "{\"sleep_ms\": " + sleepMs + ", \"record\": true}";
    for (int i = 0; i < clients; i++) {
      Thread client = new Thread(() -> run(pause), "enqueue-" + i);
      client.setDaemon(true);
      client.start();
      this.clients.add(client);
    }
  }

  /** Routes requests to {@code replica} from now on (it became ready). */
  void add(ServiceProcess replica) {
    serving.add(replica);
  }

  /** Stops routing to {@code replica} (it is about to be stopped). */
  void remove(ServiceProcess replica) {
    serving.remove(replica);
  }

  /** The uids of the enqueues answered 202 so far. */
  List<UUID> acknowledged() {
    return List.copyOf(acknowledged);
  }

  /** Requests answered otherwise than 202, or not answered: a client would retry them. */
  long refused() {
    return refused.get();
  }

  /** Requests sent. */
  long sent() {
    return sent.get();
  }

  private void run(Duration pause) {
    int next = 0;
    while (running) {
      List<ServiceProcess> targets = List.copyOf(serving);
      if (!targets.isEmpty()) {
        enqueue(targets.get(Math.floorMod(next++, targets.size())));
      }
      try {
        Thread.sleep(pause.toMillis());
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void enqueue(ServiceProcess replica) {
    sent.incrementAndGet();
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + replica.port + "/api/noop"))
                  .timeout(Duration.ofSeconds(10))
                  .header("Authorization", "Bearer " + token)
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      Matcher uid = UID.matcher(response.body());
      if (response.statusCode() == 202 && uid.find()) {
        acknowledged.add(UUID.fromString(uid.group(1)));
      } else {
        refused.incrementAndGet();
      }
    } catch (java.io.IOException e) {
      refused.incrementAndGet();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Stops the clients and waits for their last request. */
  @Override
  public void close() throws InterruptedException {
    running = false;
    for (Thread client : clients) {
      client.join(15_000);
    }
  }
}
