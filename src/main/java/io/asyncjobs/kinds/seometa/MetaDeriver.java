package io.asyncjobs.kinds.seometa;

import java.text.BreakIterator;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;

/**
 * Derives a page's title, meta description and Open Graph tags from its content, and patches them
 * into a copy of the page. Lengths are counted in Unicode code points.
 */
final class MetaDeriver {

  /** Longest proposed title. */
  static final int TITLE_MAX = 60;

  /** Longest proposed description. */
  static final int DESCRIPTION_MAX = 155;

  /** A sentence cut must keep at least this much, or the description is cut at a word instead. */
  static final int SENTENCE_CUT_MIN = 50;

  /** Stop collecting paragraph text once this much is there. */
  private static final int COLLECT = 2 * DESCRIPTION_MAX;

  /** A paragraph with fewer words is not meaningful (a caption, a button, a date). */
  static final int MIN_PARAGRAPH_WORDS = 5;

  /** A text without enough spaces for words is meaningful from this many characters. */
  static final int MIN_UNSPACED_LENGTH = 40;

  /** The mark appended to text cut at a word boundary. */
  static final String ELLIPSIS = "\u2026";

  /** Separators between a title's parts, for example "Page | Site". */
  private static final Pattern TITLE_SEPARATOR = Pattern.compile("\\s+[|\u2013\u2014\u00b7:-]\\s+");

  /** Punctuation that should not end a text cut at a word. */
  private static final Pattern TRAILING_JOINERS =
      Pattern.compile("[\\s,;:(\\[{/&+\u2013\u2014-]+$");

  /** Characters that end a sentence, also followed by closing quotes or brackets. */
  private static final Pattern SENTENCE_END =
      Pattern.compile(".*[.!?\u2026\u3002\uff01\uff1f][\"'\u201d\u2019)\\]]*$", Pattern.DOTALL);

  /**
   * What the page has and what is proposed.
   *
   * @param currentTitle the page's {@code <title>}, or null
   * @param currentDescription its meta description, or null
   * @param currentOgTitle its {@code og:title}, or null
   * @param currentOgDescription its {@code og:description}, or null
   * @param title the proposed title, or null when nothing could be derived
   * @param titleSource where it came from: {@code title}, {@code h1}, {@code h2} or {@code
   *     file_name}
   * @param description the proposed description, or null when the page has no usable text
   * @param descriptionSource {@code paragraphs}, {@code existing}, {@code body_text} or {@code
   *     none}
   */
  record Proposal(
      String currentTitle,
      String currentDescription,
      String currentOgTitle,
      String currentOgDescription,
      String title,
      String titleSource,
      String description,
      String descriptionSource) {}

  private MetaDeriver() {}

  /** Derives the proposal for the page at {@code path} (relative to the site). */
  static Proposal derive(Document doc, String path) {
    Element titleElement = doc.selectFirst("title");
    String currentTitle = titleElement == null ? null : normalize(titleElement.text());
    String currentDescription = meta(doc, "name", "description");
    Locale locale = locale(doc);

    String title = null;
    String titleSource = null;
    if (currentTitle != null && !currentTitle.isEmpty()) {
      title = currentTitle;
      titleSource = "title";
    } else {
      for (String heading : List.of("h1", "h2")) {
        Element h = doc.selectFirst(heading);
        if (h != null && !normalize(h.text()).isEmpty()) {
          title = normalize(h.text());
          titleSource = heading;
          break;
        }
      }
      if (title == null) {
        title = fromFileName(path);
        titleSource = "file_name";
      }
    }
    title = shortenTitle(title, locale);

    String description;
    String descriptionSource;
    String paragraphs = paragraphs(doc);
    if (!paragraphs.isEmpty()) {
      description = paragraphs;
      descriptionSource = "paragraphs";
    } else if (currentDescription != null && !currentDescription.isEmpty()) {
      description = currentDescription;
      descriptionSource = "existing";
    } else if (doc.body() != null && meaningful(normalize(doc.body().text()))) {
      description = normalize(doc.body().text());
      descriptionSource = "body_text";
    } else {
      description = null;
      descriptionSource = "none";
    }
    if (description != null) {
      description = shortenDescription(description, locale);
    }
    return new Proposal(
        currentTitle,
        currentDescription,
        meta(doc, "property", "og:title"),
        meta(doc, "property", "og:description"),
        title,
        titleSource,
        description,
        descriptionSource);
  }

  /**
   * The text of the first meaningful paragraphs: {@code <p>} elements of the main content ({@code
   * main}, {@code article} or {@code [role=main]} when the page has one, else the body), outside
   * navigation, headers, footers, asides and forms, that are {@link #meaningful}; joined until
   * there is more than enough text to cut from.
   */
  static String paragraphs(Document doc) {
    Element root = doc.selectFirst("main, [role=main], article");
    if (root == null) {
      root = doc.body();
    }
    if (root == null) {
      return "";
    }
    StringBuilder text = new StringBuilder();
    for (Element p : root.select("p")) {
      if (p.closest("nav, header, footer, aside, form") != null) {
        continue;
      }
      String t = normalize(p.text());
      if (!meaningful(t)) {
        continue;
      }
      if (text.length() > 0) {
        text.append(' ');
      }
      text.append(t);
      if (text.length() >= COLLECT) {
        break;
      }
    }
    return text.toString();
  }

