package io.asyncjobs.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.asyncjobs.kinds.noop.NoopService;
import io.asyncjobs.queue.Job;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class ServiceManagerTest {

  @Inject ServiceManager manager;

  @AfterEach
  void tearDown() {
    manager.unregister("handmade");
    manager.unregister("broken");
    manager.unregister("counting");
  }

  @Test
  void shouldRegisterEveryJobServiceBeanWithoutExtraCode() {
    assertThat(manager.all())
        .extracting(BaseService::name)
        .contains("controlled", "linecount", "noop");
  }

  @Test
  void shouldKeepTheNoopKindOffUnlessConfigured() {
    assertThat(new NoopService().enabledByDefault()).isFalse();
    // %test enables it with jobs.services.noop.enabled=true.
    assertThat(manager.jobService("noop")).isPresent();
  }

  @Test
  void shouldRegisterAHandMadeServiceOnceByName() {
    JobService handmade = new StaticService("handmade");

    assertThat(manager.register(handmade)).isTrue();

    assertThat(manager.jobService("handmade")).containsSame(handmade);
    assertThatThrownBy(() -> manager.register(new StaticService("handmade")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("handmade");
  }

  @Test
  void shouldSkipAServiceDisabledInConfiguration() {
    // %test sets jobs.services.disabledkind.enabled=false
    assertThat(manager.register(new StaticService("disabledkind"))).isFalse();
    assertThat(manager.service("disabledkind")).isEmpty();
  }

  @Test
  void shouldGoOnTickingWhenOneServiceFails() {
    AtomicInteger runs = new AtomicInteger();
    manager.register(
        new BaseService() {
          @Override
          public String name() {
            return "broken";
          }

          @Override
          public RunResult runOnce() {
            throw new IllegalStateException("database on holiday");
          }
        });
    manager.register(
        new BaseService() {
          @Override
          public String name() {
            return "counting";
          }

          @Override
          public RunResult runOnce() {
            runs.incrementAndGet();
            return () -> true;
          }
        });

    manager.tick();
    manager.tick();

    assertThat(runs.get()).isEqualTo(2);
  }

  @Test
  void shouldGoOnTickingTheOthersWhileOneServiceHangsOrThrowsAnError() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    CountDownLatch hanging = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    manager.register(
        new BaseService() {
          @Override
          public String name() {
            return "broken";
          }

          @Override
          public RunResult runOnce() {
            throw new StackOverflowError("an Error, not an exception");
          }
        });
    manager.register(
        new BaseService() {
          @Override
          public String name() {
            return "handmade";
          }

          @Override
          public RunResult runOnce() {
            hanging.countDown();
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            return () -> true;
          }
        });
    manager.register(
        new BaseService() {
          @Override
          public String name() {
            return "counting";
          }

          @Override
          public RunResult runOnce() {
            runs.incrementAndGet();
            return () -> true;
          }
        });

    try {
      long start = System.nanoTime();
      manager.tick();
      assertThat(hanging.await(5, TimeUnit.SECONDS)).isTrue();
      manager.tick();
      manager.tick();

      assertThat(runs.get()).as("every tick ran the healthy service").isEqualTo(3);
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .as("three ticks, each waiting at most one tick interval for the hanging run")
          .isLessThan(Duration.ofSeconds(5));
    } finally {
      release.countDown();
    }
  }

  /** A hand-made kind that never gets jobs. */
  private static final class StaticService extends JobService {
    private final String kind;

    StaticService(String kind) {
      this.kind = kind;
    }

    @Override
    public String kind() {
      return kind;
    }

    @Override
    public String title() {
      return "Hand-made " + kind;
    }

    @Override
    protected Map<String, Object> process(Job job) {
      return Map.of();
    }

    @Override
    protected void cleanup(Job job) {}
  }
}
