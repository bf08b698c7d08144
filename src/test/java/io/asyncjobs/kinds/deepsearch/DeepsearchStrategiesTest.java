package io.asyncjobs.kinds.deepsearch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.asyncjobs.files.FileScope;
import io.asyncjobs.kinds.deepsearch.DeepsearchService.Searched;
import io.asyncjobs.kinds.deepsearch.DeepsearchService.Strategy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The prefiltered search against the full index, the reference: on a corpus made to hit what the
 * byte-level proofs turn on (case, joining punctuation, words inside words, characters that
 * lower-case to ASCII, markup that splits or hides words, character references, declared character
 * sets, NUL bytes, long runs), for a range of queries, both find the same set of files.
 */
class DeepsearchStrategiesTest {

  @TempDir static Path data;

  static FileScope scope;
  static Path folder;
  static final DeepsearchService SERVICE = new DeepsearchService(null, null, null);

  static final String[] WORDS = {
    "invoice",
    "overdue",
    "late",
    "barn",
    "owl",
    "owls",
    "night",
    "nightjar",
    "midnight",
    "the",
    "a",
    "of",
    "and",
    "lease",
    "release",
    "replica",
    "colour",
    "color",
    "kelvin",
    "fjord",
    "2024"
  };

  static final String[] GLUE = {
    " ", " ", " ", " ", "\n", ". ", ", ", ".\n", "; ", ": ", " - ", "'", ".", ":", "_", "(", ")",
    "\"", "\t"
  };

  static final String[] ODD = {
    "In\u0301voice",
    "\u0130nvoice",
    "\u212aelvin",
    "caf\u00e9",
    "\u4e2d\u6587",
    "don't",
    "3.14",
    "x:y",
    "owl.barn",
    "OWL",
    "Invoice",
    "INVOICE",
    "Night",
    "\uFEFF",
    "\u00ad",
    "n".repeat(300) + "owl",
    "re\u00adlease",
    "\u2019s"
  };

  static final String[] MARKUP = {
    "<b>",
    "</b>",
    "<p>",
    "</p>",
    "<br>",
    "<i>in</i>voice",
    "in<b>voi</b>ce",
    "ow<!-- x -->l",
    "<script>var owl = 1; invoice();</script>",
    "<style>.barn { color: red }</style>",
    "<a title=\"owl invoice\" href=\"barn.html\">link</a>",
    "&amp;",
    "&not",
    "&notlate",
    "&fjlig;ord",
    "&#111;wl",
    "&#x62;arn",
    "&Idot;nvoice",
    "&lt;owl&gt;",
    "\0",
    "<textarea>",
    "</textarea>",
    "<h2>Overdue notes</h2>"
  };

  static final Random RANDOM = new Random(42);

