package io.asyncjobs.api;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * What the JSON set-up loads by name at start, registered so that a native executable finds it too;
 * the JVM needs none of it. {@code quarkus.jackson.property-naming-strategy} and the OpenAPI
 * document's naming both name the snake_case strategy, and the executable otherwise stops at start
 * with a ClassNotFoundException for it.
 */
@RegisterForReflection(targets = PropertyNamingStrategies.SnakeCaseStrategy.class)
final class JacksonReflection {

  private JacksonReflection() {}
}
