package io.asyncjobs.kinds.deepsearch;

import java.io.IOException;
import java.text.BreakIterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.uhighlight.FieldHighlighter;
import org.apache.lucene.search.uhighlight.LengthGoalBreakIterator;
import org.apache.lucene.search.uhighlight.UnifiedHighlighter;

/**
 * The snippets of one hit, made from its text by analysing it (no index needed): the same
 * highlighter settings as {@link HitIndex} uses, for a prefiltered search whose hits were never
 * indexed. One instance per thread: it keeps what the highlighter makes from the query (its
 * automata, its in-memory index) from one hit to the next.
 */
final class Snippets {

  private final Analyzer analyzer;
  private final Query query;

  /** One highlighter per way a stretch may be cut (more before, more after), made when needed. */
  private final Reusing[] highlighters = new Reusing[4];

  Snippets(Analyzer analyzer, Query query) {
    this.analyzer = analyzer;
    this.query = query;
  }

  /**
   * A highlighter that builds its field highlighter (the query's automata and phrase helper, the
   * in-memory index it analyses a text into) for the first text and reuses it for every later one:
   * always the same field, query and number of passages, and one thread.
   */
  private static final class Reusing extends UnifiedHighlighter {
    private FieldHighlighter made;

    Reusing(Builder builder) {
      super(builder);
    }

    @Override
    protected FieldHighlighter getFieldHighlighter(
        String field, Query query, Set<Term> allTerms, int maxPassages) {
      if (made == null) {
        made = super.getFieldHighlighter(field, query, allTerms, maxPassages);
      }
      return made;
    }
  }

  /** The highlighter settings both searches share. */
  static UnifiedHighlighter.Builder configure(
      UnifiedHighlighter.Builder builder, SnippetFormatter formatter) {
    return builder
        .withMaxLength(Documents.MAX_DOCUMENT_BYTES)
        .withFormatter(formatter)
        .withScorer(new LeanPassageScorer())
        // Passages of about 160 characters cut at word boundaries. Sentence boundaries read
        // better but the JDK's sentence iterator backs up a long way for every hit: on a few MB
        // of text with thousands of hits that took minutes per document, while a word boundary
        // is always close by.
        .withBreakIterator(
            () ->
                LengthGoalBreakIterator.createClosestToLength(
                    BreakIterator.getWordInstance(Locale.ROOT), 160, 0.5f))
        .withMaxNoHighlightPassages(1);
  }

  /**
   * Up to {@value HitIndex#SNIPPETS_PER_HIT} snippets of a whole body, taken from the stretch of
   * {@code span} characters around the first place where one of {@code literals} (lower-case)
   * occurs in any case, so that a long body is not analysed whole; from its opening when none does.
   */
  List<?> around(String body, List<String> literals, int lead, int span) throws IOException {
    if (body.length() <= span) {
      return of(body, false, false);
    }
    String lower = body.toLowerCase(Locale.ROOT);
    int first = -1;
    for (String literal : literals) {
      int at = lower.length() == body.length() ? lower.indexOf(literal) : -1;
      if (at >= 0 && (first < 0 || at < first)) {
        first = at;
      }
    }
    int from = Math.max(0, first - lead);
    int to = Math.min(body.length(), from + span);
    while (from > 0 && from < to && !Character.isWhitespace(body.charAt(from - 1))) {
      from++; // start after a space, so no word is cut
    }
    while (to < body.length() && to > from && !Character.isWhitespace(body.charAt(to))) {
      to--;
    }
    return of(body.substring(from, to), from > 0, to < body.length());
  }

  /**
   * Up to {@value HitIndex#SNIPPETS_PER_HIT} snippets of {@code text}, a document's body or a
   * stretch of it.
   *
   * @param moreBefore whether the document goes on before the stretch
   * @param moreAfter whether it goes on after it
   */
  List<?> of(String text, boolean moreBefore, boolean moreAfter) throws IOException {
    int which = (moreBefore ? 2 : 0) + (moreAfter ? 1 : 0);
    Reusing highlighter = highlighters[which];
    if (highlighter == null) {
      highlighter =
          new Reusing(
              configure(
                  UnifiedHighlighter.builderWithoutSearcher(analyzer),
                  new SnippetFormatter(moreBefore, moreAfter)));
      highlighters[which] = highlighter;
    }
    Object snippets =
        highlighter.highlightWithoutSearcher(
            QueryPlan.BODY, query, text, HitIndex.SNIPPETS_PER_HIT);
    return snippets instanceof List<?> list ? list : List.of();
  }
}
