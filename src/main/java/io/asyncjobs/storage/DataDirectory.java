package io.asyncjobs.storage;

import io.asyncjobs.config.JobsConfig;
import io.quarkus.runtime.Startup;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jboss.logging.Logger;

/**
 * The shared volume every replica mounts ({@code jobs.data-dir}). Created at start; a folder the
 * service cannot write stops the start instead of failing every job later.
 */
@Startup
@ApplicationScoped
public class DataDirectory {

  private static final Logger LOG = Logger.getLogger(DataDirectory.class);

  private final Path root;

  DataDirectory(JobsConfig config) {
    this.root = config.dataDir().toAbsolutePath().normalize();
  }

  @PostConstruct
  void prepare() {
    try {
      Files.createDirectories(root);
    } catch (IOException e) {
      throw new UncheckedIOException("jobs.data-dir: cannot create " + root, e);
    }
    if (!Files.isWritable(root)) {
      throw new IllegalStateException("jobs.data-dir: " + root + " is not writable");
    }
    LOG.infof("Data directory %s", root);
  }

  /** The absolute, normalized root of the data directory. */
  public Path root() {
    return root;
  }
}