  /**
   * A title of at most {@link #TITLE_MAX} characters: as it is when it fits; else without its last
   * parts after a separator ({@code |}, {@code -}, {@code –}, {@code —}, {@code ·}, {@code :}) as
   * long as that makes it fit; else cut at a word boundary with an ellipsis.
   */
  static String shortenTitle(String title, Locale locale) {
    if (length(title) <= TITLE_MAX) {
      return title;
    }
    List<Integer> separators = new ArrayList<>();
    var matcher = TITLE_SEPARATOR.matcher(title);
    while (matcher.find()) {
      separators.add(matcher.start());
    }
    for (int i = separators.size() - 1; i >= 0; i--) {
      String head = title.substring(0, separators.get(i)).strip();
      if (!head.isEmpty() && length(head) <= TITLE_MAX) {
        return head;
      }
    }
    return cutAtWord(title, TITLE_MAX, locale);
  }

  /**
   * A description of at most {@link #DESCRIPTION_MAX} characters: as it is when it fits; else cut
   * after the last whole sentence that fits, when that keeps at least {@link #SENTENCE_CUT_MIN}
   * characters (no ellipsis); else cut at the last word boundary that fits, with an ellipsis.
   */
  static String shortenDescription(String text, Locale locale) {
    if (length(text) <= DESCRIPTION_MAX) {
      return text;
    }
    BreakIterator sentences = BreakIterator.getSentenceInstance(locale);
    sentences.setText(text);
    String best = null;
    for (int end = sentences.next(); end != BreakIterator.DONE; end = sentences.next()) {
      String candidate = text.substring(0, end).strip();
      if (length(candidate) > DESCRIPTION_MAX) {
        break;
      }
      if (SENTENCE_END.matcher(candidate).matches()) {
        best = candidate;
      }
    }
    if (best != null && length(best) >= SENTENCE_CUT_MIN) {
      return best;
    }
    return cutAtWord(text, DESCRIPTION_MAX, locale);
  }

  /**
   * The longest start of {@code text} that ends at a word boundary and, with an ellipsis, has at
   * most {@code max} characters. Trailing punctuation that joins to what was cut (commas, dashes,
   * opening brackets) is dropped. Only a single word longer than {@code max} is cut inside it.
   */
  static String cutAtWord(String text, int max, Locale locale) {
    BreakIterator words = BreakIterator.getWordInstance(locale);
    words.setText(text);
    String best = null;
    for (int end = words.next(); end != BreakIterator.DONE; end = words.next()) {
      if (end < text.length() && isWordChar(text, end - 1) && isWordChar(text, end)) {
        continue; // a boundary inside a run of letters (for example between scripts)
      }
      String candidate = TRAILING_JOINERS.matcher(text.substring(0, end)).replaceAll("");
      if (candidate.isEmpty()) {
        continue;
      }
      if (length(candidate) + 1 > max) {
        break;
      }
      best = candidate;
    }
    if (best == null) {
      best = text.substring(0, text.offsetByCodePoints(0, max - 1));
    }
    return best + ELLIPSIS;
  }

  private static boolean isWordChar(String text, int index) {
    char c = text.charAt(index);
    return Character.isLetterOrDigit(c) && !isIdeographic(c);
  }

  private static boolean isIdeographic(char c) {
    return Character.isIdeographic(c)
        || Character.UnicodeBlock.of(c) == Character.UnicodeBlock.HIRAGANA
        || Character.UnicodeBlock.of(c) == Character.UnicodeBlock.KATAKANA;
  }

  /** Sets the page's title, meta description and Open Graph tags to the proposal. */
  static void patch(Document doc, Proposal proposal) {
    if (proposal.title() != null) {
      doc.title(proposal.title());
      setMeta(doc, "property", "og:title", proposal.title());
    }
    if (proposal.description() != null) {
      setMeta(doc, "name", "description", proposal.description());
      setMeta(doc, "property", "og:description", proposal.description());
    }
  }

  private static void setMeta(Document doc, String attribute, String key, String content) {
    Element meta = doc.head().selectFirst("meta[" + attribute + "=" + key + "]");
    if (meta == null) {
      meta = doc.selectFirst("meta[" + attribute + "=" + key + "]");
    }
    if (meta == null) {
      meta = doc.head().appendElement("meta").attr(attribute, key);
    }
    meta.attr("content", content);
  }

  private static String meta(Document doc, String attribute, String key) {
    Element meta = doc.selectFirst("meta[" + attribute + "=" + key + "]");
    return meta == null ? null : normalize(meta.attr("content"));
  }

  private static Locale locale(Document doc) {
    Element html = doc.selectFirst("html[lang]");
    if (html == null || html.attr("lang").isBlank()) {
      return Locale.ROOT;
    }
    return Locale.forLanguageTag(html.attr("lang").strip());
  }

  /** "blog/getting-started.html" gives "Getting started"; an index page its folder's name. */
  static String fromFileName(String path) {
    String[] parts = path.split("/");
    String name = parts[parts.length - 1].replaceFirst("(?i)\\.html?$", "");
    if (name.equalsIgnoreCase("index")) {
      name = parts.length > 1 ? parts[parts.length - 2] : "Home";
    }
    name = name.replaceAll("[-_.]+", " ").strip();
    if (name.isEmpty()) {
      return "Home";
    }
    return name.substring(0, 1).toUpperCase(Locale.ROOT) + name.substring(1);
  }

  static int length(String text) {
    return text.codePointCount(0, text.length());
  }

  /**
   * Whether a text says something: {@link #MIN_PARAGRAPH_WORDS} words, or (for scripts written
   * without spaces) {@link #MIN_UNSPACED_LENGTH} characters.
   */
  private static boolean meaningful(String text) {
    if (text.isBlank()) {
      return false;
    }
    return text.strip().split("\\s+").length >= MIN_PARAGRAPH_WORDS
        || length(text) >= MIN_UNSPACED_LENGTH;
  }

  private static String normalize(String text) {
    return text.replaceAll("\\s+", " ").strip();
  }
}
