package io.asyncjobs.kinds.deepsearch;

import static io.asyncjobs.kinds.deepsearch.QueryPlan.FALSE;
import static io.asyncjobs.kinds.deepsearch.QueryPlan.TRUE;
import static io.asyncjobs.kinds.deepsearch.QueryPlan.UNKNOWN;

import io.asyncjobs.kinds.deepsearch.QueryPlan.Kind;
import io.asyncjobs.kinds.deepsearch.QueryPlan.Leaf;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.index.memory.MemoryIndex;
import org.apache.lucene.search.Query;

/**
 * Decides, for one document at a time, which of a query's leaves match: from the raw bytes where
 * {@link RawText} can prove it, from the title where the title is known without parsing the file,
 * and else leaves the leaf undecided. Also takes what ranking needs later: how often each word is
 * surely there, whether each of the query's words is there at all (for its document frequency), and
 * the lengths of the fields. One instance per thread.
 */
final class Prefilter {

  /** What the prefilter learned about one document. */
  static final class Facts {
    /** TRUE, FALSE or UNKNOWN (then {@link #check} decides). */
    byte verdict;

    final byte[] leaves;

    /** Per leaf on the body: how often it surely occurs (a word, a phrase, accepted words). */
    final int[] frequency;

    /** Per word of the plan: whether the body surely has it; whether the (known) title has it. */
    final boolean[] inBody;

    /** Per word of the plan: how often the (known) title has it. */
    final int[] inTitle;

    /** Runs of word bytes: the body's length in tokens, estimated. */
    int bodyLength;

    /** Where in the bytes the first sure match of a body leaf starts; -1 for none. */
    int firstMatch = -1;

    /** The title's length in tokens; -1 when the title is not known without parsing the file. */
    int titleLength = -1;

    void noteMatch(int at) {
      if (at >= 0 && (firstMatch < 0 || at < firstMatch)) {
        firstMatch = at;
      }
    }

    Facts(QueryPlan plan) {
      leaves = new byte[plan.leaves.size()];
      frequency = new int[plan.leaves.size()];
      inBody = new boolean[plan.words.size()];
      inTitle = new int[plan.words.size()];
    }
  }

  private final QueryPlan plan;
  private final Analyzer analyzer;
  private final MemoryIndex titleIndex = new MemoryIndex(false, false);

  /** The tokens of the title being looked at, in order (a title has no gaps in positions). */
  private final List<String> titleTokens = new ArrayList<>();

  /** Whether {@link #titleIndex} holds the title being looked at. */
  private boolean titleIndexed;

  private final MemoryIndex documentIndex = new MemoryIndex(false, false);

  /** Per word of the plan: whether a body leaf needs every occurrence counted, not just one. */
  private final boolean[] counted;

  Prefilter(QueryPlan plan, Analyzer analyzer) {
    this.plan = plan;
    this.analyzer = analyzer;
    this.counted = new boolean[plan.words.size()];
    for (Leaf leaf : plan.leaves) {
      if (leaf.kind == Kind.TERM && !leaf.title()) {
        counted[plan.wordIds(leaf)[0]] = true;
      }
    }
  }

  /**
   * Decides one document from its bytes.
   *
   * @param title the document's title when it is known without parsing (plain text, Markdown, HTML
   *     without markup), else null
   * @param fileName what an HTML page without a title of its own is titled
   */
  Facts scan(RawText raw, String title, String fileName) {
    Facts facts = new Facts(plan);
    facts.bodyLength = raw.wordRuns;
    int words = plan.wordBytes.length;
    RawText.Count[] counts = new RawText.Count[words];
    boolean[] absent = new boolean[words];
    for (int i = 0; i < words; i++) {
      byte[] word = plan.wordBytes[i];
      counts[i] = raw.word(word, !counted[i]);
      facts.inBody[i] = counts[i].sure() > 0;
      absent[i] = counts[i].sure() == 0 && !counts[i].open() && raw.absenceHolds(word);
    }
    titleIndexed = false;
    if (title != null) {
      titleFacts(title, facts);
    }
    for (Leaf leaf : plan.leaves) {
      byte verdict;
      if (leaf.kind == Kind.ALWAYS) {
        verdict = TRUE;
      } else if (leaf.kind == Kind.NEVER) {
        verdict = FALSE;
      } else if (leaf.title() && title != null) {
        verdict = titleMatches(title, leaf) ? TRUE : FALSE;
      } else {
        byte fromBytes = fromBytes(leaf, raw, counts, absent, facts);
        if (leaf.title()) {
          // The title of an HTML page comes from its text, else it is the file name: a word
          // absent from the text leaves the file name to check.
          verdict =
              fromBytes == FALSE ? (fileNameMatches(fileName, leaf) ? UNKNOWN : FALSE) : UNKNOWN;
        } else {
          verdict = fromBytes;
        }
      }
      facts.leaves[leaf.id] = verdict;
    }
    facts.verdict = plan.decide(facts.leaves);
    return facts;
  }

