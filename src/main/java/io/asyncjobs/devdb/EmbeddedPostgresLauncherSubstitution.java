package io.asyncjobs.devdb;

import com.oracle.svm.core.annotate.Substitute;
import com.oracle.svm.core.annotate.TargetClass;
import java.nio.file.Path;

/**
 * Native executable only: replaces {@link EmbeddedPostgresLauncher#startOnce} with a method that
 * refuses. The embedded PostgreSQL library is a dev-mode and test tool ("provided" scope) that no
 * packaged application contains, and the native build links every reachable class at build time:
 * {@link EmbeddedPostgresConfigSourceFactory} is always registered, so without this the build stops
 * on the missing library. The JVM never loads this class.
 */
@TargetClass(EmbeddedPostgresLauncher.class)
final class EmbeddedPostgresLauncherSubstitution {

  private EmbeddedPostgresLauncherSubstitution() {}

  @Substitute
  static String startOnce(Path dataDir, Path workDir, boolean clean) {
    throw new IllegalStateException(
        "jobs.embedded-db.enabled is true, but the native executable has no embedded PostgreSQL;"
            + " set QUARKUS_DATASOURCE_JDBC_URL (and _USERNAME, _PASSWORD) instead");
  }
}
