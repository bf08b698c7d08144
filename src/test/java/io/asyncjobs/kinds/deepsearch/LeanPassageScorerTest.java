package io.asyncjobs.kinds.deepsearch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.apache.lucene.search.uhighlight.Passage;
import org.apache.lucene.search.uhighlight.PassageScorer;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.Test;

/** The lean passage scorer gives every passage exactly the stock scorer's score. */
class LeanPassageScorerTest {

  @Test
  void shouldScoreEveryPassageAsLucenesOwnScorerDoes() {
    Random random = new Random(3);
    String[] terms = {"owl", "barn", "lease", "replica", "a"};
    PassageScorer stock = new PassageScorer();
    PassageScorer lean = new LeanPassageScorer();
    for (int i = 0; i < 10_000; i++) {
      Passage passage = new Passage();
      int start = random.nextInt(10_000);
      passage.setStartOffset(start);
      passage.setEndOffset(start + 400);
      int at = start;
      for (int m = random.nextInt(12); m > 0; m--) {
        at += 1 + random.nextInt(20);
        String term = terms[random.nextInt(terms.length)];
        passage.addMatch(at, at + term.length(), new BytesRef(term), 1 + random.nextInt(50));
      }
      int contentLength = passage.getEndOffset() + random.nextInt(100_000);
      assertThat(lean.score(passage, contentLength)).isEqualTo(stock.score(passage, contentLength));
    }
  }
}
