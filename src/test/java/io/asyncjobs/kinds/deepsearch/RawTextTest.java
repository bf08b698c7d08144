package io.asyncjobs.kinds.deepsearch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttribute;
import org.jsoup.nodes.Entities;
import org.jsoup.parser.Parser;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * What the byte-level proofs claim, checked against the analyzer (and jsoup, for HTML) on many
 * random texts made of the pieces that tokenization and markup turn on: every "surely there" must
 * be there, every "surely not" must be absent. A wrong claim here would make the prefiltered search
 * find other files than the full index.
 */
class RawTextTest {

  static final Analyzer ANALYZER = DeepsearchService.analyzer();

  static final String[] WORDS = {"lease", "replica", "re", "a", "ab", "x1", "12"};

  /** Text pieces: the words in several cases and every kind of byte the rules tell apart. */
  static final String[] TEXT_PIECES = {
    "lease", "Lease", "LEASE", "replica", "REPLICA", "re", "a", "ab", "b", "x1", "12", "1", " ",
    " ", " ", "\n", "\r\n", "\t", ".", ":", "'", ",", ";", "_", "-", "(", "\"", "é", "\u0130",
    "\u212a", "\u00ad", "\u0301", "\u4e2d", "\u2019", "\0", "#", "&", "<", ">", "x", "L", "\uFEFF"
  };

  /** HTML pieces: the text pieces and markup, references, a declared character set. */
  static final String[] HTML_PIECES = {
    "<b>",
    "</b>",
    "<p>",
    "</p>",
    "<title>",
    "</title>",
    "<script>",
    "</script>",
    "<style>",
    "</style>",
    "<!--",
    "-->",
    "&amp;",
    "&not",
    "&fjlig;",
    "&#108;",
    "&#x61;",
    "&Idot;",
    "&lt;",
    "<textarea>",
    "</textarea>",
    "<h1>",
    "</h1>",
    "<meta charset=\"latin1\">",
    "<br>",
    "\"",
    "<a title='x>y'>",
    "</a>",
    "<svg><![CDATA[",
    "]]></svg>"
  };

  static final Random RANDOM = new Random(20261201);

  static int checkedClaims;

  @AfterAll
  static void report() {
    assertThat(checkedClaims)
        .as("claims the bytes made and the analyzer checked")
        .isGreaterThan(1000);
  }

  static String random(String[] pieces, String[] more, int max) {
    StringBuilder text = new StringBuilder();
    int n = 1 + RANDOM.nextInt(max);
    for (int i = 0; i < n; i++) {
      boolean fromMore = more != null && RANDOM.nextInt(3) == 0;
      String[] from = fromMore ? more : pieces;
      text.append(from[RANDOM.nextInt(from.length)]);
    }
    return text.toString();
  }

  /** The tokens of a text, in order, with their positions. */
  record Tokens(List<String> terms, List<Integer> positions) {

    boolean has(String word) {
      return terms.contains(word);
    }

    int count(String word) {
      int n = 0;
      for (String term : terms) {
        n += term.equals(word) ? 1 : 0;
      }
      return n;
    }

    boolean phrase(String... words) {
      outer:
      for (int i = 0; i + words.length <= terms.size(); i++) {
        for (int k = 0; k < words.length; k++) {
          if (!terms.get(i + k).equals(words[k]) || positions.get(i + k) != positions.get(i) + k) {
            continue outer;
          }
        }
        return true;
      }
      return false;
    }

    boolean startsWith(String literal) {
      return terms.stream().anyMatch(t -> t.startsWith(literal));
    }
  }

  static Tokens tokens(String... texts) throws IOException {
    List<String> terms = new ArrayList<>();
    List<Integer> positions = new ArrayList<>();
    int position = -1;
    for (String text : texts) {
      try (TokenStream stream = ANALYZER.tokenStream("body", text)) {
        CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
        PositionIncrementAttribute increment =
            stream.addAttribute(PositionIncrementAttribute.class);
        stream.reset();
        while (stream.incrementToken()) {
          position += increment.getPositionIncrement();
          terms.add(term.toString());
          positions.add(position);
        }
        stream.end();
      }
      position += 100; // fields apart: no phrase across them
    }
    return new Tokens(terms, positions);
  }

