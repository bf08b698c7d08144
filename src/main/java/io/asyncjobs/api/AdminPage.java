package io.asyncjobs.api;

import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Sends {@code /admin} to {@code /admin/}, where the admin page (static files under {@code
 * META-INF/resources/admin}) is served as the folder's index.
 */
@ApplicationScoped
public class AdminPage {

  void route(@Observes Router router) {
    // A plain Vert.x route rather than a REST resource: a resource at /admin would also claim
    // /admin/ and the files beneath it, and it answers nothing but a redirect.
    router
        .get("/admin")
        .handler(
            context -> {
              if (!"/admin".equals(context.normalizedPath())) {
                context.next();
                return;
              }
              // Relative, so the redirect stays right behind a proxy that adds a path prefix.
              context.response().setStatusCode(301).putHeader(HttpHeaders.LOCATION, "admin/").end();
            });
  }
}
