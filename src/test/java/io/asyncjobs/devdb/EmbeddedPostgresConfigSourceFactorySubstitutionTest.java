package io.asyncjobs.devdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.oracle.svm.core.annotate.Substitute;
import com.oracle.svm.core.annotate.TargetClass;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The native build matches a substitution against its target's declared methods, on the packaged
 * application's class path, where the embedded database library is absent; only the native build
 * would say when that fails. This says it in every build, on a class path without the library.
 */
class EmbeddedPostgresConfigSourceFactorySubstitutionTest {

  @Test
  void shouldResolveTheSubstitutionTargetWithoutTheEmbeddedDatabaseLibrary() throws Exception {
    Class<?> target =
        EmbeddedPostgresConfigSourceFactorySubstitution.class
            .getAnnotation(TargetClass.class)
            .value();
    Method[] substitutes =
        Arrays.stream(EmbeddedPostgresConfigSourceFactorySubstitution.class.getDeclaredMethods())
            .filter(m -> m.isAnnotationPresent(Substitute.class))
            .toArray(Method[]::new);
    assertThat(substitutes).extracting(Method::getName).containsExactly("startServer");

    try (WithoutEmbeddedDatabase loader = new WithoutEmbeddedDatabase()) {
      Class<?> packaged = loader.loadClass(target.getName());
      assertThat(packaged.getClassLoader()).isSameAs(loader);
      for (Method substitute : substitutes) {
        Method original =
            packaged.getDeclaredMethod(substitute.getName(), substitute.getParameterTypes());
        assertThat(original.getReturnType()).isEqualTo(substitute.getReturnType());
        assertThat(Modifier.isStatic(original.getModifiers()))
            .isEqualTo(Modifier.isStatic(substitute.getModifiers()));
      }
    }
  }

  @Test
  void shouldHideTheLibraryAsThePackagedApplicationDoes() throws Exception {
    // The class path this test builds must be one on which the launcher cannot be resolved (what
    // stopped the native build when the launcher was the target), or the test above proves nothing.
    try (WithoutEmbeddedDatabase loader = new WithoutEmbeddedDatabase()) {
      Class<?> launcher = loader.loadClass(EmbeddedPostgresLauncher.class.getName());
      assertThatThrownBy(launcher::getDeclaredMethods).isInstanceOf(NoClassDefFoundError.class);
    }
  }

  /**
   * Loads this package's classes from the build output itself and refuses the embedded database
   * library, as the class path of {@code target/quarkus-app} (and so of the native build) does.
   */
  private static final class WithoutEmbeddedDatabase extends URLClassLoader {

    WithoutEmbeddedDatabase() {
      super(
          new URL[] {
            EmbeddedPostgresConfigSourceFactory.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
          },
          EmbeddedPostgresConfigSourceFactorySubstitutionTest.class.getClassLoader());
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      synchronized (getClassLoadingLock(name)) {
        if (name.startsWith("io.zonky.")) {
          throw new ClassNotFoundException(name + " (not in the packaged application)");
        }
        if (name.startsWith(EmbeddedPostgresLauncher.class.getPackageName() + ".")) {
          Class<?> loaded = findLoadedClass(name);
          return loaded != null ? loaded : findClass(name);
        }
        return super.loadClass(name, resolve);
      }
    }
  }
}
