package io.asyncjobs.auth;

import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.time.Clock;
import io.smallrye.jwt.auth.principal.DefaultJWTParser;
import io.smallrye.jwt.auth.principal.JWTAuthContextInfo;
import io.smallrye.jwt.auth.principal.JWTParser;
import io.smallrye.jwt.auth.principal.ParseException;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.crypto.SecretKey;
import org.eclipse.microprofile.jwt.JsonWebToken;

/**
 * Remembers tokens it has verified, so a client polling with the same token pays for the signature
 * check once, not on every request (the RSA check was the largest single cost of a status read). A
 * token is remembered until it expires or {@code jobs.auth.token-cache-ttl} passes, whichever comes
 * first; at most {@code jobs.auth.token-cache-size} tokens are kept. Only tokens that verified are
 * kept: a bad token is checked, and refused, every time.
 */
@Alternative
@Priority(1)
@ApplicationScoped
public class CachingJwtParser implements JWTParser {

  /** Longer tokens are verified every time: the cache's memory stays bounded by size too. */
  private static final int MAX_TOKEN_CHARS = 4096;

  private record Verified(JsonWebToken token, long validUntilMillis) {}

  private final DefaultJWTParser delegate;
  private final int capacity;
  private final long ttlMillis;
  private final ConcurrentHashMap<String, Verified> verified = new ConcurrentHashMap<>();
  private final AtomicLong hits = new AtomicLong();

  private final Clock clock;

  CachingJwtParser(DefaultJWTParser delegate, JobsConfig config, Clock clock) {
    this.delegate = delegate;
    this.clock = clock;
    this.capacity = config.auth().tokenCacheSize();
    this.ttlMillis = config.auth().tokenCacheTtl().toMillis();
  }

  @Override
  public JsonWebToken parse(String token) throws ParseException {
    long now = clock.now().toEpochMilli();
    Verified known = verified.get(token);
    if (known != null) {
      if (now < known.validUntilMillis()) {
        hits.incrementAndGet();
        return known.token();
      }
      verified.remove(token, known);
    }
    JsonWebToken parsed = delegate.parse(token);
    if (capacity > 0 && token.length() <= MAX_TOKEN_CHARS) {
      long expiresMillis = parsed.getExpirationTime() * 1000;
      long until = Math.min(expiresMillis, now + ttlMillis);
      if (until > now && hasRoom(now)) {
        verified.put(token, new Verified(parsed, until));
      }
    }
    return parsed;
  }

  /**
   * Whether another token fits; expired entries are dropped first. When every entry is still valid
   * the new token is simply not remembered, so a burst of new tokens cannot evict the clients
   * already known.
   */
  private boolean hasRoom(long now) {
    if (verified.size() < capacity) {
      return true;
    }
    verified.values().removeIf(v -> now >= v.validUntilMillis());
    return verified.size() < capacity;
  }

  /** How many requests were answered from memory; for tests and diagnostics. */
  public long hits() {
    return hits.get();
  }

  @Override
  public JsonWebToken parse(String token, JWTAuthContextInfo context) throws ParseException {
    return delegate.parse(token, context);
  }

  @Override
  public JsonWebToken verify(String token, PublicKey key) throws ParseException {
    return delegate.verify(token, key);
  }

  @Override
  public JsonWebToken verify(String token, SecretKey key) throws ParseException {
    return delegate.verify(token, key);
  }

  @Override
  public JsonWebToken verify(String token, String secret) throws ParseException {
    return delegate.verify(token, secret);
  }

  @Override
  public JsonWebToken decrypt(String token, PrivateKey key) throws ParseException {
    return delegate.decrypt(token, key);
  }

  @Override
  public JsonWebToken decrypt(String token, SecretKey key) throws ParseException {
    return delegate.decrypt(token, key);
  }

  @Override
  public JsonWebToken decrypt(String token, String secret) throws ParseException {
    return delegate.decrypt(token, secret);
  }

  @Override
  public JsonWebToken parseOnly(String token) throws ParseException {
    return delegate.parseOnly(token);
  }
}
