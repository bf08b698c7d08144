package io.asyncjobs.kinds.deepsearch;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.PhraseQuery;
import org.apache.lucene.search.PrefixQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.WildcardQuery;
import org.apache.lucene.util.automaton.CharacterRunAutomaton;
import org.apache.lucene.util.automaton.Operations;

/**
 * A parsed query as the prefilter sees it: a tree of the boolean clauses Lucene would run, whose
 * leaves (a word, a phrase, a prefix or wildcard, anything else) are each decided per document as
 * {@link #TRUE}, {@link #FALSE} or {@link #UNKNOWN}, and combined the way BooleanQuery combines
 * them. {@link #prefilters} says whether a document that contains none of the query's literal words
 * can be ruled out; when it cannot (a query of negations only, a leading wildcard, a fuzzy or
 * regular-expression clause that is not ANDed with a word), every document would need the analyzer
 * and the service searches a full index instead.
 */
final class QueryPlan {

  static final byte FALSE = 0;
  static final byte TRUE = 1;
  static final byte UNKNOWN = 2;

  static final String TITLE = "title";
  static final String BODY = "body";

  /** What a leaf looks for. */
  enum Kind {
    /** One word. */
    TERM,
    /** Words in a row (or within a slop). */
    PHRASE,
    /** Words that start with a literal: a prefix or a wildcard query with a literal start. */
    PREFIX,
    /** Anything the bytes cannot decide (fuzzy, regular expression, range, leading wildcard). */
    OPAQUE,
    /** Matches every document. */
    ALWAYS,
    /** Matches no document: an unknown field, an empty query. */
    NEVER
  }

  /** A node of the tree. */
  abstract static sealed class Node permits Bool, Boost, Leaf {}

  /** A BooleanQuery. */
  static final class Bool extends Node {
    final List<Node> must = new ArrayList<>();
    final List<Node> filter = new ArrayList<>();
    final List<Node> should = new ArrayList<>();
    final List<Node> mustNot = new ArrayList<>();
    int minShould;

    /** How many SHOULD clauses a match needs. */
    int requiredShould() {
      if (minShould > 0) {
        return minShould;
      }
      return must.isEmpty() && filter.isEmpty() ? 1 : 0;
    }
  }

  /** A BoostQuery. */
  static final class Boost extends Node {
    final Node inner;
    final float boost;

    Boost(Node inner, float boost) {
      this.inner = inner;
      this.boost = boost;
    }
  }

  /** A leaf: one query on one field. */
  static final class Leaf extends Node {
    final int id;
    final Kind kind;
    final String field;
    final Query query;

    /** TERM: one word; PHRASE: its words; lower-case ASCII. */
    final byte[][] words;

    /** The same words as text. */
    final String[] texts;

    /** PHRASE: whether the words are consecutive with no slop, so the bytes can prove a match. */
    final boolean exact;

    /** PREFIX: the literal every matching word starts with. */
    final byte[] literal;

    /** PREFIX: whether a whole word (lower-case) matches. */
    final Predicate<String> accepts;

    Leaf(
        int id,
        Kind kind,
        String field,
        Query query,
        String[] texts,
        boolean exact,
        String literal,
        Predicate<String> accepts) {
      this.id = id;
      this.kind = kind;
      this.field = field;
      this.query = query;
      this.texts = texts;
      this.words = new byte[texts.length][];
      for (int i = 0; i < texts.length; i++) {
        words[i] = texts[i].getBytes(StandardCharsets.US_ASCII);
      }
      this.exact = exact;
      this.literal = literal == null ? null : literal.getBytes(StandardCharsets.US_ASCII);
      this.accepts = accepts;
    }

    boolean title() {
      return TITLE.equals(field);
    }
  }

  final Node root;
  final List<Leaf> leaves;

  /** Whether a document without the query's literal words can be ruled out from its bytes. */
  final boolean prefilters;

  /** The distinct words of the TERM and PHRASE leaves: what the collection statistics count. */
  final List<String> words;

  /** {@link #words} as ASCII bytes, in the same order: what a document's bytes are scanned for. */
  final byte[][] wordBytes;

  /** Per leaf id, where in {@link #words} its texts are (empty for leaves that are no words). */
  private final int[][] wordIds;

  /** Those words and the literal starts of the PREFIX leaves: where snippets are looked for. */
  final List<String> literals;

