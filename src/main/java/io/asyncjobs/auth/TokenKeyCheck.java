package io.asyncjobs.auth;

import io.asyncjobs.config.JobsConfig;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.Config;
import org.jboss.logging.Logger;

/**
 * Checks at start how tokens are verified. Without an issuer ({@code mp.jwt.verify.issuer}) the
 * service refuses to start, since it would take a token from any issuer signed with the key, unless
 * {@code jobs.auth.allow-any-issuer} says to. Without a verification key it says so, loudly: the
 * service still starts (health and metrics work) but refuses every {@code /api} request with 401.
 * It also says when tokens are not bound to an audience. A process that serves no HTTP (the admin
 * CLI) checks no token, so it checks nothing here either.
 */
@ApplicationScoped
public class TokenKeyCheck {

  private static final Logger LOG = Logger.getLogger(TokenKeyCheck.class);

  void check(@Observes StartupEvent start, Config config, JobsConfig jobs) {
    if (!config.getOptionalValue("quarkus.http.host-enabled", Boolean.class).orElse(true)) {
      return;
    }
    if (config.getOptionalValue("mp.jwt.verify.issuer", String.class).isEmpty()) {
      if (!jobs.auth().allowAnyIssuer()) {
        throw new IllegalStateException(
            "MP_JWT_VERIFY_ISSUER (mp.jwt.verify.issuer) is not set: tokens from any issuer"
                + " signed with the verification key would be taken. Set it to the iss your"
                + " identity provider puts in its tokens, or set JOBS_AUTH_ALLOW_ANY_ISSUER=true"
                + " (jobs.auth.allow-any-issuer) to take them whatever their issuer.");
      }
      LOG.warn(
          "MP_JWT_VERIFY_ISSUER is not set and jobs.auth.allow-any-issuer is true: tokens from any"
              + " issuer signed with the key are taken.");
    }
    boolean configured =
        config.getOptionalValue("mp.jwt.verify.publickey.location", String.class).isPresent()
            || config.getOptionalValue("mp.jwt.verify.publickey", String.class).isPresent();
    if (!configured) {
      LOG.warn(
          "No token verification key: set MP_JWT_VERIFY_PUBLICKEY_LOCATION (a PEM or JWK file, or"
              + " a JWKS URL). Until then every /api request gets 401.");
      return;
    }
    if (config.getOptionalValue("mp.jwt.verify.audiences", String.class).isEmpty()) {
      LOG.info(
          "MP_JWT_VERIFY_AUDIENCES is not set: tokens are taken whatever their audience. When the"
              + " identity provider also issues tokens for other services, set it.");
    }
  }
}
