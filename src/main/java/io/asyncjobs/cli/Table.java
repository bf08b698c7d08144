package io.asyncjobs.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Rows of text in aligned columns, for a terminal. Rows can arrive page by page: each {@link
 * #flush()} prints what came since the last, under a header printed once, so a long listing never
 * sits in memory whole. A column only ever widens.
 */
final class Table {

  private static final String GAP = "  ";

  private final PrintStream out;
  private final String[] headers;
  private final int[] widths;
  private final List<String[]> rows = new ArrayList<>();
  private boolean started;

  Table(PrintStream out, String... headers) {
    this.out = out;
    this.headers = headers.clone();
    this.widths = new int[headers.length];
    for (int i = 0; i < headers.length; i++) {
      widths[i] = headers[i].length();
    }
  }

  /** Adds a row; a null cell shows as {@code -}. */
  void row(String... cells) {
    if (cells.length != headers.length) {
      throw new IllegalArgumentException(
          "a row of " + cells.length + " cells in a table of " + headers.length + " columns");
    }
    String[] row = new String[cells.length];
    for (int i = 0; i < cells.length; i++) {
      row[i] = cells[i] == null || cells[i].isEmpty() ? "-" : printable(cells[i]);
    }
    rows.add(row);
  }

  /** Prints the rows added since the last flush, with the header before the first. */
  void flush() {
    for (String[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    if (!started && !rows.isEmpty()) {
      print(headers);
      started = true;
    }
    rows.forEach(this::print);
    rows.clear();
  }

  /**
   * Text safe to print to a terminal. Job names and errors come from callers: line breaks and tabs
   * become spaces, and every other control character (the escape sequences that write the clipboard
   * or rewrite the screen start with one) and every bidirectional override becomes {@code ?}.
   */
  static String printable(String text) {
    StringBuilder out = new StringBuilder(text.length());
    text.codePoints()
        .forEach(
            c -> {
              if (c == '\n' || c == '\r' || c == '\t') {
                out.append(' ');
              } else if (Character.getType(c) == Character.CONTROL
                  || (c >= 0x202A && c <= 0x202E)
                  || (c >= 0x2066 && c <= 0x2069)) {
                out.append('?');
              } else {
                out.appendCodePoint(c);
              }
            });
    return out.toString();
  }

  /** Whether any row was printed. */
  boolean printedAny() {
    return started;
  }

  private void print(String[] cells) {
    StringBuilder line = new StringBuilder();
    for (int i = 0; i < cells.length; i++) {
      if (i > 0) {
        line.append(GAP);
      }
      line.append(cells[i]);
      // The last column is not padded, so lines carry no trailing blanks.
      if (i < cells.length - 1) {
        line.append(" ".repeat(widths[i] - cells[i].length()));
      }
    }
    out.println(line);
  }
}
