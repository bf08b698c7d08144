package io.asyncjobs.cli;

import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.config.Shards;
import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.lock.LeaseHolders;
import io.asyncjobs.operations.Requests;
import io.asyncjobs.operations.ShardOwners;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.JobShards;
import io.asyncjobs.queue.JobStatus;
import io.asyncjobs.queue.QueueDepths;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;
import java.io.PrintStream;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * {@code admin owners}: who owns each shard of each kind, since when and under which epoch, with
 * the shard's pending and running jobs. The CLI holds no lock itself, so it asks the coordination
 * store: the session holding a shard's advisory key (PostgreSQL mode), else the shard's Lease when
 * an API server is configured (Kubernetes mode); since when and the epoch come from the lock's last
 * holding in the database, shown only when that holding is the current holder's.
 */
@Singleton
class OwnersCommand extends Command {

  /**
   * One shard's owner.
   *
   * @param kind the kind
   * @param shard the shard's key
   * @param lock the lock's name (the Lease, or what the advisory key is derived from)
   * @param holder the replica holding the lock now, or null when nobody does or it cannot be told
   * @param heldThrough how that was told: {@code advisory-lock} or {@code lease}; null without one
   * @param since when the holding began, when the database records the holder's holding
   * @param epoch that holding's fencing epoch, likewise
   * @param pending the shard's pending jobs
   * @param running the shard's running jobs
   * @param retired whether the current mapping no longer names the shard (it still has jobs)
   */
  @RegisterForReflection
  record ShardRow(
      String kind,
      String shard,
      String lock,
      String holder,
      String heldThrough,
      Instant since,
      Long epoch,
      long pending,
      long running,
      boolean retired) {}

  /** The answer of {@code --json}. */
  @RegisterForReflection
  record Answer(List<ShardRow> shards, List<String> notes) {}

  private final ServiceManager services;
  private final Shards shards;
  private final JobShards store;
  private final QueueDepths depths;
  private final ShardOwners owners;
  private final JobsConfig config;
  private final Instance<KubernetesClient> kubernetes;
  private final Optional<String> apiServer;
  private final Output output;

  OwnersCommand(
      ServiceManager services,
      Shards shards,
      JobShards store,
      QueueDepths depths,
      ShardOwners owners,
      JobsConfig config,
      Instance<KubernetesClient> kubernetes,
      @ConfigProperty(name = "quarkus.kubernetes-client.api-server-url") Optional<String> apiServer,
      Output output) {
    super(
        "owners",
        "admin owners [KIND] [--json]",
        """
        Shows who owns each shard of each kind (or of KIND): the lock, the replica holding
        it now, since when and under which epoch, and the shard's pending and running jobs.
        Without shards (jobs.lock.sharding=none) every kind is in the one shard "all". A
        shard of an earlier mapping that still has jobs is listed as retired. The holder
        comes from the shard's advisory lock in PostgreSQL mode and from its Lease in
        Kubernetes mode (which needs "get" on the Leases, as the server's Role grants).
        """,
        Set.of(),
        Set.of());
    this.services = services;
    this.shards = shards;
    this.store = store;
    this.depths = depths;
    this.owners = owners;
    this.config = config;
    this.kubernetes = kubernetes;
    this.apiServer = apiServer;
    this.output = output;
  }

  @Override
  int run(Arguments args, PrintStream out, PrintStream err) {
    if (args.words().size() > 1) {
      throw new UsageException("owners takes at most one kind");
    }
    List<String> kinds = services.kinds();
    if (!args.words().isEmpty()) {
      String kind = args.words().get(0);
      if (!kinds.contains(kind)) {
        throw ProblemException.notFound(
            "no job service is called " + Requests.quote(kind) + "; the kinds are " + kinds);
      }
      kinds = List.of(kind);
    }
    List<String> notes = new ArrayList<>();
    List<ShardRow> rows = read(kinds, notes);
    if (args.has(JSON)) {
      output.printJson(new Answer(rows, notes), out);
      return AdminCli.OK;
    }
    Table table =
        new Table(out, "KIND", "SHARD", "LOCK", "HOLDER", "SINCE", "EPOCH", "PENDING", "RUNNING");
    for (ShardRow row : rows) {
      table.row(
          row.kind(),
          row.retired() ? row.shard() + " (retired)" : row.shard(),
          row.lock(),
          row.holder() == null ? "-" : row.holder(),
          row.since() == null ? "-" : Output.time(row.since()),
          row.epoch() == null ? "-" : row.epoch().toString(),
          Long.toString(row.pending()),
          Long.toString(row.running()));
    }
    table.flush();
    notes.forEach(note -> err.println("note: " + note));
    return AdminCli.OK;
  }

