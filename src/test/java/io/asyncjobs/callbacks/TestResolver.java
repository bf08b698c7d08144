package io.asyncjobs.callbacks;

import jakarta.enterprise.context.ApplicationScoped;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The name lookups of callback deliveries in tests: names a test put here answer what it said (or
 * hang, for {@link #HANG}); every other name goes to the system's resolver, as without this bean.
 */
@ApplicationScoped
public class TestResolver implements CallbackUrls.Resolver {

  /** An answer that never comes: the lookup sleeps until interrupted. */
  public static final String HANG = "hang";

  private final Map<String, String> answers = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> lookups = new ConcurrentHashMap<>();

  /** From now on {@code name} resolves to {@code address} (an IP literal), or hangs. */
  public void answer(String name, String address) {
    answers.put(name, address);
  }

  /** How often {@code name} was looked up. */
  public int lookups(String name) {
    AtomicInteger n = lookups.get(name);
    return n == null ? 0 : n.get();
  }

  /** Forgets every answer and count. */
  public void clear() {
    answers.clear();
    lookups.clear();
  }

  @Override
  public InetAddress[] resolve(String host) throws UnknownHostException {
    lookups.computeIfAbsent(host, h -> new AtomicInteger()).incrementAndGet();
    String address = answers.get(host);
    if (address == null) {
      return InetAddress.getAllByName(host);
    }
    if (address.equals(HANG)) {
      try {
        Thread.sleep(60_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      throw new UnknownHostException(host);
    }
    return new InetAddress[] {InetAddress.getByName(address)};
  }
}
