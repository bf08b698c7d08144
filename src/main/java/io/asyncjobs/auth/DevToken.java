package io.asyncjobs.auth;

import io.quarkus.arc.profile.IfBuildProfile;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.jwt.build.Jwt;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Duration;
import java.util.Set;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Dev mode only: prints two ready-to-use bearer tokens (an admin and a plain user), signed with the
 * throw-away dev keys, and a curl line that enqueues a job with one.
 */
@ApplicationScoped
@IfBuildProfile("dev")
public class DevToken {

  private static final Logger LOG = Logger.getLogger(DevToken.class);

  @ConfigProperty(name = "quarkus.http.host", defaultValue = "127.0.0.1")
  String host;

  @ConfigProperty(name = "quarkus.http.port", defaultValue = "8080")
  int port;

  void print(@Observes StartupEvent start) {
    String admin = sign("dev-admin", Set.of(Caller.ADMIN, "user"));
    String user = sign("dev-user", Set.of("user"));
    String base = "http://" + host + ":" + port;
    LOG.infof(
        """
        Dev tokens (valid 30 days, dev keys in .dev/jwt; never use them anywhere else):
          admin: %s
          user:  %s
        Try:
          curl -si -X POST %s/api/noop -H 'Authorization: Bearer %s' \\
               -H 'Content-Type: application/json' -d '{"sleep_ms": 3000, "progress_steps": 3}'
        """,
        admin, user, base, user);
  }

  private static String sign(String subject, Set<String> groups) {
    return Jwt.subject(subject)
        .groups(groups)
        .claim("owner_kind", "user")
        .expiresIn(Duration.ofDays(30))
        .sign();
  }
}