  private List<ShardRow> read(List<String> kinds, List<String> notes) {
    Map<String, Set<String>> active = store.activeShards();
    QueueDepths.Depths counts;
    try {
      counts = depths.read();
    } catch (SQLException e) {
      throw new IllegalStateException("could not count the jobs: " + e.getMessage(), e);
    }
    String base = config.lock().name();
    record Key(String kind, String shard, boolean retired) {}
    List<Key> keys = new ArrayList<>();
    for (String kind : kinds) {
      List<String> current = shards.keysOf(kind);
      current.forEach(shard -> keys.add(new Key(kind, shard, false)));
      for (String shard : new TreeSet<>(active.getOrDefault(kind, Set.of()))) {
        if (!current.contains(shard)) {
          keys.add(new Key(kind, shard, true));
        }
      }
    }
    Map<String, ShardOwners.Holding> holdings;
    try {
      holdings =
          owners.read(keys.stream().map(k -> Shards.lockName(base, k.shard())).distinct().toList());
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the locks' holdings: " + e.getMessage(), e);
    }
    Leases leases = new Leases(notes);
    List<ShardRow> rows = new ArrayList<>();
    for (Key key : keys) {
      String lock = Shards.lockName(base, key.shard());
      ShardOwners.Holding holding = holdings.get(lock);
      String holder = holding == null ? null : holding.sessionHolder();
      String through = holder == null ? null : "advisory-lock";
      if (holder == null) {
        holder = leases.holderOf(lock);
        through = holder == null ? null : "lease";
      }
      boolean recorded = holding != null && holding.isOf(holder);
      Map<JobStatus, Long> byStatus =
          counts.byShard().getOrDefault(key.kind(), Map.of()).getOrDefault(key.shard(), Map.of());
      rows.add(
          new ShardRow(
              key.kind(),
              key.shard(),
              lock,
              recorded ? holding.holder() : holder,
              through,
              recorded ? holding.takenAt() : null,
              recorded ? holding.epoch() : null,
              byStatus.getOrDefault(JobStatus.PENDING, 0L),
              byStatus.getOrDefault(JobStatus.RUNNING, 0L),
              key.retired()));
    }
    return rows;
  }

  /**
   * The shards' Leases, read when the server runs in Kubernetes mode: its {@code JOBS_LOCK_MODE}
   * (the CLI's own lock mode is {@code none}) is {@code kubernetes}, or {@code auto} in a pod. A
   * Lease whose last renewal is older than its duration has no holder. A Lease that cannot be read
   * gets a note and the others are still read; once the API server cannot be reached at all, no
   * more are tried.
   */
  private final class Leases {
    private final List<String> notes;
    private KubernetesClient client;
    private String namespace;
    private boolean off;

    Leases(List<String> notes) {
      this.notes = notes;
      String mode = Optional.ofNullable(System.getenv("JOBS_LOCK_MODE")).orElse("auto").trim();
      boolean inPod = System.getenv("KUBERNETES_SERVICE_HOST") != null;
      boolean kubernetesMode =
          mode.equalsIgnoreCase("kubernetes") || (mode.equalsIgnoreCase("auto") && inPod);
      off = !kubernetesMode;
      if (kubernetesMode && !inPod && apiServer.isEmpty()) {
        off = true;
        notes.add(
            "the server's lock mode is kubernetes but no API server is known here (not in a pod,"
                + " no quarkus.kubernetes-client.api-server-url): holders held through Leases are"
                + " not shown");
      }
    }

    String holderOf(String name) {
      if (off) {
        return null;
      }
      if (client == null) {
        client = kubernetes.get();
        namespace =
            config
                .lock()
                .namespace()
                .orElseGet(() -> Optional.ofNullable(client.getNamespace()).orElse("default"));
      }
      try {
        Lease lease = client.leases().inNamespace(namespace).withName(name).get();
        return LeaseHolders.liveHolder(lease, Instant.now().plus(config.lock().wallClockOffset()));
      } catch (KubernetesClientException e) {
        if (e.getCode() > 0) {
          notes.add(
              "could not read the Lease "
                  + namespace
                  + "/"
                  + name
                  + " (HTTP "
                  + e.getCode()
                  + "); its holder is not shown");
        } else {
          off = true;
          notes.add(
              "could not reach the API server ("
                  + e.getMessage()
                  + "); holders held through Leases are not shown");
        }
        return null;
      }
    }
  }
}
