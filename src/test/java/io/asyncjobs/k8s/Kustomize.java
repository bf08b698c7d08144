package io.asyncjobs.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Renders a kustomization folder into its objects: with {@code kubectl kustomize} where kubectl is
 * installed, otherwise with the few transformations our own kustomizations use (resources, labels,
 * namespace, images, merge and delete patches). The manifest test checks the two agree where both
 * run.
 */
final class Kustomize {

  static final ObjectMapper YAML = new YAMLMapper();

  /** Kinds that kustomize's namespace setting leaves alone. */
  private static final Set<String> CLUSTER_SCOPED =
      Set.of("Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass");

  private Kustomize() {}

  /** Whether kubectl runs here; asked once, since each answer costs a process. */
  static boolean kubectlAvailable() {
    return Kubectl.AVAILABLE;
  }

  /** Holds the answer, found the first time it is asked for. */
  private static final class Kubectl {
    static final boolean AVAILABLE = probeKubectl();
  }

  private static boolean probeKubectl() {
    try {
      Process process = new ProcessBuilder("kubectl", "version", "--client").start();
      process.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
      return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The objects of {@code dir}: through kubectl where it runs, else by {@link #build}. */
  static List<ObjectNode> render(Path dir) {
    return kubectlAvailable() ? kubectl(dir) : build(dir);
  }

  /** The objects {@code kubectl kustomize dir} prints. */
  static List<ObjectNode> kubectl(Path dir) {
    try {
      Process process =
          new ProcessBuilder("kubectl", "kustomize", dir.toString())
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
        throw new IllegalStateException("kubectl kustomize " + dir + " failed");
      }
      return documents(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The objects of {@code dir}, rendered without kubectl. */
  static List<ObjectNode> build(Path dir) {
    JsonNode kustomization = read(dir.resolve("kustomization.yaml")).get(0);
    List<ObjectNode> objects = new ArrayList<>();
    for (JsonNode resource : kustomization.path("resources")) {
      Path path = dir.resolve(resource.asText()).normalize();
      objects.addAll(Files.isDirectory(path) ? build(path) : read(path));
    }
    for (JsonNode patch : kustomization.path("patches")) {
      List<ObjectNode> changes =
          patch.has("patch")
              ? documents(patch.get("patch").asText())
              : read(dir.resolve(patch.path("path").asText()));
      for (ObjectNode change : changes) {
        if ("delete".equals(change.path("$patch").asText())) {
          boolean removed =
              objects.removeIf(
                  o ->
                      o.path("kind").equals(change.path("kind"))
                          && o.at("/metadata/name").equals(change.at("/metadata/name")));
          if (!removed) {
            throw new IllegalStateException("nothing to delete: " + change);
          }
          continue;
        }
        ObjectNode target =
            objects.stream()
                .filter(o -> o.path("kind").equals(change.path("kind")))
                .filter(o -> o.path("metadata").path("name").equals(change.at("/metadata/name")))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("nothing to patch: " + change));
        merge(target, change);
      }
    }
    for (JsonNode set : kustomization.path("labels")) {
      objects.forEach(o -> merge(o.with("metadata").with("labels"), set.path("pairs")));
    }
    String namespace = kustomization.path("namespace").asText(null);
    if (namespace != null) {
      for (ObjectNode o : objects) {
        if (!CLUSTER_SCOPED.contains(o.path("kind").asText())) {
          o.with("metadata").put("namespace", namespace);
        }
        for (JsonNode subject : o.path("subjects")) {
          if ("ServiceAccount".equals(subject.path("kind").asText())) {
            ((ObjectNode) subject).put("namespace", namespace);
          }
        }
      }
    }
    for (JsonNode image : kustomization.path("images")) {
      for (ObjectNode o : objects) {
        for (JsonNode container : o.at("/spec/template/spec/containers")) {
          String current = container.path("image").asText();
          String name =
              current.contains(":") ? current.substring(0, current.indexOf(':')) : current;
          if (name.equals(image.path("name").asText())) {
            ((ObjectNode) container)
                .put(
                    "image",
                    image.path("newName").asText(name) + ":" + image.path("newTag").asText());
          }
        }
      }
    }
    return objects;
  }

  /** A JSON merge patch: objects merge key by key, anything else replaces. */
  private static void merge(ObjectNode target, JsonNode change) {
    for (Iterator<Map.Entry<String, JsonNode>> it = change.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> field = it.next();
      JsonNode existing = target.get(field.getKey());
      if (existing instanceof ObjectNode object && field.getValue().isObject()) {
        merge(object, field.getValue());
      } else {
        target.set(field.getKey(), field.getValue().deepCopy());
      }
    }
  }

  static List<ObjectNode> read(Path file) {
    try {
      return documents(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<ObjectNode> documents(String yaml) {
    List<ObjectNode> objects = new ArrayList<>();
    try (var parser = new YAMLFactory().createParser(yaml)) {
      for (Iterator<ObjectNode> it = YAML.readValues(parser, ObjectNode.class); it.hasNext(); ) {
        ObjectNode node = it.next();
        if (node != null && !node.isEmpty()) {
          objects.add(node);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return objects;
  }
}
