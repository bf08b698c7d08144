package io.asyncjobs.devdb;

import com.oracle.svm.core.annotate.Substitute;
import com.oracle.svm.core.annotate.TargetClass;
import io.smallrye.config.ConfigSourceContext;

/**
 * Native executable only: replaces {@link EmbeddedPostgresConfigSourceFactory#startServer} with a
 * method that refuses. The embedded PostgreSQL library is a dev-mode and test tool ("provided"
 * scope) that no packaged application contains, and the native build analyses every method it can
 * reach from the always-registered factory. With this, nothing in the executable reaches {@link
 * EmbeddedPostgresLauncher}, whose methods name the library's classes. The target is the factory,
 * not the launcher: the builder lists a target's declared methods to match substitutions, which
 * fails on the launcher when the library is absent. The JVM never loads this class.
 */
@TargetClass(EmbeddedPostgresConfigSourceFactory.class)
final class EmbeddedPostgresConfigSourceFactorySubstitution {

  private EmbeddedPostgresConfigSourceFactorySubstitution() {}

  @Substitute
  static String startServer(ConfigSourceContext context) {
    throw new IllegalStateException(
        "jobs.embedded-db.enabled is true, but the native executable has no embedded PostgreSQL;"
            + " set QUARKUS_DATASOURCE_JDBC_URL (and _USERNAME, _PASSWORD) instead");
  }
}
