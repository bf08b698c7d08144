package io.asyncjobs.queue;

/** The queue's statements as SQL's PREPARE takes them, for tests that plan or count their reads. */
final class PreparedSql {

  private PreparedSql() {}

  /** {@code sql} with its JDBC placeholders ({@code ?}) numbered {@code $1}, {@code $2}, ... */
  static String numbered(String sql) {
    StringBuilder out = new StringBuilder(sql.length() + 16);
    int n = 0;
    for (char ch : sql.toCharArray()) {
      if (ch == '?') {
        out.append('$').append(++n);
      } else {
        out.append(ch);
      }
    }
    return out.toString();
  }

  /** How many JDBC placeholders {@code sql} has. */
  static long placeholders(String sql) {
    return sql.chars().filter(ch -> ch == '?').count();
  }
}
