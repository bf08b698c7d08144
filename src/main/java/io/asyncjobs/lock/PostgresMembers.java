package io.asyncjobs.lock;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.Set;
import javax.sql.DataSource;

/**
 * The members in PostgreSQL mode: every replica's owner-lock sessions carry an {@code
 * application_name} made of the lock's base name and the replica's identity, so the sessions in
 * {@code pg_stat_activity} are the live replicas. A replica that dies loses its sessions with its
 * process (or, cut off, once TCP keepalive ends them); nothing else is written anywhere.
 */
public final class PostgresMembers implements Members {

  /** Every lock session's application name begins with this. */
  static final String PREFIX = "async-jobs:";

  /** MembersList: the application names of this deployment's lock sessions in this database. */
  private static final String MEMBERS_LIST =
      """
      SELECT DISTINCT application_name FROM pg_stat_activity
       WHERE datname = current_database() AND application_name LIKE ?
      """;

  /** PostgreSQL keeps 63 bytes of an application name. */
  private static final int MAX_NAME = 63;

  private final DataSource dataSource;
  private final String baseName;
  private final String self;

  public PostgresMembers(DataSource dataSource, String baseName, String identity) {
    this.dataSource = dataSource;
    this.baseName = baseName;
    this.self = applicationName(baseName, identity);
  }

  /**
   * The application name of a lock session: the prefix, a short hash of the locks' base name (two
   * deployments in one database do not count each other), and the identity, shortened with a hash
   * of its own when it would not fit.
   */
  static String applicationName(String baseName, String identity) {
    String head = PREFIX + hash(baseName, 6) + ":";
    String name = head + identity;
    if (name.getBytes(StandardCharsets.UTF_8).length <= MAX_NAME) {
      return name;
    }
    String tail = "~" + hash(identity, 8);
    int room = MAX_NAME - head.length() - tail.length();
    return head + identity.substring(0, Math.min(identity.length(), Math.max(0, room))) + tail;
  }

  /**
   * The identity in a lock session's application name (possibly shortened, ending in {@code
   * ~hash}); null when the name is not a lock session's.
   */
  public static String identityOf(String applicationName) {
    if (applicationName == null || !applicationName.startsWith(PREFIX)) {
      return null;
    }
    int at = applicationName.indexOf(':', PREFIX.length());
    return at < 0 ? null : applicationName.substring(at + 1);
  }

  private static String hash(String value, int digits) {
    return String.format("%08x", value.hashCode() & 0xffffffffL).substring(8 - digits);
  }

  @Override
  public void beat() {
    // The lock sessions themselves say that this replica is alive.
  }

  @Override
  public Set<String> live() throws SQLException {
    Set<String> live = new HashSet<>();
    live.add(self);
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(MEMBERS_LIST)) {
      ps.setString(1, PREFIX + hash(baseName, 6) + ":%");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          live.add(rs.getString(1));
        }
      }
    }
    return live;
  }

  @Override
  public String self() {
    return self;
  }
}