  static String prose(int words, boolean odd) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < words; i++) {
      if (odd && RANDOM.nextInt(6) == 0) {
        text.append(ODD[RANDOM.nextInt(ODD.length)]);
      } else {
        text.append(WORDS[RANDOM.nextInt(WORDS.length)]);
      }
      text.append(GLUE[RANDOM.nextInt(GLUE.length)]);
    }
    return text.toString();
  }

  static String html(int words) {
    StringBuilder page = new StringBuilder();
    if (RANDOM.nextBoolean()) {
      page.append("<html><head><title>").append(prose(3, true)).append("</title></head><body>");
    }
    for (int i = 0; i < words; i++) {
      page.append(
          RANDOM.nextInt(3) == 0
              ? MARKUP[RANDOM.nextInt(MARKUP.length)]
              : prose(1 + RANDOM.nextInt(3), true));
    }
    return page.toString();
  }

  static void write(String name, String text) throws Exception {
    write(name, text.getBytes(StandardCharsets.UTF_8));
  }

  static void write(String name, byte[] bytes) throws Exception {
    Path file = data.resolve("files/corpus").resolve(name);
    Files.createDirectories(file.getParent());
    Files.write(file, bytes);
  }

  @BeforeAll
  static void corpus() throws Exception {
    scope = FileScope.ofAdmin(data);
    folder = Files.createDirectories(data.resolve("artifacts"));
    for (int i = 0; i < 60; i++) {
      write("text/t" + i + ".txt", prose(5 + RANDOM.nextInt(80), i % 2 == 0));
      String heading = RANDOM.nextBoolean() ? "# " + prose(2, true) + "\n\n" : "";
      write("notes/m" + i + ".md", heading + prose(5 + RANDOM.nextInt(80), i % 3 == 0));
      write("site/p" + i + ".html", html(10 + RANDOM.nextInt(40)));
    }
    write("plain/owl-invoice.txt", "owl invoice");
    write("plain/invoice.htm", "A tagless page: invoice overdue, late.");
    write(
        "odd/latin1.html",
        bytes("<meta charset=\"iso-8859-1\"><p>caf\u00e9 owl invoice</p>", "ISO-8859-1"));
    write("odd/utf16.html", bytes("\uFEFF<p>overdue invoice owl</p>", "UTF-16BE"));
    write("odd/nul.html", "<p>in\0voice ow\0l</p>");
    write("odd/bom.txt", "\uFEFFinvoice first");
    write("odd/big.txt", ("barn owl " + "x".repeat(1000) + " ").repeat(50) + "nightjar");
  }

  static byte[] bytes(String text, String charset) {
    return text.getBytes(java.nio.charset.Charset.forName(charset));
  }

  static Searched search(String query, Strategy strategy) throws Exception {
    return SERVICE.search(
        scope, scope.resolve("corpus"), query, DeepsearchService.MAX_LIMIT, folder, strategy, true);
  }

  static TreeSet<String> names(Searched searched) {
    TreeSet<String> names = new TreeSet<>();
    searched.matching().forEach(p -> names.add(scope.nameOf(p)));
    return names;
  }

  static final List<String> QUERIES =
      List.of(
          "invoice",
          "Invoice",
          "owl",
          "lease",
          "kelvin",
          "fjord",
          "2024",
          "the",
          "\"barn owl\"",
          "\"invoice overdue\"",
          "\"late the of\"",
          "\"owl barn\"~2",
          "invoice AND overdue",
          "+owl +barn -night",
          "owl OR nightjar",
          "invoice AND (overdue OR late)",
          "owl NOT barn",
          "-owl",
          "night*",
          "inv*",
          "ni?ht",
          "n*jar",
          "colou?r",
          "title:overdue",
          "title:owl OR body:barn",
          "title:\"overdue notes\"",
          "title:inv*",
          "path:owl",
          "colour~",
          "owl AND nightjar~1",
          "owl^3 barn",
          "/ow[ln]s?/",
          "[lat TO lea]",
          "*:* AND owl",
          "owl AND NOT (barn OR night*)");

  @Test
  void shouldFindTheSameFilesAsTheFullIndexForEveryKindOfQuery() throws Exception {
    List<String> differences = new ArrayList<>();
    int nonEmpty = 0;
    for (String query : QUERIES) {
      Searched full = search(query, Strategy.FULL_INDEX);
      Searched prefiltered = search(query, Strategy.PREFILTER);
      assertThat(full.strategy()).isEqualTo(Strategy.FULL_INDEX);
      assertThat(prefiltered.strategy()).isEqualTo(Strategy.PREFILTER);
      if (!names(full).equals(names(prefiltered))) {
        differences.add(query + ": full " + names(full) + " prefiltered " + names(prefiltered));
      }
      assertThat(prefiltered.total()).as(query).isEqualTo(full.total());
      assertThat(prefiltered.documents()).as(query).isEqualTo(full.documents());
      assertThat(prefiltered.bytesRead()).as(query).isEqualTo(full.bytesRead());
      assertThat(prefiltered.hits()).as(query).hasSize(full.hits().size());
      // Every hit is listed (the limit is above the corpus): each keeps the index's title.
      assertThat(titles(prefiltered)).as(query).isEqualTo(titles(full));
      nonEmpty += full.total() > 0 ? 1 : 0;
    }
    assertThat(differences).isEmpty();
    assertThat(nonEmpty).as("queries that found something").isGreaterThan(QUERIES.size() - 6);
  }

  @Test
  void shouldChooseThePrefilterOnlyWhereAQueryNeedsALiteralWord() throws Exception {
    // A query of negations only matches nothing (as in Lucene): decided without reading a word.
    for (String query :
        List.of("owl", "\"barn owl\"", "inv*", "owl AND colour~", "title:owl", "-owl")) {
      assertThat(search(query, null).strategy()).as(query).isEqualTo(Strategy.PREFILTER);
    }
    for (String query : List.of("colour~", "owl OR colour~", "/ow[ln]/", "*:*", "[a TO b]")) {
      assertThat(search(query, null).strategy()).as(query).isEqualTo(Strategy.FULL_INDEX);
    }
  }

  @Test
  void shouldRankPlainProseAsTheFullIndexDoes() throws Exception {
    // Plain ASCII prose, where runs of letters are the tokens: the estimated statistics are the
    // index's own, so the order and the scores agree.
    Path prose = data.resolve("files/prose");
    Random random = new Random(7);
    for (int i = 0; i < 40; i++) {
      StringBuilder text = new StringBuilder();
      for (int w = 5 + random.nextInt(300); w > 0; w--) {
        text.append(WORDS[random.nextInt(WORDS.length)]).append(w % 9 == 0 ? ".\n" : " ");
      }
      Files.createDirectories(prose);
      Files.writeString(prose.resolve("d" + i + ".txt"), text);
    }
    for (String query : List.of("owl", "\"barn owl\"", "invoice OR late", "+owl +night")) {
      Searched full = SERVICE.search(scope, prose, query, 10, folder, Strategy.FULL_INDEX, false);
      Searched prefiltered =
          SERVICE.search(scope, prose, query, 10, folder, Strategy.PREFILTER, false);
      assertThat(paths(prefiltered)).as(query).isEqualTo(paths(full));
      assertThat(prefiltered.analysed())
          .as(query + ": documents the bytes left undecided")
          .isZero();
      for (int i = 0; i < full.hits().size(); i++) {
        float expected = (Float) full.hits().get(i).get("score");
        assertThat((Float) prefiltered.hits().get(i).get("score"))
            .as(query)
            .isCloseTo(expected, within(expected * 1e-4f));
        assertThat(prefiltered.hits().get(i).get("snippets"))
            .as(query)
            .isEqualTo(full.hits().get(i).get("snippets"));
      }
    }
  }

  @Test
  void shouldShowTheSameSnippetsWhenTheyAreReadAgainAsWhenKeptFromTheScan() throws Exception {
    // The stretches a search keeps from its scan, within a budget, and those it reads again from
    // the files once the budget is spent: the same text, so the same snippets.
    for (String query : List.of("owl", "\"barn owl\"", "invoice OR late", "nightjar")) {
      Searched kept = search(query, Strategy.PREFILTER);
      DeepsearchService reading = new DeepsearchService(null, null, null);
      reading.stretchBudget = 0;
      Searched read =
          reading.search(
              scope,
              scope.resolve("corpus"),
              query,
              DeepsearchService.MAX_LIMIT,
              folder,
              Strategy.PREFILTER,
              true);
      reading.stopScanning();
      assertThat(read.hits()).as(query).isNotEmpty().isEqualTo(kept.hits());
    }
  }

  @Test
  void shouldShowAHitFromTheBytesItsScanMatchedWithinTheBudgetAndFromTheFileBeyondIt()
      throws Exception {
    // Between the scan and the snippets the file is rewritten: a kept stretch shows the text the
    // scan matched, a stretch read again shows the file as it is now.
    Path tree = data.resolve("files/kept");
    Path file = tree.resolve("long.txt");
    String before = "wren ".repeat(400) + "the heron waits at dawn " + "wren ".repeat(400);
    String after = "wren ".repeat(400) + "the heron leaves at dusk " + "wren ".repeat(400);
    for (long budget : new long[] {DeepsearchService.STRETCH_BUDGET, 0}) {
      Files.createDirectories(tree);
      Files.writeString(file, before);
      DeepsearchService service = new DeepsearchService(null, null, null);
      service.stretchBudget = budget;
      service.whenDecided(
          () -> {
            try {
              Files.writeString(file, after);
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          });
      Searched searched =
          service.search(scope, tree, "heron", 10, folder, Strategy.PREFILTER, false);
      service.stopScanning();
      String snippet = searched.hits().get(0).get("snippets").toString();
      if (budget > 0) {
        assertThat(snippet).as("kept").contains("<mark>heron</mark> waits at dawn");
      } else {
        assertThat(snippet).as("read again").contains("<mark>heron</mark> leaves at dusk");
      }
    }
  }

  static Map<Object, Object> titles(Searched searched) {
    Map<Object, Object> titles = new java.util.HashMap<>();
    searched.hits().forEach(hit -> titles.put(hit.get("path"), hit.get("title")));
    return titles;
  }

  static List<Object> paths(Searched searched) {
    return searched.hits().stream().map((Map<String, Object> hit) -> hit.get("path")).toList();
  }
}
