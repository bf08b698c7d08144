package io.asyncjobs.testing;

import io.quarkus.test.junit.callback.QuarkusTestAfterEachCallback;
import io.quarkus.test.junit.callback.QuarkusTestBeforeEachCallback;
import io.quarkus.test.junit.callback.QuarkusTestMethodContext;
import io.restassured.RestAssured;
import io.restassured.filter.Filter;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Puts a {@link ContractFilter} on RestAssured before every {@code @QuarkusTest} method (registered
 * in {@code META-INF/services}), so every suite's exchanges with {@code /api} are held to the
 * OpenAPI document the running app serves, without any test asking for it. The document is fetched
 * once per app (base URL) and kept. Filters a test adds itself ({@code RestAssured.filters(...)} or
 * {@code given().filter(...)}) run alongside; one that calls {@code replaceFiltersWith} drops the
 * guard for the rest of that method only. A class or method marked {@link ContractExempt} runs
 * without it.
 */
public class ContractGuard implements QuarkusTestBeforeEachCallback, QuarkusTestAfterEachCallback {

  private static final Map<String, ContractDocument> DOCUMENTS = new ConcurrentHashMap<>();

  @Override
  public void beforeEach(QuarkusTestMethodContext context) {
    removeGuard();
    Method method = context.getTestMethod();
    if (exempt(context.getTestInstance().getClass(), method)) {
      return;
    }
    String test = context.getTestInstance().getClass().getSimpleName() + "#" + method.getName();
    String profile = profileOf(context.getTestInstance().getClass());
    RestAssured.filters(
        new ContractFilter(
            () -> servedDocument(profile),
            () -> RestAssured.port,
            violations -> ContractViolations.report(test, violations)));
  }

  /**
   * The test profile a class runs under: an app started with another profile may serve another
   * document (other kinds enabled) on the same port.
   */
  private static String profileOf(Class<?> type) {
    for (Class<?> c = type; c != null; c = c.getEnclosingClass()) {
      io.quarkus.test.junit.TestProfile profile =
          c.getAnnotation(io.quarkus.test.junit.TestProfile.class);
      if (profile != null) {
        return profile.value().getName();
      }
    }
    return "default";
  }

  /**
   * The document of the app RestAssured points at, fetched at its first use and kept for the app's
   * address and test profile.
   */
  private static ContractDocument servedDocument(String profile) {
    String base = RestAssured.baseURI + ":" + RestAssured.port;
    return DOCUMENTS.computeIfAbsent(
        base + " " + profile, key -> ContractDocument.parse(ContractDocument.fetch(base)));
  }

  @Override
  public void afterEach(QuarkusTestMethodContext context) {
    removeGuard();
  }

  private static boolean exempt(Class<?> type, Method method) {
    if (method.isAnnotationPresent(ContractExempt.class)) {
      return true;
    }
    for (Class<?> c = type; c != null; c = c.getEnclosingClass()) {
      if (c.isAnnotationPresent(ContractExempt.class)) {
        return true;
      }
    }
    return false;
  }

  private static void removeGuard() {
    List<Filter> kept =
        RestAssured.filters().stream().filter(f -> !(f instanceof ContractFilter)).toList();
    if (kept.size() != RestAssured.filters().size()) {
      RestAssured.replaceFiltersWith(kept);
    }
  }
}
