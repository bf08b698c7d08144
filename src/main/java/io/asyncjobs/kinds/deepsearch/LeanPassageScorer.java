package io.asyncjobs.kinds.deepsearch;

import org.apache.lucene.search.uhighlight.Passage;
import org.apache.lucene.search.uhighlight.PassageScorer;
import org.apache.lucene.util.BytesRef;

/**
 * Lucene's passage scorer with the same figures, without its garbage: the stock one builds a hash
 * of the passage's terms for every candidate passage, each with a 32 KiB block, which on text with
 * a match in every sentence made a search allocate a hundred megabytes or more for its snippets. A
 * passage holds a handful of matches, so a scan of the terms seen so far does.
 */
final class LeanPassageScorer extends PassageScorer {

  @Override
  public float score(Passage passage, int contentLength) {
    int matches = passage.getNumMatches();
    BytesRef[] terms = passage.getMatchTerms();
    int[] inDocument = passage.getMatchTermFreqsInDoc();
    BytesRef[] distinct = new BytesRef[matches];
    int[] inPassage = new int[matches];
    int[] documentFrequency = new int[matches];
    int size = 0;
    for (int i = 0; i < matches; i++) {
      int at = 0;
      while (at < size && !distinct[at].bytesEquals(terms[i])) {
        at++;
      }
      if (at == size) {
        distinct[size] = terms[i];
        documentFrequency[size] = inDocument[i];
        size++;
      }
      inPassage[at]++;
    }
    // Summed in the order the terms first appear, as the stock scorer does.
    double score = 0;
    for (int i = 0; i < size; i++) {
      score += tf(inPassage[i], passage.getLength()) * weight(contentLength, documentFrequency[i]);
    }
    score *= norm(passage.getStartOffset());
    return (float) score;
  }
}
