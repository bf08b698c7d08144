package io.asyncjobs.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * Every setting of the job service, under the prefix {@code jobs.}. Values are checked at start
 * against the bounds {@link JobsConfigValidator} lists; an invalid one stops the application with a
 * message that names its key.
 */
@ConfigMapping(prefix = "jobs")
public interface JobsConfig {

  /**
   * Root of the shared volume every replica mounts: inputs and artifacts live here (env {@code
   * JOBS_DATA_DIR}). Created at start when missing.
   */
  @WithDefault("/data")
  Path dataDir();

  /**
   * How often the scheduled tick runs. It is the safety net: enqueues and finished tasks wake the
   * owner sooner.
   */
  @WithDefault("1s")
  Duration tickInterval();

  /**
   * Whether the owner reacts at once to enqueues (PostgreSQL LISTEN/NOTIFY) and to finished tasks,
   * instead of only on the next tick.
   */
  @WithDefault("true")
  boolean wakeUps();

  /**
   * Whether a single enqueue made on the replica that owns its shard starts the job in its own
   * commit when a thread is free and no due job of the shard waits before it: the row is written
   * running under the owner's epoch, fenced as a claim is, and the enqueue answers {@code running}.
   * Off, every job is written pending and claimed by the owner's next run (a second commit).
   */
  @WithDefault("true")
  boolean startOnEnqueue();

  /**
   * Expired jobs one sweep batch takes: selected, cleaned up, deleted together. A tick sweeps batch
   * after batch within {@link #sweepBudget()}.
   */
  @WithDefault("1000")
  int sweepBatchSize();

  /**
   * How long one service's sweep may go on within a run before it leaves the rest to the next;
   * while expired jobs remain, a wake-up that claims first and then sweeps on comes at once (with
   * wake-ups off, the next tick). A claim asked for meanwhile (an enqueue, a finished task) ends
   * the sweep within the job it is cleaning up.
   */
  @WithDefault("250ms")
  Duration sweepBudget();

  /**
   * How often a replica that does not own the lock reads the queue gauges from the database (the
   * owner reads them every tick), so that many replicas do not multiply the load.
   */
  @WithDefault("15s")
  Duration followerGaugeInterval();

  /**
   * How long a job whose cleanup failed is kept before the sweep tries it again; at least a second,
   * so a failing cleanup is never due again within the same sweep.
   */
  @WithDefault("5m")
  Duration cleanupRetryDelay();

  /** The most jobs one service holds claimed ahead of its free threads; see claim-ahead. */
  @WithDefault("500")
  int claimAheadMax();

  /**
   * With claims ahead, the most jobs beyond {@code max-concurrent} that one shard's threads may
   * have begun while their outcomes are not yet committed; a thread waits before it begins another
   * job claimed ahead until the next statement writes them. So it bounds what a sudden death of the
   * owner ({@code kill -9}) leaves to run again: the jobs running then, and at most this many that
   * had finished. Without claims ahead a job keeps its thread's slot until its outcome is written,
   * and only the running jobs are at stake. The default, as many as {@link #claimAheadMax()}, costs
   * the drain nothing; a lower bound makes smaller batches (the engine suite's drain of no-op jobs
   * lost about a quarter at 100).
   */
  @WithDefault("500")
  int claimAheadUnwrittenMax();

  /**
   * The highest priority an ordinary caller may ask for at enqueue; admins and callers whose
   * principal kind is {@code service} may use the whole range, -10 to 10. The default, 0, lets
   * users only lower their jobs' priority.
   */
  @WithDefault("0")
  int userMaxPriority();

  /** Settings every service starts from. */
  ServiceDefaults defaults();

  /**
   * Per-service overrides, keyed by service name ({@code jobs.services.zip.max-concurrent=2}); an
   * absent key falls back to {@link #defaults()}.
   */
  Map<String, ServiceOverrides> services();

  /** The owner lock: which replica processes jobs. */
  Lock lock();

  /** The embedded PostgreSQL used by dev mode and tests; never part of the packaged app. */
  EmbeddedDb embeddedDb();

  /** The HTTP API: request limits, download links, event streams. */
  Api api();

  /** Who callers are: the bearer token's claims and roles. */
  Auth auth();

