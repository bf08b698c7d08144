package io.asyncjobs.auth;

import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.time.Clock;
import io.smallrye.jwt.auth.principal.DefaultJWTParser;
import io.smallrye.jwt.auth.principal.ParseException;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.microprofile.jwt.JsonWebToken;

/**
 * Remembers tokens it has verified, so a client polling with the same token pays for the signature
 * check once, not on every request (the RSA check was the largest single cost of a status read). A
 * token is remembered until it expires or {@code jobs.auth.token-cache-ttl} passes, whichever comes
 * first; at most {@code jobs.auth.token-cache-size} tokens are kept. Only tokens that verified are
 * kept: a bad token is checked, and refused, every time. Every other way of reading a token (with
 * another context, a given key, decrypting) is smallrye-jwt's own, inherited as it is.
 */
@Alternative
@Priority(1)
@ApplicationScoped
public class CachingJwtParser extends DefaultJWTParser {

  /** Longer tokens are verified every time: the cache's memory stays bounded by size too. */
  private static final int MAX_TOKEN_CHARS = 4096;

  private record Verified(JsonWebToken token, long validUntilMillis) {}

  private final int capacity;
  private final long ttlMillis;
  private final ConcurrentHashMap<String, Verified> verified = new ConcurrentHashMap<>();
  private final AtomicLong hits = new AtomicLong();

  private final Clock clock;

  CachingJwtParser(JobsConfig config, Clock clock) {
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
    JsonWebToken parsed = super.parse(token);
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
}
