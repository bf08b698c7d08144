package io.asyncjobs.lock;

import io.asyncjobs.config.JobsConfig;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;
import java.util.function.Function;

/** Where a replica's name comes from: configuration, the pod name, then the host name. */
public final class Identity {

  /** The environment variable the Deployment fills with the pod's name (downward API). */
  public static final String POD_NAME = "POD_NAME";

  private Identity() {}

  static String of(JobsConfig.Lock config) {
    return of(config, System::getenv);
  }

  /** This replica's name as {@code config} and the environment {@code env} give it. */
  public static String of(JobsConfig.Lock config, Function<String, String> env) {
    return config
        .identity()
        .or(() -> Optional.ofNullable(env.apply(POD_NAME)))
        .filter(s -> !s.isBlank())
        .orElseGet(() -> hostName(env));
  }

  private static String hostName(Function<String, String> env) {
    String name = env.apply("HOSTNAME");
    if (name != null && !name.isBlank()) {
      return name;
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return "replica-" + ProcessHandle.current().pid();
    }
  }
}