  /** Completion callbacks: the POST a job's owner receives when it ends. */
  Callbacks callbacks();

  /** Where completion callbacks may go, how they are signed, and how long they are tried. */
  interface Callbacks {

    /**
     * The HMAC-SHA256 key callbacks are signed with, base64 (at least 32 bytes once decoded; env
     * {@code JOBS_CALLBACKS_KEY}). Receivers check the signature with it, so every replica needs
     * the same one. Without it, an enqueue that asks for a callback is refused.
     */
    Optional<String> key();

    /**
     * Hosts a {@code callback_url} may name: exact names or IP literals, or {@code *.suffix} for
     * any name under a suffix, each optionally with {@code :port} (then only that port) or {@code
     * :*} (any port). The default allows in-cluster services only. A name matched by a {@code
     * *.suffix} pattern must not resolve to an address of the host itself or of the cloud around it
     * (loopback, link-local, metadata addresses, unique-local IPv6 and the like, see {@code
     * allowedNetworks}); a host listed exactly is taken as the operator wrote it. An IPv6 address
     * is written in brackets: {@code [fd00::5]}, {@code [fd00::5]:8443}.
     */
    @WithDefault("*.svc,*.svc.cluster.local")
    java.util.List<String> allowedHosts();

    /**
     * Address ranges in CIDR form ({@code fd00:10:96::/112}) that a name matched by a {@code
     * *.suffix} pattern may resolve to although they are refused by default: IPv6 unique-local
     * (fc00::/7) and the shared 100.64.0.0/10, for a cluster whose services or pods live there.
     * Loopback, link-local, multicast and the clouds' metadata addresses stay refused.
     */
    Optional<java.util.List<String>> allowedNetworks();

    /** The ports a {@code callback_url} may name when its host's entry names none. */
    @WithDefault("80,443,8080,8443")
    java.util.List<Integer> allowedPorts();

    /** How long after a job ends its callback is still tried. */
    @WithDefault("1h")
    Duration giveUpAfter();

    /** The wait after a first failed delivery, doubled for each later one. */
    @WithDefault("1s")
    Duration backoff();

    /** The longest wait between deliveries. */
    @WithDefault("5m")
    Duration backoffMax();

    /**
     * How long one delivery may take, from the name lookup to the answer's status line, before it
     * counts as failed.
     */
    @WithDefault("10s")
    Duration timeout();

    /** Deliveries one shard's owner has under way at once. */
    @WithDefault("16")
    int maxInFlight();
  }

  /** The HTTP API's limits and links. */
  interface Api {

    /** Largest request body accepted, in bytes; a larger one gets 413 and nothing is written. */
    @WithDefault("1048576")
    long maxBodyBytes();

    /** How long a signed download link stays valid. */
    @WithDefault("15m")
    Duration downloadLinkTtl();

    /**
     * The HMAC-SHA256 key download links are signed with, base64 (at least 32 bytes once decoded;
     * env {@code JOBS_API_SIGNING_KEY}). Every replica needs the same key, or a link one replica
     * made fails on the next. Without one, each replica makes a random key at start and logs a
     * warning.
     */
    Optional<String> signingKey();

    /** How often an event stream looks at its job. */
    @WithDefault("500ms")
    Duration eventsPollInterval();

    /** How often an idle event stream sends a comment line, so proxies keep it open. */
    @WithDefault("15s")
    Duration eventsHeartbeat();

    /**
     * The longest one event stream stays open; a client still interested reconnects (JobPoller
     * does, or falls back to polling). Bounds what a forgotten stream costs.
     */
    @WithDefault("30m")
    Duration eventsMaxDuration();

    /**
     * Event streams one owner may keep open on one replica; one more is refused with 429. Bounds
     * what a caller that forgets to close its streams costs.
     */
    @WithDefault("32")
    int eventsMaxPerOwner();
  }

  /** How a bearer token maps to a job owner. */
  interface Auth {

    /** The claim naming the caller's principal kind ({@code user}, {@code service}, ...). */
    @WithDefault("owner_kind")
    String ownerKindClaim();

    /** The principal kind of a token without that claim. */
    @WithDefault("user")
    String defaultOwnerKind();

    /** Verified tokens remembered so repeat requests skip the signature check; 0 turns it off. */
    @WithDefault("10000")
    int tokenCacheSize();

