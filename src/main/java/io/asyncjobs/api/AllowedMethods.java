package io.asyncjobs.api;

import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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

  /**
   * The method annotations, named here rather than read from their {@code @HttpMethod}
   * meta-annotation, which a native executable does not keep for classes not registered.
   */
  private static final Map<Class<? extends Annotation>, String> METHODS =
      Map.of(
          GET.class, HttpMethod.GET,
          POST.class, HttpMethod.POST,
          PUT.class, HttpMethod.PUT,
          DELETE.class, HttpMethod.DELETE,
          PATCH.class, HttpMethod.PATCH);

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
        Path sub = method.getAnnotation(Path.class);
        Pattern path = pattern(join(base, sub == null ? "" : sub.value()));
        METHODS.forEach(
            (annotation, name) -> {
              if (method.isAnnotationPresent(annotation)) {
                routes.add(new Route(path, name));
                if (annotation == GET.class) {
                  routes.add(new Route(path, HttpMethod.HEAD)); // served for every GET
                }
              }
            });
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
