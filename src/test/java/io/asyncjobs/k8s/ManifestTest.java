package io.asyncjobs.k8s;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.config.Shards;
import io.asyncjobs.lock.Identity;
import io.asyncjobs.lock.KubernetesOwnerLock;
import io.asyncjobs.lock.LeaseMembers;
import io.asyncjobs.lock.LockMetrics;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import io.quarkus.runtime.configuration.DurationConverter;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import jakarta.inject.Inject;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Renders {@code k8s/} (the base and each overlay), reads every object into fabric8's typed model,
 * and checks that the manifests and the service agree: the Role grants what the lock really sends,
 * the pod's own configuration (resolved from the manifests' environment as the pod would) names the
 * pod in the Lease and keeps its data on the shared volume, and every probed or scraped route
 * answers on the running app.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class ManifestTest {

  static final Path K8S = Path.of("k8s");
  static final String EXAMPLE = "overlays/example";
  static final String POD = "async-jobs-6d5f7c9b8-x2x7q";
  static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private static final Map<String, List<HasMetadata>> RENDERED = new ConcurrentHashMap<>();

  @Inject KubernetesClient client;

  @ParameterizedTest
  @ValueSource(strings = {"base", "overlays/example", "overlays/trial"})
  void shouldRenderIntoTypedObjectsWithoutUnknownFields(String dir) {
    List<HasMetadata> objects = objects(dir);

    assertThat(objects).isNotEmpty();
    for (HasMetadata object : objects) {
      String where = dir + ": " + object.getKind() + "/" + object.getMetadata().getName();
      assertThat(object)
          .as(where + " has a typed model")
          .isNotInstanceOf(GenericKubernetesResource.class);
      List<String> unknown = new ArrayList<>();
      unknownFields(object, object.getKind(), unknown);
      assertThat(unknown).as(where + ": fields no Kubernetes version knows").isEmpty();
    }
    assertThat(kinds(objects))
        .contains(
            "ServiceAccount",
            "Role",
            "RoleBinding",
            "ConfigMap",
            "Deployment",
            "Service",
            "PersistentVolumeClaim",
            "PodDisruptionBudget",
            "NetworkPolicy");
    if (dir.equals("overlays/trial")) {
      assertThat(kinds(objects))
          .as("a trial needs no Prometheus operator")
          .doesNotContain("ServiceMonitor", "PrometheusRule");
    } else {
      assertThat(kinds(objects)).contains("ServiceMonitor", "PrometheusRule");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"base", "overlays/example", "overlays/trial"})
  void shouldRenderTheSameWithoutKubectl(String dir) {
    assumeTrue(Kustomize.kubectlAvailable(), "kubectl is not installed: nothing to compare with");

    Set<String> byKubectl = canonical(Kustomize.kubectl(K8S.resolve(dir)));
    Set<String> byHand = canonical(Kustomize.build(K8S.resolve(dir)));

    assertThat(byHand).containsExactlyInAnyOrderElementsOf(byKubectl);
  }

  @Test
  void shouldGrantTheLeaseExactlyWhatTheLockSends() throws Exception {
    List<HasMetadata> objects = objects(EXAMPLE);
    Pod pod = pod(objects);
    Role role = one(objects, Role.class);
    RoleBinding binding = one(objects, RoleBinding.class);

    // The lock, as the pod configures it, through its life: takes the Lease (creating it),
    // renews it, and releases it on shutdown. Every request it sends is recorded as a verb.
    Set<String> sent = ConcurrentHashMap.newKeySet();
    Set<String> paths = ConcurrentHashMap.newKeySet();
    Interceptor recorder =
        new Interceptor() {
          @Override
          public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
            paths.add(request.uri().getPath());
            sent.add(verb(request));
          }
        };
    String namespace = "async-jobs";
    String name = pod.config.lock().name();
    try (KubernetesClient recording =
        new KubernetesClientBuilder()
            .withConfig(client.getConfiguration())
            .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("record", recorder))
            .build()) {
      AtomicLong epochs = new AtomicLong();
      KubernetesOwnerLock lock =
          new KubernetesOwnerLock(
              recording,
              namespace,
              name,
              Identity.of(pod.config.lock(), pod.env::get),
              Duration.ofSeconds(3),
              Duration.ofSeconds(2),
              Duration.ofMillis(200),
              Duration.ofSeconds(1),
              holder -> epochs.incrementAndGet(),
              LockMetrics.none());
      lock.start();
      try {
        awaitOwner(lock);
        String renewedAt = renewTime(namespace, name);
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (renewedAt.equals(renewTime(namespace, name)) && System.nanoTime() < deadline) {
          Thread.sleep(50);
        }
        assertThat(renewTime(namespace, name)).as("the Lease was renewed").isNotEqualTo(renewedAt);
      } finally {
        lock.release();
      }
      assertThat(client.leases().inNamespace(namespace).withName(name).get().getSpec())
          .as("released on shutdown")
          .satisfies(spec -> assertThat(spec.getHolderIdentity()).isNull());
      // With jobs.lock.sharding=per-kind, a lock per shipped kind and the members Lease, which
      // the Role names too so that the switch needs no change of it.
      LeaseMembers members =
          new LeaseMembers(
              recording,
              namespace,
              name + "-members",
              Identity.of(pod.config.lock(), pod.env::get),
              Duration.ofSeconds(3),
              java.time.Clock.systemUTC(),
              System::nanoTime);
      members.beat();
      members.beat();
      assertThat(members.live()).containsExactly(members.self());
    }
    Set<String> leaseNames = new TreeSet<>(List.of(name, name + "-members"));
    for (String kind : List.of("zip", "fork", "seo", "deepsearch", "seo_meta")) {
      leaseNames.add(Shards.lockName(name, kind));
    }

    assertThat(paths)
        .as("the lock and the members touch only the Leases the Role names")
        .allSatisfy(
            path ->
                assertThat(path)
                    .isIn(
                        Stream.concat(Stream.of(""), leaseNames.stream().map(lease -> "/" + lease))
                            .map(
                                lease ->
                                    "/apis/coordination.k8s.io/v1/namespaces/"
                                        + namespace
                                        + "/leases"
                                        + lease)
                            .toList()));
    Map<String, Set<String>> granted = new HashMap<>();
    for (PolicyRule rule : role.getRules()) {
      assertThat(rule.getApiGroups()).containsExactly("coordination.k8s.io");
      assertThat(rule.getResources()).containsExactly("leases");
      for (String verb : rule.getVerbs()) {
        granted
            .computeIfAbsent(verb, v -> new TreeSet<>())
            .addAll(rule.getResourceNames().isEmpty() ? Set.of("*") : rule.getResourceNames());
      }
    }
    assertThat(granted.keySet()).as("verbs granted").isEqualTo(sent);
    granted.forEach(
        (verb, names) ->
            assertThat(names)
                .as("names %s may be used on", verb)
                // Kubernetes cannot authorise a create by name: the object has none yet.
                .containsExactlyElementsOf(verb.equals("create") ? Set.of("*") : leaseNames));
    assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getKind()).isEqualTo("ServiceAccount");
              assertThat(s.getName()).isEqualTo(pod.spec.getServiceAccountName());
              assertThat(s.getNamespace()).isEqualTo(namespace);
            });
    assertThat(one(objects, ServiceAccount.class).getMetadata().getName())
        .isEqualTo(pod.spec.getServiceAccountName());
  }

  @ParameterizedTest
  @ValueSource(strings = {"overlays/example", "overlays/trial"})
  void shouldNameEachReplicaInTheLeaseByItsPodName(String dir) {
    Pod pod = pod(objects(dir));

    assertThat(pod.config.lock().mode()).isEqualTo(JobsConfig.Lock.Mode.KUBERNETES);
    assertThat(pod.config.lock().identity())
        .as("no fixed identity shared by all replicas")
        .isEmpty();
    assertThat(Identity.of(pod.config.lock(), pod.env::get)).isEqualTo(POD);
  }

  @ParameterizedTest
  @ValueSource(strings = {"overlays/example", "overlays/trial"})
  void shouldKeepTheDataDirOnTheSharedVolume(String dir) {
    List<HasMetadata> objects = objects(dir);
    Pod pod = pod(objects);
    PersistentVolumeClaim claim = one(objects, PersistentVolumeClaim.class);

    Volume data =
        pod.spec.getVolumes().stream()
            .filter(v -> v.getPersistentVolumeClaim() != null)
            .filter(
                v ->
                    v.getPersistentVolumeClaim()
                        .getClaimName()
                        .equals(claim.getMetadata().getName()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no volume uses the claim"));
    assertThat(mountPath(pod.container, data.getName())).isEqualTo(pod.config.dataDir().toString());
    if (dir.equals(EXAMPLE)) {
      assertThat(claim.getSpec().getAccessModes())
          .as("every replica mounts it")
          .containsExactly("ReadWriteMany");
    }
  }

  @Test
  void shouldProbeAndScrapeRoutesThatAnswer() {
    List<HasMetadata> objects = objects(EXAMPLE);
    Pod pod = pod(objects);
    int httpPort = pod.raw.getValue("quarkus.http.port", Integer.class);
    assertThat(pod.container.getPorts())
        .anySatisfy(
            p -> {
              assertThat(p.getName()).isEqualTo("http");
              assertThat(p.getContainerPort()).isEqualTo(httpPort);
            });

    for (Probe probe :
        List.of(
            pod.container.getStartupProbe(),
            pod.container.getReadinessProbe(),
            pod.container.getLivenessProbe())) {
      assertThat(probe.getHttpGet().getPort()).isEqualTo(new IntOrString("http"));
      given()
          .get(probe.getHttpGet().getPath())
          .then()
          .statusCode(200)
          .contentType("application/json");
    }

    Service service = one(objects, Service.class);
    ServiceMonitor monitor = one(objects, ServiceMonitor.class);
    assertThat(selects(service.getSpec().getSelector(), pod.labels)).isTrue();
    assertThat(
            selects(
                monitor.getSpec().getSelector().getMatchLabels(),
                service.getMetadata().getLabels()))
        .as("the ServiceMonitor finds the Service")
        .isTrue();
    assertThat(monitor.getSpec().getEndpoints())
        .singleElement()
        .satisfies(
            endpoint -> {
              assertThat(service.getSpec().getPorts())
                  .anySatisfy(
                      p -> {
                        assertThat(p.getName()).isEqualTo(endpoint.getPort());
                        assertThat(p.getTargetPort()).isEqualTo(new IntOrString("http"));
                      });
              String scrape =
                  given()
                      .header("Accept", "text/plain; version=0.0.4")
                      .get(endpoint.getPath())
                      .then()
                      .statusCode(200)
                      .extract()
                      .asString();
              assertThat(scrape).contains("jobs_owner").contains("jvm_memory_used_bytes");
            });
    assertThat(
            selects(
                one(objects, PodDisruptionBudget.class).getSpec().getSelector().getMatchLabels(),
                pod.labels))
        .as("the disruption budget covers the pods")
        .isTrue();
    NetworkPolicy policy = one(objects, NetworkPolicy.class);
    assertThat(selects(policy.getSpec().getPodSelector().getMatchLabels(), pod.labels)).isTrue();
    assertThat(policy.getSpec().getIngress())
        .allSatisfy(
            rule ->
                assertThat(rule.getPorts())
                    .singleElement()
                    .satisfies(p -> assertThat(p.getPort()).isEqualTo(new IntOrString("http"))));
  }

  @Test
  void shouldGiveAStoppingOwnerLongerThanItsHandoverGrace() {
    Pod pod = pod(objects(EXAMPLE));

    Duration handover = pod.config.lock().handoverGrace();
    Duration termination = Duration.ofSeconds(pod.spec.getTerminationGracePeriodSeconds());
    // The grace period starts with the preStop sleep; the handover comes after it.
    Duration preStop =
        Duration.ofSeconds(pod.container.getLifecycle().getPreStop().getSleep().getSeconds());
    // After the handover grace the owner still writes outcomes, releases the Lease and closes
    // the HTTP server: allow it at least ten seconds for that.
    assertThat(termination).isGreaterThanOrEqualTo(preStop.plus(handover).plusSeconds(10));
    assertThat(pod.spec.getSecurityContext().getFsGroupChangePolicy())
        .as("no walk over the whole shared volume at every start")
        .isEqualTo("OnRootMismatch");
  }

  @Test
  void shouldFindEverySecretValueTheDeploymentReads() {
    Pod pod = pod(objects(EXAMPLE));
    Secret secret = exampleSecret();

    assertThat(pod.env)
        .containsKeys(
            "QUARKUS_DATASOURCE_JDBC_URL",
            "QUARKUS_DATASOURCE_USERNAME",
            "QUARKUS_DATASOURCE_PASSWORD",
            "JOBS_API_SIGNING_KEY",
            "MP_JWT_VERIFY_ISSUER");
    for (EnvVar var : pod.container.getEnv()) {
      if (var.getValueFrom() != null && var.getValueFrom().getSecretKeyRef() != null) {
        assertThat(var.getValueFrom().getSecretKeyRef().getName())
            .isEqualTo(secret.getMetadata().getName());
        assertThat(values(secret)).containsKey(var.getValueFrom().getSecretKeyRef().getKey());
      }
    }
    Volume jwt =
        pod.spec.getVolumes().stream()
            .filter(v -> v.getSecret() != null)
            .findFirst()
            .orElseThrow(() -> new AssertionError("no key volume"));
    assertThat(jwt.getSecret().getSecretName()).isEqualTo(secret.getMetadata().getName());
    assertThat(jwt.getSecret().getItems())
        .singleElement()
        .satisfies(
            item -> {
              assertThat(values(secret)).containsKey(item.getKey());
              assertThat(pod.raw.getValue("mp.jwt.verify.publickey.location", String.class))
                  .isEqualTo(mountPath(pod.container, jwt.getName()) + "/" + item.getPath());
            });
  }

  @Test
  void shouldLeaveTheTokenIssuerToEachOverlay() {
    // A placeholder issuer in the base would start a forgotten overlay with every token refused;
    // without one the service refuses to start and says what to set.
    assertThat(pod(objects("base")).raw.getOptionalValue("mp.jwt.verify.issuer", String.class))
        .as("the base names no issuer")
        .isEmpty();
    for (String overlay : List.of(EXAMPLE, "overlays/trial")) {
      Pod pod = pod(objects(overlay));
      assertThat(pod.raw.getOptionalValue("mp.jwt.verify.issuer", String.class))
          .as(overlay + " names its issuer")
          .hasValueSatisfying(issuer -> assertThat(issuer).isNotBlank());
      assertThat(pod.config.auth().allowAnyIssuer()).as(overlay).isFalse();
    }
  }

  @Test
  void shouldNotApplyTheExampleSecretsPlaceholders() {
    assertThat(kinds(objects(EXAMPLE)))
        .as("applying the overlay must not overwrite the installation's real Secret")
        .doesNotContain("Secret");
  }

  @Test
  void shouldRunAsNonRootWithOnlyTheVolumesWritable() {
    Pod pod = pod(objects(EXAMPLE));

    assertThat(pod.spec.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(pod.spec.getSecurityContext().getRunAsUser()).isPositive();
    assertThat(pod.container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(pod.container.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
    assertThat(pod.container.getSecurityContext().getCapabilities().getDrop())
        .containsExactly("ALL");
    assertThat(pod.container.getVolumeMounts())
        .extracting(VolumeMount::getMountPath)
        .as("the data dir and java.io.tmpdir are writable")
        .contains(pod.config.dataDir().toString(), "/tmp");
    assertThat(pod.container.getResources().getLimits()).containsKey("memory");
    assertThat(pod.container.getResources().getRequests()).containsKeys("memory", "cpu");
  }

  @Test
  void shouldGiveTheTrialFilesPodTheServicesVolumeAndUser() {
    List<HasMetadata> objects = objects("overlays/trial");
    Pod pod = pod(objects);
    List<ObjectNode> nodes = Kustomize.read(K8S.resolve("overlays/trial/files-pod.yaml"));
    io.fabric8.kubernetes.api.model.Pod files =
        SERIALIZATION.unmarshal(nodes.get(0).toString(), io.fabric8.kubernetes.api.model.Pod.class);
    List<String> unknown = new ArrayList<>();
    unknownFields(files, "Pod", unknown);
    assertThat(unknown).isEmpty();

    assertThat(files.getSpec().getSecurityContext().getRunAsUser())
        .as("files it writes belong to the service's user")
        .isEqualTo(pod.spec.getSecurityContext().getRunAsUser());
    Volume volume = files.getSpec().getVolumes().get(0);
    assertThat(volume.getPersistentVolumeClaim().getClaimName())
        .isEqualTo(one(objects, PersistentVolumeClaim.class).getMetadata().getName());
    assertThat(mountPath(files.getSpec().getContainers().get(0), volume.getName()))
        .isEqualTo(pod.config.dataDir().toString());
  }

  @Test
  void shouldKeepOnlyPlaceholdersInTheExampleSecret() {
    Secret secret = exampleSecret();

    assertThat(values(secret).values())
        .allSatisfy(v -> assertThat(v).containsAnyOf("CHANGE-ME", "async_jobs"));
  }

  // ---------------------------------------------------------------------------------------------

  /** The pod as the Deployment makes it, with its environment resolved and its configuration. */
  record Pod(
      PodSpec spec,
      Container container,
      Map<String, String> labels,
      Map<String, String> env,
      SmallRyeConfig raw,
      JobsConfig config) {}

  private static Pod pod(List<HasMetadata> objects) {
    Deployment deployment = one(objects, Deployment.class);
    PodSpec spec = deployment.getSpec().getTemplate().getSpec();
    Container container = spec.getContainers().get(0);
    Map<String, String> env = new LinkedHashMap<>();
    container
        .getEnvFrom()
        .forEach(
            from ->
                env.putAll(
                    named(objects, ConfigMap.class, from.getConfigMapRef().getName()).getData()));
    for (EnvVar var : container.getEnv()) {
      env.put(var.getName(), value(objects, var));
    }
    Map<String, String> properties = new HashMap<>();
    try {
      SmallRyeConfig config =
          new SmallRyeConfigBuilder()
              .withProfile("prod")
              .withSources(new EnvConfigSource(env, 300))
              .withSources(
                  new PropertiesConfigSource(
                      Path.of("src/main/resources/application.properties").toUri().toURL(), 250))
              .withSources(new PropertiesConfigSource(properties, "defaults", 0))
              .withConverter(Duration.class, 100, new DurationConverter())
              .withMapping(JobsConfig.class)
              .build();
      return new Pod(
          spec,
          container,
          deployment.getSpec().getTemplate().getMetadata().getLabels(),
          env,
          config,
          config.getConfigMapping(JobsConfig.class));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String value(List<HasMetadata> objects, EnvVar var) {
    if (var.getValue() != null) {
      return var.getValue();
    }
    var from = var.getValueFrom();
    if (from.getFieldRef() != null) {
      assertThat(from.getFieldRef().getFieldPath()).isEqualTo("metadata.name");
      return POD;
    }
    if (from.getSecretKeyRef() != null) {
      if (objects.stream().noneMatch(Secret.class::isInstance)) {
        // The overlays leave the Secret to the installer (the trial's secrets.sh makes it).
        return "secret " + from.getSecretKeyRef().getKey();
      }
      Secret secret = named(objects, Secret.class, from.getSecretKeyRef().getName());
      String value = values(secret).get(from.getSecretKeyRef().getKey());
      assertThat(value).as("Secret key " + from.getSecretKeyRef().getKey()).isNotNull();
      return value;
    }
    if (from.getConfigMapKeyRef() != null) {
      return named(objects, ConfigMap.class, from.getConfigMapKeyRef().getName())
          .getData()
          .get(from.getConfigMapKeyRef().getKey());
    }
    throw new AssertionError("an environment variable the test cannot resolve: " + var);
  }

  private static Secret exampleSecret() {
    Secret secret =
        SERIALIZATION.unmarshal(
            Kustomize.read(K8S.resolve(EXAMPLE).resolve("secret.yaml")).get(0).toString(),
            Secret.class);
    List<String> unknown = new ArrayList<>();
    unknownFields(secret, "Secret", unknown);
    assertThat(unknown).isEmpty();
    return secret;
  }

  private static Map<String, String> values(Secret secret) {
    Map<String, String> values = new HashMap<>();
    if (secret.getData() != null) {
      secret
          .getData()
          .forEach(
              (k, v) ->
                  values.put(k, new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8)));
    }
    if (secret.getStringData() != null) {
      values.putAll(secret.getStringData());
    }
    return values;
  }

  private static String mountPath(Container container, String volume) {
    return container.getVolumeMounts().stream()
        .filter(m -> m.getName().equals(volume))
        .map(VolumeMount::getMountPath)
        .findFirst()
        .orElseThrow(() -> new AssertionError("volume " + volume + " is not mounted"));
  }

  private static boolean selects(Map<String, String> selector, Map<String, String> labels) {
    return !selector.isEmpty() && labels.entrySet().containsAll(selector.entrySet());
  }

  static List<HasMetadata> objects(String dir) {
    return RENDERED.computeIfAbsent(
        dir,
        d -> {
          Path path = K8S.resolve(d);
          List<ObjectNode> nodes = Kustomize.render(path);
          return nodes.stream()
              .map(node -> (HasMetadata) SERIALIZATION.unmarshal(node.toString()))
              .toList();
        });
  }

  private static <T extends HasMetadata> T one(List<HasMetadata> objects, Class<T> type) {
    List<T> found = objects.stream().filter(type::isInstance).map(type::cast).toList();
    assertThat(found).as("exactly one " + type.getSimpleName()).hasSize(1);
    return found.get(0);
  }

  private static <T extends HasMetadata> T named(
      List<HasMetadata> objects, Class<T> type, String name) {
    return objects.stream()
        .filter(type::isInstance)
        .map(type::cast)
        .filter(o -> o.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " named " + name));
  }

  private static Set<String> kinds(List<HasMetadata> objects) {
    return objects.stream().map(HasMetadata::getKind).collect(Collectors.toSet());
  }

  private static Set<String> canonical(List<ObjectNode> objects) {
    ObjectMapper sorted =
        new ObjectMapper().configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);
    return objects.stream()
        .map(o -> SERIALIZATION.asJson(SERIALIZATION.unmarshal(o.toString())))
        .map(
            json -> {
              try {
                return sorted.writeValueAsString(sorted.readValue(json, Object.class));
              } catch (IOException e) {
                throw new IllegalStateException(e);
              }
            })
        .collect(Collectors.toSet());
  }

  private static String verb(HttpRequest request) {
    boolean named = !request.uri().getPath().endsWith("/leases");
    return switch (request.method()) {
      case "GET" ->
          named
              ? "get"
              : (request.uri().getQuery() != null && request.uri().getQuery().contains("watch")
                  ? "watch"
                  : "list");
      case "POST" -> "create";
      case "PUT" -> "update";
      case "PATCH" -> "patch";
      case "DELETE" -> named ? "delete" : "deletecollection";
      default -> request.method();
    };
  }

  private String renewTime(String namespace, String name) {
    var lease = client.leases().inNamespace(namespace).withName(name).get();
    return String.valueOf(lease.getSpec().getRenewTime());
  }

  private static void awaitOwner(KubernetesOwnerLock lock) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!lock.isOwner()) {
      if (System.nanoTime() > deadline) {
        fail("the lock was not taken within 10 s");
      }
      Thread.sleep(20);
    }
  }

  /**
   * fabric8 keeps fields its model does not know in {@code additionalProperties} instead of
   * failing; this walks the object and collects where any landed.
   */
  private static void unknownFields(Object value, String path, List<String> found) {
    if (value == null) {
      return;
    }
    if (value instanceof Collection<?> items) {
      int i = 0;
      for (Object item : items) {
        unknownFields(item, path + "[" + i++ + "]", found);
      }
      return;
    }
    if (value instanceof Map<?, ?> map) {
      map.forEach((k, v) -> unknownFields(v, path + "." + k, found));
      return;
    }
    if (!value.getClass().getName().startsWith("io.fabric8.")) {
      return;
    }
    for (Method getter : value.getClass().getMethods()) {
      if (getter.getParameterCount() != 0
          || Modifier.isStatic(getter.getModifiers())
          || !getter.getName().startsWith("get")
          || getter.getName().equals("getClass")
          || getter.getReturnType().isPrimitive()
          || getter.getReturnType().isEnum()
          || getter.getReturnType() == String.class) {
        continue;
      }
      Object child;
      try {
        child = getter.invoke(value);
      } catch (ReflectiveOperationException e) {
        continue;
      }
      if (getter.getName().equals("getAdditionalProperties")) {
        if (child instanceof Map<?, ?> extra && !extra.isEmpty()) {
          found.add(path + ": " + new HashSet<>(extra.keySet()));
        }
      } else {
        unknownFields(child, path + "." + getter.getName().substring(3), found);
      }
    }
  }
}