    /** The longest a verified token is remembered (never past its own expiry). */
    @WithDefault("5m")
    Duration tokenCacheTtl();

    /**
     * Take tokens whatever their issuer ({@code iss}) when {@code mp.jwt.verify.issuer} is not set
     * (env {@code JOBS_AUTH_ALLOW_ANY_ISSUER}). Off by default: without an issuer, the service
     * refuses to start, since any issuer that holds the key (or one of a JWKS's keys) could then
     * sign tokens for it. Only for a key no one else signs with.
     */
    @WithDefault("false")
    boolean allowAnyIssuer();

    /**
     * Dev mode and tests only: a folder where a throw-away RSA key pair is made at start; tokens
     * are verified against it and dev mode prints one signed with it. Never set in production.
     */
    Optional<Path> devKeysDir();
  }

  /** The settings of one service when nothing overrides them. */
  interface ServiceDefaults {

    /** Seconds a finished job and its artifact are kept after completion; 7 days. */
    @WithDefault("604800")
    long retentionSeconds();

    /** Jobs of one service processed at the same time by the owner. */
    @WithDefault("4")
    int maxConcurrent();

    /** Seconds a job may run before it is interrupted and failed. */
    @WithDefault("3600")
    long jobTimeoutSeconds();

    /** Times a job is put back to pending after its processor vanished before it is failed. */
    @WithDefault("3")
    int maxRetries();

    /**
     * How far the owner may claim ahead of the service's free threads, in time: as many more jobs
     * as its threads finish in this long at the kind's recent run time (never more than {@link
     * JobsConfig#claimAheadMax()}), so that the threads do not wait for the database between short
     * jobs. A job claimed ahead shows as running until a thread takes it, on average within this
     * long. Zero claims only for free threads. The default, 20 ms, changes nothing for a kind whose
     * jobs take longer than that, and lets a kind of very short jobs drain several times faster.
     */
    @WithDefault("20ms")
    Duration claimAhead();

    /**
     * In which order due pending jobs of one priority are claimed: {@code fifo}, enqueue order (the
     * default), or {@code fair}, turns between owners.
     */
    @WithDefault("fifo")
    ClaimOrder claimOrder();

    /**
     * The most pending jobs of the kind one owner may hold; an enqueue past it is refused (429).
     * Admins are exempt. 0, the default, sets no limit.
     */
    @WithDefault("0")
    int maxPendingPerOwner();

    /**
     * The most jobs of the kind of one owner running at once (over all the kind's shards); the
     * claim passes over an owner at it until one of its jobs ends. 0, the default, sets no limit.
     */
    @WithDefault("0")
    int maxRunningPerOwner();

    /**
     * How many times a job whose failures the kind calls transient ({@code JobService.retryable})
     * is tried in all before it fails; 1, the default, never tries again. Recoveries of a vanished
     * processor count apart, under {@link #maxRetries()}.
     */
    @WithDefault("1")
    int maxAttempts();

    /**
     * The wait before the second attempt; each later one waits twice as long as the one before, up
     * to {@link #retryBackoffMax()}, and every wait is drawn at random between half and all of it.
     */
    @WithDefault("10s")
    Duration retryBackoff();

    /** The longest wait between two attempts. */
    @WithDefault("10m")
    Duration retryBackoffMax();
  }

  /** Overrides for one service; each absent value falls back to the default. */
  interface ServiceOverrides {

    /** See {@link ServiceDefaults#retentionSeconds()}. */
    Optional<Long> retentionSeconds();

    /** See {@link ServiceDefaults#maxConcurrent()}. */
    Optional<Integer> maxConcurrent();

    /** See {@link ServiceDefaults#jobTimeoutSeconds()}. */
    Optional<Long> jobTimeoutSeconds();

    /** See {@link ServiceDefaults#maxRetries()}. */
    Optional<Integer> maxRetries();

    /** See {@link ServiceDefaults#claimAhead()}. */
    Optional<Duration> claimAhead();

    /** See {@link ServiceDefaults#claimOrder()}. */
    Optional<ClaimOrder> claimOrder();

    /** See {@link ServiceDefaults#maxPendingPerOwner()}. */
    Optional<Integer> maxPendingPerOwner();

