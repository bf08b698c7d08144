package io.asyncjobs.testing;

import io.agroal.api.AgroalDataSource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

/** Plain SQL against the test database, for setting up rows and reading what the code wrote. */
@ApplicationScoped
public class Database {

  private final AgroalDataSource dataSource;

  Database(AgroalDataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Runs a statement and returns the update count. */
  public int update(String sql, Object... args) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = prepare(c, sql, args)) {
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Runs a query and returns each row as a column-name to value map. */
  public List<Map<String, Object>> query(String sql, Object... args) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = prepare(c, sql, args);
        ResultSet rs = ps.executeQuery()) {
      List<Map<String, Object>> rows = new ArrayList<>();
      int columns = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 1; i <= columns; i++) {
          row.put(rs.getMetaData().getColumnLabel(i), rs.getObject(i));
        }
        rows.add(row);
      }
      return rows;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Deletes every job, and the per-minute counts of finished jobs, which outlive the rows they
   * counted (a job swept within the hour still finished in its minute).
   */
  public void clearJobs() {
    update("DELETE FROM jobs");
    update("DELETE FROM job_finished_minutes");
  }

  /**
   * A session of its own, outside the pool: for a test that needs a session no other test used (its
   * plans, its locks, its memory). The caller closes it.
   */
  public Connection newSession() throws SQLException {
    Config config = ConfigProvider.getConfig();
    return DriverManager.getConnection(
        config.getValue("quarkus.datasource.jdbc.url", String.class),
        config.getValue("quarkus.datasource.username", String.class),
        config.getOptionalValue("quarkus.datasource.password", String.class).orElse(""));
  }

  /** The underlying datasource. */
  public AgroalDataSource dataSource() {
    return dataSource;
  }

  private static PreparedStatement prepare(Connection c, String sql, Object... args)
      throws SQLException {
    PreparedStatement ps = c.prepareStatement(sql);
    for (int i = 0; i < args.length; i++) {
      ps.setObject(i + 1, args[i]);
    }
    return ps;
  }
}
