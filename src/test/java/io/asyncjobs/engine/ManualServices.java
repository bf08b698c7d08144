package io.asyncjobs.engine;

/**
 * Lets a test or benchmark outside this package remove a service it registered by hand, so that the
 * next registration under the same name starts from nothing (the peers benchmark starts and stops
 * its worker once per measure).
 */
public final class ManualServices {

  private ManualServices() {}

  /** Stops the service named {@code name} and removes it from {@code manager}. */
  public static void unregister(ServiceManager manager, String name) {
    manager.unregister(name);
  }
}
