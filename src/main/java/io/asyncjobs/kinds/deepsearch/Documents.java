package io.asyncjobs.kinds.deepsearch;

import io.asyncjobs.files.FileScope;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;

/**
 * Which files deepsearch reads and what it takes from each: the searchable text and a title. Plain
 * text and Markdown are read as UTF-8; HTML is parsed with jsoup, so only the text a reader sees is
 * indexed, never tags, attributes, scripts or styles.
 */
final class Documents {

  /** At most this many bytes of one file are read; the rest of a larger file is not searched. */
  static final int MAX_DOCUMENT_BYTES = 8 << 20;

  /** A Markdown heading line: up to three spaces, one to six #, a space, the text. */
  private static final Pattern ATX_HEADING =
      Pattern.compile("^ {0,3}#{1,6}[ \\t]+(.*?\\S.*?)(?:[ \\t]+#+)?[ \\t]*$", Pattern.MULTILINE);

  private Documents() {}

  /** The kinds of file searched, by their (case-insensitive) extension. */
  enum Type {
    TEXT,
    MARKDOWN,
    HTML
  }

  /** What one file contributes to the index. */
  record Extracted(String title, String body) {}

  /** The type of a file by its name, or empty when deepsearch does not read it. */
  static Optional<Type> typeOf(Path file) {
    String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
    if (name.endsWith(".txt")) {
      return Optional.of(Type.TEXT);
    }
    if (name.endsWith(".md")) {
      return Optional.of(Type.MARKDOWN);
    }
    if (name.endsWith(".html") || name.endsWith(".htm")) {
      return Optional.of(Type.HTML);
    }
    return Optional.empty();
  }

  /**
   * Reads at most {@link #MAX_DOCUMENT_BYTES} of {@code file}, opened through {@link
   * FileScope#openRead}: only while it is a regular file inside the scope.
   */
  static byte[] read(FileScope scope, Path file) throws IOException {
    try (InputStream in = scope.openInputStream(file)) {
      return in.readNBytes(MAX_DOCUMENT_BYTES);
    }
  }

  /**
   * The title and text of a file's bytes.
   *
   * @param fileName shown as the title when the file has none of its own
   */
  static Extracted extract(Type type, byte[] bytes, String fileName) throws IOException {
    return switch (type) {
      case TEXT -> new Extracted(fileName, new String(bytes, StandardCharsets.UTF_8));
      case MARKDOWN -> {
        String text = new String(bytes, StandardCharsets.UTF_8);
        yield new Extracted(markdownTitle(text).orElse(fileName), text);
      }
      case HTML -> html(bytes, fileName);
    };
  }

  /** HTML: the text of the body; the title from {@code <title>}, else the first heading. */
  private static Extracted html(byte[] bytes, String fileName) throws IOException {
    // A null charset lets jsoup take it from a byte order mark or a meta tag, else UTF-8.
    Document doc = Jsoup.parse(new ByteArrayInputStream(bytes), null, "");
    String title = doc.title().strip();
    if (title.isEmpty()) {
      Element heading = doc.selectFirst("h1, h2, h3, h4, h5, h6");
      title = heading == null ? "" : heading.text().strip();
    }
    Element body = doc.body();
    String text = body == null ? doc.text() : body.text();
    return new Extracted(title.isEmpty() ? fileName : title, text);
  }

  /** The text of the first ATX heading ({@code # Title}), if any. */
  static Optional<String> markdownTitle(String text) {
    Matcher heading = ATX_HEADING.matcher(text);
    return heading.find() ? Optional.of(heading.group(1).strip()) : Optional.empty();
  }

  /**
   * {@link #markdownTitle(String)} of the UTF-8 text in {@code bytes[0, length)}, decoding only the
   * lines that hold a {@code #}. A heading never spans a {@code \n} or {@code \r} (neither the
   * pattern's spaces, its {@code .} nor its {@code \S} take them), and those bytes are never part
   * of a multi-byte character, so the first such line with a heading holds the first heading.
   */
  static Optional<String> markdownTitle(byte[] bytes, int length) {
    int from = 0;
    while (from < length) {
      int hash = RawText.indexOfByte(bytes, from, length, (byte) '#');
      if (hash < 0) {
        return Optional.empty();
      }
      int start = hash;
      while (start > 0 && bytes[start - 1] != '\n' && bytes[start - 1] != '\r') {
        start--;
      }
      int end = hash;
      while (end < length && bytes[end] != '\n' && bytes[end] != '\r') {
        end++;
      }
      Optional<String> title =
          markdownTitle(new String(bytes, start, end - start, StandardCharsets.UTF_8));
      if (title.isPresent()) {
        return title;
      }
      from = end;
    }
    return Optional.empty();
  }

