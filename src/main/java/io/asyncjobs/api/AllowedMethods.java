package io.asyncjobs.api;

import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.Path;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The methods a route of ours takes, for the {@code Allow} header of a 405 (RFC 9110 says a 405
 * carries one). Quarkus REST refuses a method a route lacks without naming the ones it has, so they
 * are read once from the resources' annotations. The kinds' routes set their own.
 */
@RegisterForReflection(targets = {JobsResource.class, AdminResource.class})
final class AllowedMethods {

  /** One route: its path as a pattern, and a method it takes. */
  private record Route(Pattern path, String method) {}

  private static final List<Route> ROUTES = routes(JobsResource.class, AdminResource.class);

  private AllowedMethods() {}

  /** The methods {@code path} takes, comma-separated, or null when no route of ours has it. */
  static String of(String path) {
    String absolute = path.startsWith("/") ? path : "/" + path;
    Set<String> methods = new TreeSet<>();
    for (Route route : ROUTES) {
      if (route.path().matcher(absolute).matches()) {
        methods.add(route.method());
      }
    }
    return methods.isEmpty() ? null : String.join(", ", methods);
  }

  private static List<Route> routes(Class<?>... resources) {
    List<Route> routes = new ArrayList<>();
    for (Class<?> resource : resources) {
      String base = resource.getAnnotation(Path.class).value();
      for (Method method : resource.getDeclaredMethods()) {
        for (Annotation annotation : method.getAnnotations()) {
          HttpMethod http = annotation.annotationType().getAnnotation(HttpMethod.class);
          if (http != null) {
            Path sub = method.getAnnotation(Path.class);
            routes.add(
                new Route(pattern(join(base, sub == null ? "" : sub.value())), http.value()));
          }
        }
      }
    }
    return routes;
  }

  private static String join(String base, String sub) {
    String path = (base + "/" + sub).replaceAll("/+", "/");
    return path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
  }

  /** {@code /api/jobs/{uid}} as a pattern that takes any one segment for {@code {uid}}. */
  private static Pattern pattern(String template) {
    StringBuilder regex = new StringBuilder();
    for (String part : template.split("(?=\\{)|(?<=\\})")) {
      regex.append(part.startsWith("{") ? "[^/]+" : Pattern.quote(part));
    }
    return Pattern.compile(regex + "/?");
  }
}