  private QueryPlan(Node root, List<Leaf> leaves) {
    this.root = root;
    this.leaves = List.copyOf(leaves);
    this.prefilters = canExclude(root);
    Set<String> distinct = new LinkedHashSet<>();
    for (Leaf leaf : leaves) {
      if (leaf.kind == Kind.TERM || leaf.kind == Kind.PHRASE) {
        distinct.addAll(List.of(leaf.texts));
      }
    }
    this.words = List.copyOf(distinct);
    this.wordBytes = new byte[words.size()][];
    for (int i = 0; i < words.size(); i++) {
      wordBytes[i] = words.get(i).getBytes(StandardCharsets.US_ASCII);
    }
    this.wordIds = new int[leaves.size()][];
    for (Leaf leaf : leaves) {
      boolean word = leaf.kind == Kind.TERM || leaf.kind == Kind.PHRASE;
      wordIds[leaf.id] =
          word ? Arrays.stream(leaf.texts).mapToInt(words::indexOf).toArray() : new int[0];
    }
    for (Leaf leaf : leaves) {
      if (leaf.kind == Kind.PREFIX) {
        distinct.add(new String(leaf.literal, StandardCharsets.US_ASCII));
      }
    }
    this.literals = List.copyOf(distinct);
  }

  /** Where in {@link #words} the texts of a TERM or PHRASE leaf are, in the leaf's order. */
  int[] wordIds(Leaf leaf) {
    return wordIds[leaf.id];
  }

  /** The plan of a query parsed over {@code title} and {@code body}. */
  static QueryPlan of(Query query) {
    List<Leaf> leaves = new ArrayList<>();
    Node root = node(query, leaves);
    return new QueryPlan(root, leaves);
  }

  private static Node node(Query query, List<Leaf> leaves) {
    if (query instanceof BooleanQuery bool) {
      Bool node = new Bool();
      node.minShould = bool.getMinimumNumberShouldMatch();
      for (BooleanClause clause : bool.clauses()) {
        Node child = node(clause.getQuery(), leaves);
        switch (clause.getOccur()) {
          case MUST -> node.must.add(child);
          case FILTER -> node.filter.add(child);
          case SHOULD -> node.should.add(child);
          case MUST_NOT -> node.mustNot.add(child);
        }
      }
      return node;
    }
    if (query instanceof BoostQuery boost) {
      return new Boost(node(boost.getQuery(), leaves), boost.getBoost());
    }
    return leaf(query, leaves);
  }

  private static Leaf leaf(Query query, List<Leaf> leaves) {
    int id = leaves.size();
    String[] none = new String[0];
    Leaf leaf;
    if (query instanceof MatchAllDocsQuery) {
      leaf = new Leaf(id, Kind.ALWAYS, null, query, none, false, null, null);
    } else if (query instanceof MatchNoDocsQuery) {
      leaf = new Leaf(id, Kind.NEVER, null, query, none, false, null, null);
    } else if (query instanceof TermQuery term) {
      leaf = termLeaf(id, query, term.getTerm());
    } else if (query instanceof PhraseQuery phrase) {
      leaf = phraseLeaf(id, phrase);
    } else if (query instanceof PrefixQuery prefix) {
      String text = prefix.getPrefix().text();
      String field = prefix.getField();
      leaf =
          RawText.scannable(text)
              ? new Leaf(id, Kind.PREFIX, field, query, none, false, text, w -> w.startsWith(text))
              : new Leaf(id, Kind.OPAQUE, field, query, none, false, null, null);
    } else if (query instanceof WildcardQuery wildcard) {
      leaf = wildcardLeaf(id, wildcard);
    } else {
      String field = fieldOf(query);
      leaf = new Leaf(id, Kind.OPAQUE, field, query, none, false, null, null);
    }
    if (leaf.kind != Kind.ALWAYS
        && leaf.kind != Kind.NEVER
        && !TITLE.equals(leaf.field)
        && !BODY.equals(leaf.field)
        && leaf.field != null) {
      // A field the index does not have (path is stored, not indexed): it matches nothing.
      leaf = new Leaf(id, Kind.NEVER, null, query, none, false, null, null);
    }
    leaves.add(leaf);
    return leaf;
  }

  /** The one field a query reads, or null when it reads several or none that we can tell. */
  private static String fieldOf(Query query) {
    Set<String> fields = new LinkedHashSet<>();
    query.visit(
        new org.apache.lucene.search.QueryVisitor() {
          @Override
          public boolean acceptField(String field) {
            fields.add(field);
            return true;
          }
        });
    return fields.size() == 1 ? fields.iterator().next() : null;
  }

  private static Leaf termLeaf(int id, Query query, Term term) {
    String text = term.text();
    if (!RawText.scannable(text)) {
      return new Leaf(id, Kind.OPAQUE, term.field(), query, new String[0], false, null, null);
    }
    return new Leaf(id, Kind.TERM, term.field(), query, new String[] {text}, true, null, null);
  }