    /** See {@link ServiceDefaults#maxRunningPerOwner()}. */
    Optional<Integer> maxRunningPerOwner();

    /** See {@link ServiceDefaults#maxAttempts()}. */
    Optional<Integer> maxAttempts();

    /** See {@link ServiceDefaults#retryBackoff()}. */
    Optional<Duration> retryBackoff();

    /** See {@link ServiceDefaults#retryBackoffMax()}. */
    Optional<Duration> retryBackoffMax();

    /** Whether the service runs at all; the diagnostic {@code noop} kind is off by default. */
    Optional<Boolean> enabled();

    /**
     * How many shards the kind's jobs are hashed over at enqueue, each with its own lock and owner
     * (docs/leadership.md); 1, the default, keeps the kind in one shard. {@code max-concurrent}
     * holds per shard.
     */
    Optional<Integer> shards();
  }

  /** How replicas agree on the one that processes. */
  interface Lock {

    /** Which implementation holds the lock. */
    enum Mode {
      /** Kubernetes inside a cluster (KUBERNETES_SERVICE_HOST is set), PostgreSQL elsewhere. */
      AUTO,
      /** A coordination.k8s.io Lease. */
      KUBERNETES,
      /** A session-level advisory lock on a dedicated database connection. */
      POSTGRES,
      /**
       * Never competes: this process serves requests but processes no jobs. The admin CLI runs this
       * way, beside the server in the same pod.
       */
      NONE
    }

    /** {@code auto}, {@code kubernetes}, {@code postgres} or {@code none}. */
    @WithDefault("auto")
    Mode mode();

    /**
     * How kinds share locks: {@code none} (the default: one lock for every kind) or {@code
     * per-kind} (a lock per kind, so kinds spread over replicas). A kind hashed over several shards
     * ({@code jobs.services.<kind>.shards}) has a lock per shard either way.
     */
    @WithDefault("none")
    Shards.Mode sharding();

    /** The Lease's name; also what the advisory lock key is derived from. */
    @WithDefault("async-jobs-owner")
    String name();

    /** The Lease's namespace; defaults to the client's (the pod's own namespace in a cluster). */
    Optional<String> namespace();

    /** This replica's name; defaults to the pod name (POD_NAME), then the host name. */
    Optional<String> identity();

    /** How long a Lease stays valid without renewal. */
    @WithDefault("15s")
    Duration leaseDuration();

    /**
     * How long an owner trusts its last confirmed renewal: past it, it stops claiming on its own,
     * whatever the lock library says. Must be shorter than the lease duration.
     */
    @WithDefault("10s")
    Duration renewDeadline();

    /** How often the lock is renewed or, by a non-owner, tried. */
    @WithDefault("2s")
    Duration retryPeriod();

    /**
     * How long an owner that lost the lock may take, past its renew deadline, to interrupt its
     * running jobs (the engine checks every 200 ms; a job then has to return). A new owner waits
     * for it before it puts an earlier owner's running jobs back to pending. docs/leadership.md
     * gives the arithmetic.
     */
    @WithDefault("2s")
    Duration takeoverMargin();

    /**
     * Shifts the wall-clock times this replica writes into the Lease (acquire and renew times). The
     * election never reads them back, so a replica whose clock is off changes nothing; the fault
     * tests set it to show that. Leave it at zero.
     */
    @WithDefault("0s")
    Duration wallClockOffset();

    /**
     * On shutdown, how long running jobs may finish before they are put back to pending and the
     * lock is released. Keep it below the pod's termination grace period.
     */
    @WithDefault("20s")
    Duration handoverGrace();
  }

  /** Where the embedded PostgreSQL keeps its files. Read before the datasource starts. */
  interface EmbeddedDb {

    /** Start an embedded PostgreSQL and point the datasource at it. */
    @WithDefault("false")
    boolean enabled();

    /** The database cluster folder; survives restarts unless {@link #clean()} is set. */
    @WithDefault(".dev/postgres/data")
    Path dataDir();

    /** Where the PostgreSQL binaries are unpacked. */
    @WithName("work-dir")
    @WithDefault(".dev/postgres")
    Path workDir();

    /** Delete the cluster when the JVM exits (tests). */
    @WithDefault("false")
    boolean clean();
  }
}