  /** A body leaf's verdict from the bytes (for a title leaf: FALSE when absent from the text). */
  private byte fromBytes(
      Leaf leaf, RawText raw, RawText.Count[] counts, boolean[] absent, Facts facts) {
    switch (leaf.kind) {
      case TERM -> {
        int i = plan.wordIds(leaf)[0];
        if (absent[i]) {
          return FALSE;
        }
        if (!leaf.title()) {
          facts.frequency[leaf.id] = counts[i].sure();
          facts.noteMatch(counts[i].first());
        }
        return raw.plain && counts[i].sure() > 0 && !leaf.title() ? TRUE : UNKNOWN;
      }
      case PHRASE -> {
        for (int i : plan.wordIds(leaf)) {
          if (absent[i]) {
            return FALSE;
          }
        }
        if (leaf.title() || !raw.plain || !leaf.exact) {
          return UNKNOWN;
        }
        RawText.Count phrase = raw.phrase(leaf.words);
        facts.frequency[leaf.id] = phrase.sure();
        facts.noteMatch(phrase.first());
        if (phrase.sure() > 0) {
          return TRUE;
        }
        return !phrase.open() && raw.absenceHolds(leaf.words[0]) ? FALSE : UNKNOWN;
      }
      case PREFIX -> {
        RawText.Count found = raw.prefix(leaf.literal, leaf.accepts);
        if (!leaf.title()) {
          facts.frequency[leaf.id] = found.sure();
          facts.noteMatch(found.first());
        }
        if (found.sure() > 0) {
          return leaf.title() ? UNKNOWN : TRUE; // sure only where the text is the bytes
        }
        return !found.open() && raw.absenceHolds(leaf.literal) ? FALSE : UNKNOWN;
      }
      default -> {
        return UNKNOWN;
      }
    }
  }

  /**
   * Whether a leaf on the title matches a known title: from its tokens for a word, a phrase without
   * slop, a prefix or wildcard; through an index of the title for anything else.
   */
  private boolean titleMatches(String title, Leaf leaf) {
    switch (leaf.kind) {
      case TERM -> {
        return titleTokens.contains(leaf.texts[0]);
      }
      case PHRASE -> {
        if (leaf.exact) {
          return Collections.indexOfSubList(titleTokens, Arrays.asList(leaf.texts)) >= 0;
        }
      }
      case PREFIX -> {
        for (String token : titleTokens) {
          if (leaf.accepts.test(token)) {
            return true;
          }
        }
        return false;
      }
      default -> {}
    }
    if (!titleIndexed) {
      titleIndex.reset();
      titleIndex.addField(QueryPlan.TITLE, title, analyzer);
      titleIndexed = true;
    }
    return matches(titleIndex, leaf.query);
  }

  private void titleFacts(String title, Facts facts) {
    Map<String, Integer> tokens = new HashMap<>();
    titleTokens.clear();
    int count = 0;
    try (TokenStream stream = analyzer.tokenStream(QueryPlan.TITLE, title)) {
      CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
      stream.reset();
      while (stream.incrementToken()) {
        String token = term.toString();
        titleTokens.add(token);
        tokens.merge(token, 1, Integer::sum);
        count++;
      }
      stream.end();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // analysing a String does no I/O
    }
    facts.titleLength = count;
    for (int i = 0; i < plan.words.size(); i++) {
      facts.inTitle[i] = tokens.getOrDefault(plan.words.get(i), 0);
    }
  }

  private boolean fileNameMatches(String fileName, Leaf leaf) {
    MemoryIndex index = new MemoryIndex(false, false);
    index.addField(QueryPlan.TITLE, fileName, analyzer);
    return matches(index, leaf.query);
  }

  private static boolean matches(MemoryIndex index, Query query) {
    try {
      return index.createSearcher().count(query) > 0;
    } catch (IOException e) {
      throw new UncheckedIOException(e); // an in-memory index does no I/O
    }
  }

  /**
   * The exact answer for a document the bytes left undecided: its text extracted as the index would
   * hold it, analysed, and the whole query run on it.
   */
  boolean check(Query query, Documents.Extracted text) {
    documentIndex.reset();
    documentIndex.addField(QueryPlan.TITLE, text.title(), analyzer);
    documentIndex.addField(QueryPlan.BODY, text.body(), analyzer);
    return matches(documentIndex, query);
  }
}
