package io.asyncjobs.auth;

import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.Config;
import org.jboss.logging.Logger;

/**
 * Says at start, loudly, when no token verification key is configured: the service still starts
 * (health and metrics work) but refuses every {@code /api} request with 401. Also says when tokens
 * are not bound to an issuer or an audience. Silent in a process that serves no HTTP (the admin
 * CLI), where no token is ever checked.
 */
@ApplicationScoped
public class TokenKeyCheck {

  private static final Logger LOG = Logger.getLogger(TokenKeyCheck.class);

  void check(@Observes StartupEvent start, Config config) {
    if (!config.getOptionalValue("quarkus.http.host-enabled", Boolean.class).orElse(true)) {
      return;
    }
    boolean configured =
        config.getOptionalValue("mp.jwt.verify.publickey.location", String.class).isPresent()
            || config.getOptionalValue("mp.jwt.verify.publickey", String.class).isPresent();
    if (!configured) {
      LOG.warn(
          "No token verification key: set MP_JWT_VERIFY_PUBLICKEY_LOCATION (a PEM or JWK file, or"
              + " a JWKS URL) and MP_JWT_VERIFY_ISSUER. Until then every /api request gets 401.");
      return;
    }
    if (config.getOptionalValue("mp.jwt.verify.issuer", String.class).isEmpty()) {
      LOG.warn(
          "MP_JWT_VERIFY_ISSUER is not set: tokens from any issuer signed with the key are taken.");
    }
    if (config.getOptionalValue("mp.jwt.verify.audiences", String.class).isEmpty()) {
      LOG.info(
          "MP_JWT_VERIFY_AUDIENCES is not set: tokens are taken whatever their audience. When the"
              + " identity provider also issues tokens for other services, set it.");
    }
  }
}
