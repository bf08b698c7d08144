package io.asyncjobs.kinds.deepsearch;

import io.asyncjobs.kinds.deepsearch.QueryPlan.Kind;
import io.asyncjobs.kinds.deepsearch.QueryPlan.Leaf;
import java.util.List;
import org.apache.lucene.util.SmallFloat;

/**
 * BM25 for a search that indexes nothing: the collection statistics, estimated from the prefilter's
 * facts on every document read, and each matching document's score from them.
 *
 * <p>The document count is exact. A body's length is its number of runs of word bytes (ASCII
 * letters and digits, {@code _}, any byte at or above 0x80), which is its number of tokens for
 * ASCII prose but counts {@code don't} or {@code 3.14} as two and a run of Chinese as one; the
 * average length is the mean of those. A title's length is exact where the title is known without
 * parsing (all but HTML with markup, whose titles count as of average length). A word's document
 * frequency counts the documents whose bytes surely hold it as a whole token (for HTML with markup,
 * anywhere in the file, tags included); for titles it is scaled from the known titles to all
 * documents. A word's frequency in a body counts its sure occurrences only, at least one in a
 * matching document.
 */
final class CollectionEstimate {

  /** BM25Similarity's defaults, which the full index's searcher uses. */
  private static final float K1 = 1.2f;

  private static final float B = 0.75f;

  private final int documents;
  private final int bodyDocuments;
  private final long bodyRuns;
  private final int knownTitles;
  private final long titleTokens;

  /** Per word of the plan (by its place in {@link QueryPlan#words}): documents with it. */
  private final long[] bodyFrequency;

  /** The same for titles, scaled from the known titles to all documents. */
  private final long[] titleFrequency;

  private final QueryPlan plan;

  CollectionEstimate(QueryPlan plan, List<Prefilter.Facts> facts) {
    this.plan = plan;
    int documents = 0;
    int bodyDocuments = 0;
    long bodyRuns = 0;
    int knownTitles = 0;
    long titleTokens = 0;
    long[] inBody = new long[plan.words.size()];
    long[] inTitle = new long[plan.words.size()];
    for (Prefilter.Facts fact : facts) {
      if (fact == null) {
        continue; // not read
      }
      documents++;
      if (fact.bodyLength > 0) {
        bodyDocuments++;
        bodyRuns += fact.bodyLength;
      }
      if (fact.titleLength >= 0) {
        knownTitles++;
        titleTokens += fact.titleLength;
      }
      for (int i = 0; i < inBody.length; i++) {
        inBody[i] += fact.inBody[i] ? 1 : 0;
        inTitle[i] += fact.inTitle[i] > 0 ? 1 : 0;
      }
    }
    this.documents = documents;
    this.bodyDocuments = bodyDocuments;
    this.bodyRuns = bodyRuns;
    this.knownTitles = knownTitles;
    this.titleTokens = titleTokens;
    this.bodyFrequency = inBody;
    this.titleFrequency = new long[inTitle.length];
    for (int i = 0; i < inTitle.length; i++) {
      titleFrequency[i] =
          knownTitles == 0 ? 0 : Math.round((double) inTitle[i] * documents / knownTitles);
    }
  }

  private long documentsWith(String field) {
    return QueryPlan.TITLE.equals(field) ? documents : bodyDocuments;
  }

  /** The field's average length in tokens, as BM25 divides by it. */
  private float averageLength(String field) {
    if (QueryPlan.TITLE.equals(field)) {
      return knownTitles == 0 ? 1 : Math.max(1f, (float) titleTokens / knownTitles);
    }
    return (float) (bodyRuns / Math.max(1.0, bodyDocuments));
  }

  /** Documents with the plan's {@code word}-th word in the field, within [1, documents]. */
  private long frequency(String field, int word) {
    long[] table = QueryPlan.TITLE.equals(field) ? titleFrequency : bodyFrequency;
    long documentCount = Math.max(1, documentsWith(field));
    return Math.min(documentCount, Math.max(1, table[word]));
  }

  private float idf(String field, int word) {
    long df = frequency(field, word);
    long n = Math.max(df, documentsWith(field));
    return (float) Math.log(1 + (n - df + 0.5D) / (df + 0.5D));
  }

  /**
   * What one leaf adds to a matching document's score: BM25 as Lucene computes it (its formula, its
   * defaults, its one-byte encoding of a field's length), from the occurrences the prefilter
   * counted (at least one) and the field's length; constant-score leaves (prefix, wildcard,
   * anything else) add 1, as Lucene's rewrite gives them.
   */
  float score(Leaf leaf, Prefilter.Facts fact) {
    if (leaf.kind != Kind.TERM && leaf.kind != Kind.PHRASE) {
      return 1;
    }
    float idf = 0;
    for (int word : plan.wordIds(leaf)) {
      idf += idf(leaf.field, word);
    }
    boolean title = leaf.title();
    float average = averageLength(leaf.field);
    int length =
        title ? (fact.titleLength >= 0 ? fact.titleLength : Math.round(average)) : fact.bodyLength;
    int frequency = title ? 1 : Math.max(1, fact.frequency[leaf.id]);
    float quantized = SmallFloat.byte4ToInt(SmallFloat.intToByte4(length));
    float normInverse = 1f / (K1 * ((1 - B) + B * quantized / Math.max(1f, average)));
    return idf - idf / (1f + frequency * normInverse);
  }
}
