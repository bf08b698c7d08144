package io.asyncjobs.kinds.deepsearch;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.apache.lucene.search.Query;
import org.apache.lucene.util.AttributeImpl;
import org.junit.jupiter.api.Test;

/**
 * The native executable finds what {@link LuceneReflection} registers and nothing else; these
 * checks compare its lists with the Lucene jars on the class path, which are the ones packaged.
 */
class LuceneReflectionTest {

  @Test
  void shouldRegisterEveryProviderOfTheServiceFilesPackagedForTheNativeExecutable()
      throws IOException {
    List<String> serviceFiles = luceneServiceFilesIncluded();
    assertThat(serviceFiles)
        .as("the codec service files in quarkus.native.resources.includes")
        .contains(
            "META-INF/services/org.apache.lucene.codecs.Codec",
            "META-INF/services/org.apache.lucene.codecs.PostingsFormat");

    Set<String> providers = new TreeSet<>();
    for (String file : serviceFiles) {
      for (URL copy : Collections.list(getClass().getClassLoader().getResources(file))) {
        providers.addAll(providersIn(copy));
      }
    }

    assertThat(registered(LuceneReflection.ServiceProviders.class))
        .containsExactlyInAnyOrderElementsOf(providers);
  }

  @Test
  void shouldRegisterEveryAttributeImplementationLuceneMakesByName() throws Exception {
    Set<String> implementations = new TreeSet<>();
    Path jar =
        Path.of(AttributeImpl.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    try (JarFile lucene = new JarFile(jar.toFile())) {
      for (String entry : lucene.stream().map(e -> e.getName()).toList()) {
        if (!entry.endsWith("AttributeImpl.class") || entry.startsWith("META-INF/")) {
          continue;
        }
        Class<?> type = Class.forName(entry.replace('/', '.').replace(".class", ""));
        // The default factory can make only public classes with a public no-argument
        // constructor; Lucene makes any other kind itself, with new.
        if (type != AttributeImpl.class
            && Modifier.isPublic(type.getModifiers())
            && !Modifier.isAbstract(type.getModifiers())
            && Arrays.stream(type.getConstructors()).anyMatch(c -> c.getParameterCount() == 0)) {
          implementations.add(type.getName());
        }
      }
    }

    assertThat(implementations).isNotEmpty();
    assertThat(registered(LuceneReflection.AttributeImplementations.class))
        .containsExactlyInAnyOrderElementsOf(implementations);
  }

  @Test
  void shouldRegisterTheQueryMethodsItsInitializerLooksUp() throws Exception {
    RegisterForReflection registration =
        LuceneReflection.QueryRewriteMethods.class.getAnnotation(RegisterForReflection.class);

    assertThat(registration.targets()).containsExactly(Query.class);
    assertThat(registration.methods()).isTrue();
    // The two methods org.apache.lucene.util.VirtualMethod asks for when Query loads.
    assertThat(Query.class.getDeclaredMethod("rewrite", org.apache.lucene.index.IndexReader.class))
        .isNotNull();
    assertThat(
            Query.class.getDeclaredMethod("rewrite", org.apache.lucene.search.IndexSearcher.class))
        .isNotNull();
  }

  /** The Lucene service files that application.properties puts into the native executable. */
  private static List<String> luceneServiceFilesIncluded() throws IOException {
    Properties config = new Properties();
    try (Reader in =
        Files.newBufferedReader(Path.of("src/main/resources/application.properties"))) {
      config.load(in);
    }
    List<String> files = new ArrayList<>();
    for (String include : config.getProperty("quarkus.native.resources.includes", "").split(",")) {
      if (include.trim().startsWith("META-INF/services/org.apache.lucene.")) {
        files.add(include.trim());
      }
    }
    return files;
  }

  private static List<String> providersIn(URL serviceFile) throws IOException {
    try (InputStream in = serviceFile.openStream()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8)
          .lines()
          .map(l -> l.replaceAll("#.*", "").trim())
          .filter(l -> !l.isEmpty())
          .toList();
    }
  }

  private static List<String> registered(Class<?> holder) {
    RegisterForReflection registration = holder.getAnnotation(RegisterForReflection.class);
    return Stream.concat(
            Arrays.stream(registration.targets()).map(Class::getName),
            Arrays.stream(registration.classNames()))
        .toList();
  }
}
