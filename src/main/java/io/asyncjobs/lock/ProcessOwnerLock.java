package io.asyncjobs.lock;

import io.agroal.api.AgroalDataSource;
import io.quarkus.arc.DefaultBean;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The owner lock of a single process: it always owns, and takes its fencing epoch from the database
 * sequence once, on first use. Stands in until a real lock bean replaces it.
 */
@DefaultBean
@ApplicationScoped
public class ProcessOwnerLock implements OwnerLock {

  private final AgroalDataSource dataSource;
  private final AtomicLong epoch = new AtomicLong();

  ProcessOwnerLock(AgroalDataSource dataSource) {
    this.dataSource = dataSource;
  }

  @Override
  public boolean isOwner() {
    return true;
  }

  @Override
  public long epoch() {
    long current = epoch.get();
    if (current != 0) {
      return current;
    }
    synchronized (this) {
      if (epoch.get() == 0) {
        epoch.set(nextEpoch());
      }
      return epoch.get();
    }
  }

  @Override
  public String identity() {
    return ProcessHandle.current().pid() + "@" + System.getenv().getOrDefault("HOSTNAME", "local");
  }

  private long nextEpoch() {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT nextval('jobs_owner_epoch_seq')")) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException("could not take a fencing epoch", e);
    }
  }
}
