package io.asyncjobs.time;

import io.quarkus.arc.DefaultBean;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import java.time.Instant;

/** Supplies the system clock unless another {@link Clock} bean is present (tests bring one). */
public class SystemClockProducer {

  @Produces
  @DefaultBean
  @ApplicationScoped
  Clock systemClock() {
    return Instant::now;
  }
}
