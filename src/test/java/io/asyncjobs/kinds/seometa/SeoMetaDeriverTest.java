package io.asyncjobs.kinds.seometa;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Locale;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.junit.jupiter.api.Test;

/** The derivation rules, on documents made in memory. */
class SeoMetaDeriverTest {

  static final String LONG_SENTENCES =
      "Our bakery has baked sourdough bread in the old town since 1921. Every loaf rises for"
          + " two days before it meets the oven. We also sell pastries, cakes and coffee to take"
          + " away every morning.";

  static final String ONE_LONG_SENTENCE =
      "This paragraph is a single sentence that keeps going without any full stop for a very"
          + " long time, listing flour, water, salt, patience, ovens, bakers, neighbours and"
          + " customers who come back every single day";

  @Test
  void shouldKeepShortTextsAsTheyAre() {
    assertThat(MetaDeriver.shortenDescription("Fresh bread daily.", Locale.ROOT))
        .isEqualTo("Fresh bread daily.");
    assertThat(MetaDeriver.shortenTitle("Bakery", Locale.ROOT)).isEqualTo("Bakery");
  }

  @Test
  void shouldCutADescriptionAfterTheLastWholeSentenceThatFits() {
    String cut = MetaDeriver.shortenDescription(LONG_SENTENCES, Locale.ENGLISH);
    assertThat(cut)
        .isEqualTo(
            "Our bakery has baked sourdough bread in the old town since 1921. Every loaf rises"
                + " for two days before it meets the oven.");
    assertThat(cut.length()).isLessThanOrEqualTo(155);
    assertThat(cut).doesNotEndWith(MetaDeriver.ELLIPSIS);
  }

  @Test
  void shouldCutAtAWordWithAnEllipsisWhenNoSentenceFits() {
    String cut = MetaDeriver.shortenDescription(ONE_LONG_SENTENCE, Locale.ENGLISH);
    assertThat(cut.length()).isLessThanOrEqualTo(155);
    assertThat(cut).endsWith(MetaDeriver.ELLIPSIS);
    String kept = cut.substring(0, cut.length() - 1);
    // The cut falls between two words of the original, and leaves no dangling comma.
    assertThat(ONE_LONG_SENTENCE).startsWith(kept);
    assertThat(ONE_LONG_SENTENCE.charAt(kept.length())).isIn(' ', ',');
    assertThat(kept).doesNotEndWith(",").doesNotEndWith(" ");
    // And it is the longest such cut: with the next word it would not fit.
    int end = kept.length();
    while (!Character.isLetterOrDigit(ONE_LONG_SENTENCE.charAt(end))) {
      end++;
    }
    while (Character.isLetterOrDigit(ONE_LONG_SENTENCE.charAt(end))) {
      end++;
    }
    assertThat(end + 1).isGreaterThan(155);
  }

  @Test
  void shouldShortenALongTitleByDroppingTheSiteNameFirstThenAtAWord() {
    assertThat(
            MetaDeriver.shortenTitle(
                "Sourdough starter care in winter and summer | The Old Town Bakery Blog",
                Locale.ROOT))
        .isEqualTo("Sourdough starter care in winter and summer");
    String cut =
        MetaDeriver.shortenTitle(
            "Everything you ever wanted to know about sourdough starters and their care",
            Locale.ROOT);
    assertThat(cut).isEqualTo("Everything you ever wanted to know about sourdough starters\u2026");
    assertThat(cut.length()).isLessThanOrEqualTo(60);
  }

  @Test
  void shouldDeriveFromTitleHeadingsParagraphsAndFileName() {
    Document titled =
        Jsoup.parse(
            "<html lang=en><head><title>Old Town Bakery</title></head><body>"
                + "<nav><p>Home about contact shop blog imprint</p></nav>"
                + "<main><h1>Welcome</h1><p>Hi!</p><p>"
                + LONG_SENTENCES
                + "</p></main><footer><p>Copyright the bakery and all its friends</p></footer>");
    MetaDeriver.Proposal p = MetaDeriver.derive(titled, "index.html");
    assertThat(p.title()).isEqualTo("Old Town Bakery");
    assertThat(p.titleSource()).isEqualTo("title");
    assertThat(p.description()).startsWith("Our bakery has baked sourdough");
    assertThat(p.descriptionSource()).isEqualTo("paragraphs");

    Document headed = Jsoup.parse("<body><h2>Second level</h2><p>Too short.</p>");
    MetaDeriver.Proposal h = MetaDeriver.derive(headed, "x.html");
    assertThat(h.title()).isEqualTo("Second level");
    assertThat(h.titleSource()).isEqualTo("h2");
    assertThat(h.description()).isNull();
    assertThat(h.descriptionSource()).isEqualTo("none");

    MetaDeriver.Proposal bare =
        MetaDeriver.derive(
            Jsoup.parse("<meta name=description content='Kept as it was before.'>"),
            "blog/opening-hours.html");
    assertThat(bare.title()).isEqualTo("Opening hours");
    assertThat(bare.titleSource()).isEqualTo("file_name");
    assertThat(bare.description()).isEqualTo("Kept as it was before.");
    assertThat(bare.descriptionSource()).isEqualTo("existing");
  }

  @Test
  void shouldPatchTitleDescriptionAndOpenGraphTagsIntoTheHead() {
    Document doc =
        Jsoup.parse(
            "<html><head><meta name=description content=old><meta property=og:title"
                + " content=old></head><body><h1>Fresh title</h1><p>"
                + LONG_SENTENCES
                + "</p></body></html>");
    MetaDeriver.Proposal p = MetaDeriver.derive(doc, "a.html");
    MetaDeriver.patch(doc, p);
    assertThat(doc.title()).isEqualTo("Fresh title");
    assertThat(doc.head().select("meta[name=description]")).hasSize(1);
    assertThat(doc.head().selectFirst("meta[name=description]").attr("content"))
        .isEqualTo(p.description());
    assertThat(doc.head().select("meta[property=og:title]")).hasSize(1);
    assertThat(doc.head().selectFirst("meta[property=og:title]").attr("content"))
        .isEqualTo("Fresh title");
    assertThat(doc.head().selectFirst("meta[property=og:description]").attr("content"))
        .isEqualTo(p.description());
  }
}
