package io.asyncjobs.lock;

import io.asyncjobs.config.JobsConfig;
import java.net.InetAddress;
import java.net.UnknownHostException;

/** Where a replica's name comes from: configuration, the pod name, then the host name. */
final class Identity {

  private Identity() {}

  static String of(JobsConfig.Lock config) {
    return config
        .identity()
        .or(() -> java.util.Optional.ofNullable(System.getenv("POD_NAME")))
        .filter(s -> !s.isBlank())
        .orElseGet(Identity::hostName);
  }

  private static String hostName() {
    String env = System.getenv("HOSTNAME");
    if (env != null && !env.isBlank()) {
      return env;
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return "replica-" + ProcessHandle.current().pid();
    }
  }
}
