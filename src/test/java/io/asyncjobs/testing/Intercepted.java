package io.asyncjobs.testing;

import io.agroal.api.AgroalDataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;

/**
 * Wraps a JDBC object (a data source, a connection, a statement, a result set) so that a test sees,
 * and may replace or refuse, what each call answers: how tests count what a statement returns or
 * lose an answer after the database has done the work.
 */
public final class Intercepted {

  /** What becomes of one call's answer. */
  @FunctionalInterface
  public interface After {
    /**
     * The answer to give for {@code method} called with {@code args}, which answered {@code result}
     * on the real object; may throw instead.
     */
    Object apply(Method method, Object[] args, Object result) throws Exception;
  }

  /** What a test puts in place of one prepared statement. */
  @FunctionalInterface
  public interface Statements {
    /** The statement to hand out for {@code sql}; {@code real} is the driver's. */
    PreparedStatement wrap(String sql, PreparedStatement real) throws Exception;
  }

  private Intercepted() {}

  /**
   * {@code real} as a data source whose connections hand out, for every statement they prepare,
   * what {@code statements} makes of it.
   */
  public static AgroalDataSource statements(AgroalDataSource real, Statements statements) {
    return wrap(
        AgroalDataSource.class,
        real,
        (method, args, result) ->
            result instanceof Connection c
                ? wrap(
                    Connection.class,
                    c,
                    (m, a, r) ->
                        r instanceof PreparedStatement ps && m.getName().equals("prepareStatement")
                            ? statements.wrap((String) a[0], ps)
                            : r)
                : result);
  }

  /** {@code real} as a {@code type} whose every answer passes through {@code after}. */
  public static <T> T wrap(Class<T> type, T real, After after) {
    InvocationHandler handler =
        (proxy, method, args) -> {
          Object result;
          try {
            result = method.invoke(real, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
          return after.apply(method, args, result);
        };
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler));
  }
}