  static byte[] ascii(String word) {
    return word.getBytes(StandardCharsets.US_ASCII);
  }

  /** Checks every claim the bytes make about the words against the tokens. */
  static void checkClaims(String text, RawText raw, Tokens truth) {
    for (String word : WORDS) {
      byte[] w = ascii(word);
      RawText.Count count = raw.word(w, false);
      if (raw.plain) {
        claim(
            true,
            count.sure() <= truth.count(word),
            () -> "at most the true count of " + word,
            text);
        claim(count.sure() > 0, truth.has(word), () -> word + " is a token", text);
      }
      boolean absent = count.sure() == 0 && !count.open() && raw.absenceHolds(w);
      claim(absent, !truth.has(word), () -> word + " is no token", text);
      if (raw.plain) {
        for (String next : WORDS) {
          RawText.Count phrase = raw.phrase(new byte[][] {w, ascii(next)});
          claim(
              phrase.sure() > 0,
              truth.phrase(word, next),
              () -> "\"" + word + " " + next + "\" is there",
              text);
          claim(
              phrase.sure() == 0 && !phrase.open() && raw.absenceHolds(w),
              !truth.phrase(word, next),
              () -> "\"" + word + " " + next + "\" is not there",
              text);
        }
      }
      RawText.Count prefix = raw.prefix(w, token -> token.startsWith(word));
      if (raw.plain) {
        claim(prefix.sure() > 0, truth.startsWith(word), () -> "a token starts with " + word, text);
      }
      claim(
          prefix.sure() == 0 && !prefix.open() && raw.absenceHolds(w),
          !truth.startsWith(word),
          () -> "no token starts with " + word,
          text);
    }
  }

  static void claim(boolean claimed, boolean holds, Supplier<String> what, String text) {
    if (claimed) {
      checkedClaims++;
      assertThat(holds).as("the bytes claim: %s, in [%s]", what.get(), show(text)).isTrue();
    }
  }

  static String show(String text) {
    StringBuilder out = new StringBuilder();
    for (char c : text.toCharArray()) {
      out.append(c < 0x20 || c > 0x7e ? String.format("\\u%04x", (int) c) : String.valueOf(c));
    }
    return out.toString();
  }

  @Test
  void shouldOnlyClaimWhatTheAnalyzerAgreesWithOnRandomText() throws Exception {
    for (int i = 0; i < 20_000; i++) {
      String text = random(TEXT_PIECES, null, 24);
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      RawText raw = new RawText(bytes, bytes.length, false);
      assertThat(raw.plain).isTrue();
      checkClaims(text, raw, tokens(text));
    }
  }

  @Test
  void shouldOnlyClaimWhatJsoupAndTheAnalyzerAgreeWithOnRandomHtml() throws Exception {
    for (int i = 0; i < 20_000; i++) {
      String text = random(TEXT_PIECES, HTML_PIECES, 24);
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      RawText raw = new RawText(bytes, bytes.length, true);
      Documents.Extracted extracted = Documents.extract(Documents.Type.HTML, bytes, "page.html");
      // A claim of absence covers the title too (a page's title comes from its text); a claim of
      // presence is made only for the body, when it is the bytes.
      Tokens body = tokens(extracted.body());
      Tokens all =
          tokens(extracted.body(), extracted.title().equals("page.html") ? "" : extracted.title());
      checkClaims(text, raw, raw.plain ? body : all);
    }
  }

  @Test
  void shouldCountTheSameWhetherTheBytesComeInOnePieceOrMany() {
    for (int i = 0; i < 2_000; i++) {
      boolean html = RANDOM.nextBoolean();
      byte[] bytes =
          random(TEXT_PIECES, html ? HTML_PIECES : null, 60).getBytes(StandardCharsets.UTF_8);
      RawText whole = new RawText(bytes, bytes.length, html);
      RawText.Tally tally = new RawText.Tally();
      int at = 0;
      while (at < bytes.length) {
        int piece = Math.min(bytes.length - at, 1 + RANDOM.nextInt(20));
        tally.add(bytes, at, at + piece, html);
        at += piece;
      }
      RawText pieces = new RawText(bytes, bytes.length, html, tally);
      assertThat(pieces.wordRuns).isEqualTo(whole.wordRuns);
      assertThat(pieces.high).isEqualTo(whole.high);
      assertThat(pieces.plain).isEqualTo(whole.plain);
    }
  }

