package io.asyncjobs.testing;

import io.smallrye.jwt.build.Jwt;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Set;

/** Bearer tokens for tests, signed with the throw-away keys the test profile makes. */
public final class Tokens {

  private Tokens() {}

  /** A valid token of an ordinary caller. */
  public static String user(String id) {
    return Jwt.subject(id)
        .groups(Set.of("user"))
        .claim("owner_kind", "user")
        .expiresIn(3600)
        .sign();
  }

  /**
   * A valid token of an ordinary caller of the principal kind {@code kind} ({@code service}...).
   */
  public static String ofKind(String kind, String id) {
    return Jwt.subject(id).groups(Set.of("user")).claim("owner_kind", kind).expiresIn(3600).sign();
  }

  /** A valid token of a caller holding the admin role. */
  public static String admin(String id) {
    return Jwt.subject(id)
        .groups(Set.of("user", "admin"))
        .claim("owner_kind", "user")
        .expiresIn(3600)
        .sign();
  }

  /** A valid token naming its holder only by {@code preferred_username}, without a subject. */
  public static String withoutSubject(String name) {
    return Jwt.preferredUserName(name).groups(Set.of("user")).expiresIn(3600).sign();
  }

  /** An admin's token naming its holder only by {@code preferred_username}, without a subject. */
  public static String adminWithoutSubject(String name) {
    return Jwt.preferredUserName(name).groups(Set.of("user", "admin")).expiresIn(3600).sign();
  }

  /** A token that expired an hour ago, well beyond the allowed clock skew. */
  public static String expired(String id) {
    Instant now = Instant.now();
    return Jwt.subject(id)
        .groups(Set.of("user"))
        .issuedAt(now.minusSeconds(7200))
        .expiresAt(now.minusSeconds(3600))
        .sign();
  }

  /** A well-formed token signed with a key the service does not trust. */
  public static String signedByStranger(String id) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
      generator.initialize(2048);
      KeyPair stranger = generator.generateKeyPair();
      return Jwt.subject(id)
          .groups(Set.of("user", "admin"))
          .expiresIn(3600)
          .sign(stranger.getPrivate());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