  /** A stretch of a document's text, and whether the document goes on before and after it. */
  record Stretch(String text, boolean moreBefore, boolean moreAfter) {}

  /**
   * About {@code span} bytes of a text file from {@code from} on (within its first {@link
   * #MAX_DOCUMENT_BYTES}), cut at spaces where one is near, never inside a character, as text.
   */
  static Stretch readStretch(FileScope scope, Path file, long from, int span) throws IOException {
    byte[] bytes = new byte[span];
    int length = 0;
    long size;
    try (SeekableByteChannel channel = scope.openRead(file)) {
      size = Math.min(channel.size(), MAX_DOCUMENT_BYTES);
      long start = Math.min(from, size);
      channel.position(start);
      int wanted = (int) Math.min(span, size - start);
      while (length < wanted) {
        int n = channel.read(ByteBuffer.wrap(bytes, length, wanted - length));
        if (n < 0) {
          break;
        }
        length += n;
      }
      from = start;
    }
    return stretchOf(bytes, length, from, size);
  }

  /**
   * The stretch of a text that {@code bytes[0, length)} hold, which start at {@code from} in a text
   * of {@code size} bytes: cut as {@link #readStretch} cuts.
   */
  static Stretch stretchOf(byte[] bytes, int length, long from, long size) {
    int start = 0;
    if (from > 0) {
      start = cut(bytes, 0, Math.min(length, 256), true);
    }
    int end = length;
    if (from + length < size) {
      end = cut(bytes, Math.max(start, length - 256), length, false);
    }
    String text = new String(bytes, start, end - start, StandardCharsets.UTF_8);
    return new Stretch(text, from + start > 0, from + end < size);
  }

  /**
   * Where to cut {@code bytes} within {@code [from, to)}: after the first (or at the last) space,
   * else at the first (or last) character boundary.
   */
  private static int cut(byte[] bytes, int from, int to, boolean forward) {
    if (forward) {
      for (int i = from; i < to; i++) {
        if (bytes[i] == ' ' || bytes[i] == '\n') {
          return i + 1;
        }
      }
      int i = from;
      while (i < to && (bytes[i] & 0xc0) == 0x80) {
        i++;
      }
      return i;
    }
    for (int i = to - 1; i >= from; i--) {
      if (bytes[i] == ' ' || bytes[i] == '\n') {
        return i;
      }
    }
    int i = to;
    while (i > from && (bytes[i - 1] & 0xc0) == 0x80) {
      i--;
    }
    // Drop a character the stretch may cut: its lead byte and what follows it.
    return i > from && (bytes[i - 1] & 0xc0) == 0xc0 ? i - 1 : i;
  }

  /** A reusable buffer that holds the first {@link #MAX_DOCUMENT_BYTES} of one file at a time. */
  static final class Buffer {

    /**
     * Read in pieces of this size: the JDK's own direct buffer for a read stays small, and each
     * piece is still in the processor's cache when it is counted.
     */
    private static final int PIECE = 256 << 10;

    byte[] bytes = new byte[64 << 10];
    int length;

    /** What RawText counts, taken as the pieces come in. */
    RawText.Tally tally;

    /**
     * Room for more than {@code size} bytes, in a power of two, so that a thread reading files of
     * every size allocates a few buffers at most.
     */
    private static int roomFor(long size) {
      long room = Long.highestOneBit(Math.max(size, 1)) << 1;
      return (int) Math.min(room, MAX_DOCUMENT_BYTES);
    }

    /**
     * Reads at most {@link #MAX_DOCUMENT_BYTES} of {@code file}, opened through {@link
     * FileScope#openRead}: only while it is a regular file inside the scope.
     *
     * @param expected the size the walk saw, to size the buffer once
     * @param html whether the file is HTML, for what the tally looks for
     */
    void read(FileScope scope, Path file, long expected, boolean html) throws IOException {
      length = 0;
      tally = new RawText.Tally();
      if (bytes.length <= expected && bytes.length < MAX_DOCUMENT_BYTES) {
        bytes = new byte[roomFor(expected)];
      }
      try (SeekableByteChannel channel = scope.openRead(file)) {
        while (length < MAX_DOCUMENT_BYTES) {
          if (length == bytes.length) {
            bytes = Arrays.copyOf(bytes, roomFor(length)); // the file grew since the walk
          }
          int room = Math.min(bytes.length - length, PIECE);
          int n = channel.read(ByteBuffer.wrap(bytes, length, room));
          if (n < 0) {
            break;
          }
          tally.add(bytes, length, length + n, html);
          length += n;
        }
      }
    }
  }
}
