package io.asyncjobs.kinds.deepsearch;

import io.asyncjobs.files.FileScope;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopScoreDocCollectorManager;
import org.apache.lucene.search.uhighlight.UnifiedHighlighter;
import org.apache.lucene.store.Directory;

/**
 * A throw-away Lucene index of every document read, written once and searched once: the search for
 * queries the prefilter cannot narrow, and the reference the prefiltered path is tested against.
 * Ranks with BM25 (the title field weighs twice the body, through the query) and highlights up to
 * {@value #SNIPPETS_PER_HIT} snippets per hit.
 */
final class HitIndex implements AutoCloseable {

  /** Snippets shown per hit. */
  static final int SNIPPETS_PER_HIT = 3;

  private static final String PATH = "path";

  /** The body: tokenized, stored for snippets, with offsets so snippets need no re-analysis. */
  private static final FieldType BODY_TYPE = new FieldType(TextField.TYPE_STORED);

  static {
    BODY_TYPE.setIndexOptions(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS_AND_OFFSETS);
    BODY_TYPE.freeze();
  }

  private final Directory directory;
  private final Analyzer analyzer;
  private IndexWriter writer;

  HitIndex(Directory directory, Analyzer analyzer) throws IOException {
    this.directory = directory;
    this.analyzer = analyzer;
    this.writer =
        new IndexWriter(
            directory,
            new IndexWriterConfig(analyzer)
                .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
                .setRAMBufferSizeMB(32)
                .setCommitOnClose(true));
  }

  /** Adds one document; documents are numbered in the order they are added. */
  void add(Path path, Documents.Extracted text) throws IOException {
    Document doc = new Document();
    doc.add(new StoredField(PATH, path.toString()));
    doc.add(new TextField(QueryPlan.TITLE, text.title(), Field.Store.YES));
    doc.add(new Field(QueryPlan.BODY, text.body(), BODY_TYPE));
    writer.addDocument(doc);
  }

  /** Commits what was added; the index can be searched from now on. */
  void commit() throws IOException {
    writer.close();
    writer = null;
  }

  /** What a search of the index found: its best hits, and how many documents matched at all. */
  record Found(List<Map<String, Object>> hits, long total) {}

  /** Runs {@code query} and returns the best {@code limit} hits with their snippets. */
  Found search(Query query, int limit, FileScope scope) throws IOException {
    List<Map<String, Object>> hits = new ArrayList<>();
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      IndexSearcher search = new IndexSearcher(reader);
      // Count every hit exactly, not just up to the default threshold.
      TopDocs top = search.search(query, new TopScoreDocCollectorManager(limit, Integer.MAX_VALUE));
      SnippetHighlighter highlighter =
          new SnippetHighlighter(
              Snippets.configure(
                  UnifiedHighlighter.builder(search, analyzer), new SnippetFormatter()));
      int[] docIds = new int[top.scoreDocs.length];
      for (int i = 0; i < docIds.length; i++) {
        docIds[i] = top.scoreDocs[i].doc;
      }
      Object[] snippets =
          docIds.length == 0
              ? new Object[0]
              : highlighter.snippets(QueryPlan.BODY, query, docIds, SNIPPETS_PER_HIT);
      for (int i = 0; i < top.scoreDocs.length; i++) {
        ScoreDoc hit = top.scoreDocs[i];
        Document doc = search.storedFields().document(hit.doc, Set.of(PATH, QueryPlan.TITLE));
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("path", scope.nameOf(Path.of(doc.get(PATH))));
        entry.put("title", doc.get(QueryPlan.TITLE));
        entry.put("score", hit.score);
        entry.put("snippets", snippets[i] == null ? List.of() : snippets[i]);
        hits.add(entry);
      }
      return new Found(hits, top.totalHits.value);
    }
  }

  /** The paths of every document the query matches, in index order: for tests. */
  List<Path> matching(Query query) throws IOException {
    List<Path> paths = new ArrayList<>();
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      IndexSearcher search = new IndexSearcher(reader);
      TopDocs top =
          search.search(
              query,
              new TopScoreDocCollectorManager(Math.max(1, reader.maxDoc()), Integer.MAX_VALUE));
      for (ScoreDoc hit : top.scoreDocs) {
        paths.add(Path.of(search.storedFields().document(hit.doc, Set.of(PATH)).get(PATH)));
      }
    }
    return paths;
  }

  @Override
  public void close() throws IOException {
    if (writer != null) {
      writer.rollback();
    }
  }

  /** A highlighter whose snippets come back as the formatter made them: a list per document. */
  private static final class SnippetHighlighter extends UnifiedHighlighter {

    SnippetHighlighter(UnifiedHighlighter.Builder builder) {
      super(builder);
    }

    /** The formatter's output for each of {@code docIds}, in their order; null for none. */
    Object[] snippets(String field, Query query, int[] docIds, int perDocument) throws IOException {
      return highlightFieldsAsObjects(new String[] {field}, query, docIds, new int[] {perDocument})
          .get(field);
    }
  }
}
