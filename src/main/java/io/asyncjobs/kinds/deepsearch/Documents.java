package io.asyncjobs.kinds.deepsearch;

import io.asyncjobs.files.FileScope;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
}
