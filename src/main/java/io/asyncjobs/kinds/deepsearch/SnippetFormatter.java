package io.asyncjobs.kinds.deepsearch;

import java.util.ArrayList;
import java.util.List;
import org.apache.lucene.search.uhighlight.Passage;
import org.apache.lucene.search.uhighlight.PassageFormatter;

/**
 * Turns the highlighter's passages into snippets: HTML-safe text in which each hit is wrapped in
 * {@code <mark>...</mark>}. Everything else is escaped ({@code & < > " '}), runs of whitespace
 * become one space, a passage longer than {@link #MAX_CHARS} is cut to a window around its first
 * hit, and an ellipsis marks each side where the text goes on.
 */
final class SnippetFormatter extends PassageFormatter {

  /** The longest snippet, in characters of the original text. */
  static final int MAX_CHARS = 300;

  /** How much text a cut snippet keeps before its first hit. */
  private static final int LEAD_CHARS = 100;

  private static final String ELLIPSIS = "\u2026";

  /** Whether the text given is a stretch of a longer one, which goes on before or after it. */
  private final boolean moreBefore;

  private final boolean moreAfter;

  /** For a whole document's text. */
  SnippetFormatter() {
    this(false, false);
  }

  /** For a stretch of a document's text, that goes on before and or after what is given. */
  SnippetFormatter(boolean moreBefore, boolean moreAfter) {
    this.moreBefore = moreBefore;
    this.moreAfter = moreAfter;
  }

  /** Returns a {@code List<String>}, one snippet per passage, in the order of the text. */
  @Override
  public Object format(Passage[] passages, String content) {
    List<String> snippets = new ArrayList<>(passages.length);
    for (Passage passage : passages) {
      snippets.add(snippet(passage, content));
    }
    return snippets;
  }

  private String snippet(Passage passage, String content) {
    int start = passage.getStartOffset();
    int end = Math.min(passage.getEndOffset(), content.length());
    int[] matchStarts = passage.getMatchStarts();
    int[] matchEnds = passage.getMatchEnds();
    int matches = passage.getNumMatches();
    if (end - start > MAX_CHARS) {
      int anchor = matches > 0 ? matchStarts[0] : start;
      int from = Math.max(start, anchor - LEAD_CHARS);
      int to = Math.min(end, from + MAX_CHARS);
      if (matches > 0) {
        to = Math.max(to, Math.min(end, matchEnds[0]));
      }
      start = from > passage.getStartOffset() ? afterSpace(content, from, anchor) : from;
      int floor = matches > 0 ? Math.max(start, matchEnds[0]) : start;
      end = to < passage.getEndOffset() ? beforeSpace(content, to, floor) : to;
      // Never split a surrogate pair.
      if (start < end && Character.isLowSurrogate(content.charAt(start))) {
        start++;
      }
      if (end > start && end < content.length() && Character.isLowSurrogate(content.charAt(end))) {
        end--;
      }
    }
    StringBuilder out = new StringBuilder(end - start + 32);
    // Passages are cut at word boundaries, so one that does not reach the start (or end) of the
    // text is a fragment: say so.
    if (moreBefore || textBefore(content, start)) {
      out.append(ELLIPSIS);
    }
    int pos = start;
    for (int i = 0; i < matches; i++) {
      int matchStart = matchStarts[i];
      int matchEnd = Math.min(matchEnds[i], end);
      if (matchStart < pos || matchStart >= end) {
        continue; // outside the window, or overlapping the previous hit
      }
      escape(content, pos, matchStart, out);
      out.append("<mark>");
      escape(content, matchStart, matchEnd, out);
      out.append("</mark>");
      pos = matchEnd;
    }
    escape(content, pos, end, out);
    if (moreAfter || textAfter(content, end)) {
      out.append(ELLIPSIS);
    }
    return out.toString().strip();
  }

  /** Whether anything but whitespace comes before {@code offset}. */
  private static boolean textBefore(String content, int offset) {
    for (int i = offset - 1; i >= 0; i--) {
      if (!Character.isWhitespace(content.charAt(i))) {
        return true;
      }
    }
    return false;
  }

  /** Whether anything but whitespace comes at or after {@code offset}. */
  private static boolean textAfter(String content, int offset) {
    for (int i = offset; i < content.length(); i++) {
      if (!Character.isWhitespace(content.charAt(i))) {
        return true;
      }
    }
    return false;
  }

  /** The first position after a space in {@code [from, limit)}, or {@code from} if none. */
  private static int afterSpace(String content, int from, int limit) {
    for (int i = from; i < limit; i++) {
      if (Character.isWhitespace(content.charAt(i))) {
        return i + 1;
      }
    }
    return from;
  }

  /** The last space in {@code (floor, to]}, or {@code to} if none. */
  private static int beforeSpace(String content, int to, int floor) {
    for (int i = to; i > floor; i--) {
      if (i < content.length() && Character.isWhitespace(content.charAt(i))) {
        return i;
      }
    }
    return to;
  }

  /** Appends {@code content[from, to)} HTML-escaped, with whitespace runs as one space. */
  static void escape(String content, int from, int to, StringBuilder out) {
    boolean space = false;
    for (int i = from; i < to; i++) {
      char c = content.charAt(i);
      if (Character.isWhitespace(c)) {
        if (!space) {
          out.append(' ');
          space = true;
        }
        continue;
      }
      space = false;
      switch (c) {
        case '&' -> out.append("&amp;");
        case '<' -> out.append("&lt;");
        case '>' -> out.append("&gt;");
        case '"' -> out.append("&quot;");
        case '\'' -> out.append("&#39;");
        default -> out.append(c);
      }
    }
  }
}