  private static Leaf phraseLeaf(int id, PhraseQuery phrase) {
    Term[] terms = phrase.getTerms();
    int[] positions = phrase.getPositions();
    String[] texts = new String[terms.length];
    boolean consecutive = true;
    for (int i = 0; i < terms.length; i++) {
      texts[i] = terms[i].text();
      if (!RawText.scannable(texts[i])) {
        return new Leaf(
            id, Kind.OPAQUE, phrase.getField(), phrase, new String[0], false, null, null);
      }
      consecutive &= positions[i] == positions[0] + i;
    }
    if (terms.length == 0) {
      return new Leaf(id, Kind.NEVER, null, phrase, new String[0], false, null, null);
    }
    boolean exact = consecutive && phrase.getSlop() == 0;
    return new Leaf(id, Kind.PHRASE, phrase.getField(), phrase, texts, exact, null, null);
  }

  /** A wildcard query with a literal start: a PREFIX leaf whose words the wildcard must accept. */
  private static Leaf wildcardLeaf(int id, WildcardQuery wildcard) {
    String text = wildcard.getTerm().text();
    String field = wildcard.getField();
    int cut = 0;
    while (cut < text.length() && "*?\\".indexOf(text.charAt(cut)) < 0) {
      cut++;
    }
    String literal = text.substring(0, cut);
    if (!RawText.scannable(literal) || text.indexOf('\\') >= 0) {
      return new Leaf(id, Kind.OPAQUE, field, wildcard, new String[0], false, null, null);
    }
    CharacterRunAutomaton automaton =
        new CharacterRunAutomaton(
            Operations.determinize(
                WildcardQuery.toAutomaton(wildcard.getTerm()),
                Operations.DEFAULT_DETERMINIZE_WORK_LIMIT));
    return new Leaf(
        id, Kind.PREFIX, field, wildcard, new String[0], false, literal, automaton::run);
  }

  /** Whether a document whose text has none of the literals is surely no match. */
  private static boolean canExclude(Node node) {
    if (node instanceof Boost boost) {
      return canExclude(boost.inner);
    }
    if (node instanceof Leaf leaf) {
      return switch (leaf.kind) {
        case TERM, PHRASE, PREFIX, NEVER -> true;
        case OPAQUE, ALWAYS -> false;
      };
    }
    Bool bool = (Bool) node;
    for (Node child : bool.must) {
      if (canExclude(child)) {
        return true;
      }
    }
    for (Node child : bool.filter) {
      if (canExclude(child)) {
        return true;
      }
    }
    int required = bool.requiredShould();
    if (required == 0) {
      return false;
    }
    int mayMatch = 0;
    for (Node child : bool.should) {
      if (!canExclude(child)) {
        mayMatch++;
      }
    }
    return mayMatch < required;
  }

  /** The verdict on a document, from its leaves' verdicts. */
  byte decide(byte[] leafVerdicts) {
    return decide(root, leafVerdicts);
  }

  private static byte decide(Node node, byte[] verdicts) {
    if (node instanceof Leaf leaf) {
      return verdicts[leaf.id];
    }
    if (node instanceof Boost boost) {
      return decide(boost.inner, verdicts);
    }
    Bool bool = (Bool) node;
    boolean sure = true;
    for (List<Node> required : List.of(bool.must, bool.filter)) {
      for (Node child : required) {
        byte v = decide(child, verdicts);
        if (v == FALSE) {
          return FALSE;
        }
        sure &= v == TRUE;
      }
    }
    for (Node child : bool.mustNot) {
      byte v = decide(child, verdicts);
      if (v == TRUE) {
        return FALSE;
      }
      sure &= v == FALSE;
    }
    int matched = 0;
    int undecided = 0;
    for (Node child : bool.should) {
      byte v = decide(child, verdicts);
      if (v == TRUE) {
        matched++;
      } else if (v == UNKNOWN) {
        undecided++;
      }
    }
    // An empty BooleanQuery, or one of negations only, needs one SHOULD clause: it matches nothing.
    int required = bool.requiredShould();
    if (matched + undecided < required) {
      return FALSE;
    }
    return sure && matched >= required ? TRUE : UNKNOWN;
  }

  /** Scores what a leaf contributes to a matching document. */
  interface LeafScores {
    float score(Leaf leaf);
  }

  /**
   * A document's score as BooleanQuery sums it: the scores of the required clauses and of the
   * optional ones that match (or may); filters and negations add nothing.
   */
  float score(byte[] leafVerdicts, LeafScores scores) {
    return score(root, leafVerdicts, scores);
  }

  private static float score(Node node, byte[] verdicts, LeafScores scores) {
    if (node instanceof Leaf leaf) {
      return verdicts[leaf.id] == FALSE ? 0 : scores.score(leaf);
    }
    if (node instanceof Boost boost) {
      return boost.boost * score(boost.inner, verdicts, scores);
    }
    Bool bool = (Bool) node;
    float sum = 0;
    for (Node child : bool.must) {
      sum += score(child, verdicts, scores);
    }
    for (Node child : bool.should) {
      if (decide(child, verdicts) != FALSE) {
        sum += score(child, verdicts, scores);
      }
    }
    return sum;
  }
}
