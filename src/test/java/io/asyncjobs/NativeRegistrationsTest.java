package io.asyncjobs;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.quarkus.runtime.annotations.RegisterForReflection;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What the native executable must be told that the JVM finds by itself. Jackson reads a body's
 * record components reflectively, and a native executable answers a 500 ("Jackson was unable to
 * serialize type") for a type nobody registered; Quarkus registers a route's declared types itself,
 * but not what a route returns inside a {@code Response}, streams as events, posts as a callback or
 * the CLI prints. So every public record of the API and operations packages, the bodies our users
 * see, is registered, on itself or on the record it belongs to.
 */
class NativeRegistrationsTest {

  @Test
  void shouldRegisterEveryPublicBodyRecordForReflection() {
    JavaClasses classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.asyncjobs.api", "io.asyncjobs.operations");
    List<String> unregistered =
        classes.stream()
            .filter(c -> c.isRecord() && c.getModifiers().contains(JavaModifier.PUBLIC))
            // Values of an interface for the kinds (PayloadCheck's), public only as interface
            // members are, and never a body.
            .filter(c -> c.getEnclosingClass().map(e -> !e.isInterface()).orElse(true))
            .filter(c -> !registered(c))
            .map(JavaClass::getName)
            .sorted()
            .toList();

    assertThat(unregistered).as("public records not registered for reflection").isEmpty();
  }

  /** Annotated itself, or nested in a type registered with its nested types. */
  private static boolean registered(JavaClass type) {
    if (type.isAnnotatedWith(RegisterForReflection.class)) {
      return true;
    }
    Optional<JavaClass> enclosing = type.getEnclosingClass();
    return enclosing.isPresent()
        && enclosing.get().isAnnotatedWith(RegisterForReflection.class)
        && !enclosing.get().getAnnotationOfType(RegisterForReflection.class).ignoreNested()
        && registered(enclosing.get());
  }
}