  @Test
  void shouldFindEachOfMarkupReferenceAndNulWhereverItFirstComes() {
    // The tally stops looking for < and & once it has seen both, and for NUL once seen: each is
    // still found when it comes first in a later piece, alone or after the others.
    String filler = "plain words and more words ".repeat(400);
    String[][] pages = {
      {"<p>", "&amp;", "\u0000"},
      {"\u0000", "&amp;", "<p>"},
      {"&amp;", "<p>", ""},
      {"", "", "\u0000"}
    };
    for (String[] page : pages) {
      byte[] bytes =
          (page[0] + filler + page[1] + filler + page[2] + filler).getBytes(StandardCharsets.UTF_8);
      RawText whole = new RawText(bytes, bytes.length, true);
      RawText.Tally tally = new RawText.Tally();
      for (int at = 0; at < bytes.length; at += 4096) {
        tally.add(bytes, at, Math.min(bytes.length, at + 4096), true);
      }
      RawText pieces = new RawText(bytes, bytes.length, true, tally);
      String all = String.join("", page);
      assertThat(pieces.lt).as(all).isEqualTo(whole.lt).isEqualTo(all.contains("<"));
      assertThat(pieces.amp).as(all).isEqualTo(whole.amp).isEqualTo(all.contains("&"));
      assertThat(pieces.nul).as(all).isEqualTo(whole.nul).isEqualTo(all.contains("\u0000"));
      assertThat(pieces.wordRuns).isEqualTo(whole.wordRuns);
    }
  }

  @Test
  void shouldProveCommonCasesEitherWay() {
    byte[] text = ascii("The lease.\nReplica holds; a release, re-lease and LEASE_X.");
    RawText raw = new RawText(text, text.length, false);
    assertThat(raw.word(ascii("lease"), false)).isEqualTo(new RawText.Count(2, false, 4));
    assertThat(raw.phrase(new byte[][] {ascii("lease"), ascii("replica")}).sure()).isEqualTo(1);
    assertThat(raw.phrase(new byte[][] {ascii("replica"), ascii("lease")}))
        .isEqualTo(new RawText.Count(0, false, -1));
    assertThat(raw.word(ascii("x"), false)).isEqualTo(new RawText.Count(0, false, -1));
    // Nearly 300 letters in a row: the tokenizer cuts them, so "lease" at the end may be a token.
    byte[] run = ascii("a".repeat(300) + "lease");
    assertThat(new RawText(run, run.length, false).word(ascii("lease"), false).open()).isTrue();
  }

  @Test
  void shouldKnowEveryCharacterReferenceThatMakesALetterOrDigit() throws Exception {
    Field names = Entities.EscapeMode.class.getDeclaredField("nameKeys");
    names.setAccessible(true);
    Set<String> makers = new TreeSet<>();
    for (String name : (String[]) names.get(Entities.EscapeMode.extended)) {
      String decoded = Parser.unescapeEntities("&" + name + ";", false);
      decoded
          .codePoints()
          .map(Character::toLowerCase)
          .filter(c -> c < 0x80 && Character.isLetterOrDigit(c))
          .findAny()
          .ifPresent(c -> makers.add(name));
    }
    Set<String> known = new TreeSet<>();
    for (String[] reference : RawText.LETTER_REFERENCES) {
      known.add(reference[0]);
    }
    assertThat(makers).isEqualTo(known);
  }

  @Test
  void shouldFindTheSameMarkdownTitleFromBytesAsFromText() {
    String[] pieces = {
      "#",
      "# ",
      "##",
      " ",
      "   ",
      "    ",
      "\t",
      "\n",
      "\r",
      "\r\n",
      "\u2028",
      "\u0085",
      "Title",
      "é",
      "x",
      "#x",
      " #",
      "##  Two  ##",
      "\u00a0"
    };
    for (int i = 0; i < 20_000; i++) {
      String text = random(pieces, null, 12);
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      assertThat(Documents.markdownTitle(bytes, bytes.length))
          .as("title of [%s]", show(text))
          .isEqualTo(Documents.markdownTitle(text));
    }
  }
}
