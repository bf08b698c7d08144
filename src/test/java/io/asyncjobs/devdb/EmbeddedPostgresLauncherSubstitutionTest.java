package io.asyncjobs.devdb;

import static org.assertj.core.api.Assertions.assertThat;

import com.oracle.svm.core.annotate.Substitute;
import com.oracle.svm.core.annotate.TargetClass;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The native build refuses a substitution whose method has no twin in its target, and only the
 * native build would say so; this says it in every build.
 */
class EmbeddedPostgresLauncherSubstitutionTest {

  @Test
  void shouldReplaceOnlyMethodsTheLauncherHas() throws Exception {
    Class<?> target =
        EmbeddedPostgresLauncherSubstitution.class.getAnnotation(TargetClass.class).value();
    Method[] substitutes =
        Arrays.stream(EmbeddedPostgresLauncherSubstitution.class.getDeclaredMethods())
            .filter(m -> m.isAnnotationPresent(Substitute.class))
            .toArray(Method[]::new);

    assertThat(target).isEqualTo(EmbeddedPostgresLauncher.class);
    assertThat(substitutes).extracting(Method::getName).containsExactly("startOnce");
    for (Method substitute : substitutes) {
      Method original =
          target.getDeclaredMethod(substitute.getName(), substitute.getParameterTypes());
      assertThat(original.getReturnType()).isEqualTo(substitute.getReturnType());
      assertThat(Modifier.isStatic(original.getModifiers()))
          .isEqualTo(Modifier.isStatic(substitute.getModifiers()));
    }
  }
}
