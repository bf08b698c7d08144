package io.asyncjobs.kinds.deepsearch;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.asyncjobs.api.PayloadCheck;
import io.asyncjobs.engine.Checkpoint;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.files.Artifacts;
import io.asyncjobs.files.FileScope;
import io.asyncjobs.files.FileScopes;
import io.asyncjobs.files.PathRefusedException;
import io.asyncjobs.files.Payloads;
import io.asyncjobs.files.Trees;
import io.asyncjobs.queue.Job;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.text.BreakIterator;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.queryparser.classic.MultiFieldQueryParser;
import org.apache.lucene.queryparser.classic.ParseException;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopScoreDocCollectorManager;
import org.apache.lucene.search.uhighlight.LengthGoalBreakIterator;
import org.apache.lucene.search.uhighlight.UnifiedHighlighter;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.NIOFSDirectory;

/**
 * The {@code deepsearch} kind: ranked full-text search over the {@code .txt}, {@code .md} and
 * {@code .html}/{@code .htm} files under one folder of the caller's tree.
 *
 * <p>Each attempt builds a throw-away Lucene index in a folder of its own in the job's artifact
 * folder, ranks the documents with BM25 (the title field weighs twice the body), highlights up to
 * three snippets per hit, writes {@code results.json} under a temporary name of its own and renames
 * it into place, and deletes its index and temporary file whether it succeeds or fails, so two
 * attempts of one job running at once never touch each other's files. The walk follows links only
 * while they stay inside the caller's folder; any other link is skipped and counted. {@link
 * #cleanup} removes the artifact folder.
 */
@ApplicationScoped
public class DeepsearchService extends JobService implements PayloadCheck {

  /** This kind's name. */
  public static final String KIND = "deepsearch";

  /** The artifact's file name. */
  public static final String RESULTS = "results.json";

  /** Hits returned when the payload names no limit. */
  public static final int DEFAULT_LIMIT = 50;

  /** The most hits a payload may ask for. */
  public static final int MAX_LIMIT = 1000;

  /** The payload keys a caller may send. */
  static final Set<String> KEYS = Set.of("root", "query", "limit");

  /** Longest path a payload may name. */
  static final int MAX_PATH = 4096;

  /** Longest query a payload may hold. */
  static final int MAX_QUERY = 2000;

  /** Snippets shown per hit. */
  static final int SNIPPETS_PER_HIT = 3;

  /** The indexed fields a query searches, and their weights. */
  static final Map<String, Float> FIELDS = Map.of("title", 2.0f, "body", 1.0f);

  private static final String TITLE = "title";
  private static final String BODY = "body";
  private static final String PATH = "path";

  /** The body: tokenized, stored for snippets, with offsets so snippets need no re-analysis. */
  private static final FieldType BODY_TYPE = new FieldType(TextField.TYPE_STORED);

  static {
    BODY_TYPE.setIndexOptions(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS_AND_OFFSETS);
    BODY_TYPE.freeze();
  }

  /** The share of the progress bar that indexing takes; searching and writing take the rest. */
  private static final double INDEXING_SHARE = 0.9;

  private final FileScopes scopes;
  private final Artifacts artifacts;
  private final ObjectMapper json;

  /** Where a test runs something half-way through an attempt. */
  private volatile Checkpoint onIndexed = Checkpoint.NONE;

  DeepsearchService(FileScopes scopes, Artifacts artifacts, ObjectMapper json) {
    this.scopes = scopes;
    this.artifacts = artifacts;
    this.json = json;
  }

  /**
   * Sets what runs once an attempt has built its index, right before it searches it: a test's way
   * to run another attempt meanwhile.
   */
  void whenIndexed(Checkpoint hook) {
    this.onIndexed = Checkpoint.orNone(hook);
  }

  @Override
  public String kind() {
    return KIND;
  }

  @Override
  public String title() {
    return "Full-text search";
  }

  @Override
  public RouteDoc routeDoc() {
    return new RouteDoc(
        "Enqueue a full-text search",
        """
        Ranks the .txt, .md and .html files under a folder of your tree against a query in \
        Lucene's classic syntax (BM25) and leaves results.json with highlighted snippets to \
        download. Answers 202 with Location at once.""",
        "search",
        "{\"root\": \"docs\", \"query\": \"invoice AND (overdue OR late)\", \"limit\": 20}",
        Map.of());
  }

  /**
   * Known keys only; {@code root} an existing folder in the caller's scope; a query that parses and
   * can be run; a limit from 1 to {@value #MAX_LIMIT} when given.
   */
  @Override
  public Accepted check(FileScope scope, Map<String, Object> body) {
    Payloads.allowOnly(body, KEYS);
    String root = Payloads.string(body, "root", MAX_PATH);
    String query = Payloads.string(body, "query", MAX_QUERY);
    Payloads.optionalInt(body, "limit", 1, MAX_LIMIT);
    Path folder = scope.resolve(root);
    if (!Files.isDirectory(folder)) {
      throw new IllegalArgumentException(
          "root must name an existing folder in your tree; \""
              + root
              + (Files.exists(folder) ? "\" is not a folder" : "\" does not exist"));
    }
    try {
      parse(query);
    } catch (ParseException e) {
      throw new IllegalArgumentException("query: " + e.getMessage());
    } catch (RuntimeException e) {
      // Lucene refuses some well-formed queries while building them (a regular expression too
      // complex to run, too many clauses): still the caller's query, so a 400.
      throw new IllegalArgumentException("query cannot be run: " + e.getMessage());
    }
    return Accepted.files(body, null);
  }

  /** The analyzer of both the index and the query: Unicode words, lower-cased, no stemming. */
  static Analyzer analyzer() {
    return new StandardAnalyzer();
  }

  /**
   * Parses a query in Lucene's classic syntax over {@link #FIELDS}. The enqueue endpoint calls it
   * so that a syntax error is the caller's 400, not a failed job.
   *
   * @throws ParseException with the parser's explanation
   */
  public static Query parse(String query) throws ParseException {
    try (Analyzer analyzer = analyzer()) {
      return parse(query, analyzer);
    }
  }

  private static Query parse(String query, Analyzer analyzer) throws ParseException {
    MultiFieldQueryParser parser =
        new MultiFieldQueryParser(new String[] {TITLE, BODY}, analyzer, FIELDS);
    return parser.parse(query);
  }

  /** A file that will be indexed: the path the walk reached it by, its type and size. */
  private record Candidate(Path path, Documents.Type type, long size) {}

  /** What the walk found. */
  private static final class Walk {
    final List<Candidate> files = new ArrayList<>();
    long bytes;
    int skippedLinks;
    int unreadable;
  }

  @Override
  protected Map<String, Object> process(Job job) throws Exception {
    FileScope scope = scopes.forJob(job);
    String rootName = (String) job.payload.get("root");
    String queryText = (String) job.payload.get("query");
    int limit = job.payload.get("limit") instanceof Number n ? n.intValue() : DEFAULT_LIMIT;
    Path root = scope.resolve(rootName);
    if (!Files.isDirectory(root)) {
      throw new IllegalStateException("\"" + rootName + "\" is no longer a folder");
    }
    try {
      return search(job, scope, root, queryText, limit);
    } catch (FileSystemException e) {
      // Its message holds absolute paths; the caller sees its own names instead.
      throw new IOException(describe(e, scope), e);
    }
  }

  private Map<String, Object> search(
      Job job, FileScope scope, Path root, String queryText, int limit) throws Exception {
    Path folder = artifacts.folder(KIND, job.uid);
    // This attempt's own index: another attempt of the job (an old owner still searching, say) may
    // be using its own in the same folder, and must find it as it left it. So an index a crashed
    // attempt left stays until the job expires: it cannot be told from a live one.
    Path indexDir = Artifacts.partial(folder.resolve("index"));
    try (Analyzer analyzer = analyzer()) {
      Query query = parse(queryText, analyzer);
      Walk walk = walk(scope, root);
      Map<String, Object> outcome;
      // Not FSDirectory.open, which picks MMapDirectory: that one finds its Java 19+ reader through
      // a reflective MethodHandles look-up and maps files through shared memory arenas, which a
      // native executable lacks (its class initializer fails there). The index is written once,
      // searched once and deleted, so plain positional reads cost nothing that matters.
      try (Directory directory = new NIOFSDirectory(indexDir)) {
        Indexed indexed = index(scope, walk, directory, analyzer);
        onIndexed.reached();
        outcome = rank(job, scope, query, limit, directory, analyzer, folder, indexed, walk);
      } finally {
        Trees.delete(indexDir);
      }
      reportProgress(1.0, ((Number) outcome.get("item_count")).longValue());
      return outcome;
    }
  }

  /** A failed file operation, naming a path in the caller's tree as the caller does. */
  private static String describe(FileSystemException e, FileScope scope) {
    String what = e.getReason() != null ? e.getReason() : e.getClass().getSimpleName();
    if (e.getFile() == null) {
      return "the search failed: " + what;
    }
    Path file = Path.of(e.getFile());
    String name =
        file.startsWith(scope.base())
            ? scope.nameOf(file)
            : String.valueOf(file.getFileName()); // the artifact folder: the name alone
    return "the search failed at " + name + ": " + what;
  }

  /**
   * Lists the files to index under {@code root}, in name order, without leaving the scope: a link
   * is followed only when its real location is inside the scope, every other link is skipped and
   * counted. A file or folder reached twice (through links) is read once.
   */
  private Walk walk(FileScope scope, Path root) throws IOException, InterruptedException {
    Walk walk = new Walk();
    Set<Object> seen = new HashSet<>();
    seen.add(identity(root, Files.readAttributes(root, BasicFileAttributes.class)));
    Deque<Path> folders = new ArrayDeque<>();
    folders.push(root);
    while (!folders.isEmpty()) {
      checkInterrupted();
      Path dir = folders.pop();
      List<Path> entries = new ArrayList<>();
      try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
        stream.forEach(entries::add);
      } catch (NoSuchFileException e) {
        continue; // removed while we walk
      } catch (AccessDeniedException e) {
        walk.unreadable++;
        continue;
      }
      entries.sort(null);
      List<Path> subfolders = new ArrayList<>();
      for (Path entry : entries) {
        BasicFileAttributes attrs;
        Path real = entry;
        try {
          attrs = Files.readAttributes(entry, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
          if (attrs.isSymbolicLink()) {
            if (!scope.contains(entry)) {
              walk.skippedLinks++; // leads out of the caller's folder, or nowhere
              continue;
            }
            real = entry.toRealPath();
            attrs = Files.readAttributes(real, BasicFileAttributes.class);
          }
        } catch (NoSuchFileException e) {
          continue; // removed while we walk
        }
        if (attrs.isDirectory()) {
          if (seen.add(identity(real, attrs))) {
            subfolders.add(entry);
          }
        } else if (attrs.isRegularFile()) {
          Optional<Documents.Type> type = Documents.typeOf(entry);
          if (type.isPresent() && seen.add(identity(real, attrs))) {
            walk.files.add(new Candidate(entry, type.get(), attrs.size()));
            walk.bytes += Math.min(attrs.size(), Documents.MAX_DOCUMENT_BYTES);
          }
        }
      }
      for (int i = subfolders.size() - 1; i >= 0; i--) {
        folders.push(subfolders.get(i));
      }
    }
    return walk;
  }

  /** What makes a file the same file however it is reached: its inode, else its real path. */
  private static Object identity(Path path, BasicFileAttributes attrs) throws IOException {
    Object key = attrs.fileKey();
    return key != null ? key : path.toRealPath();
  }

  /** What indexing did. */
  private record Indexed(int documents, long bytesRead, int unreadable, int truncated) {}

  private Indexed index(FileScope scope, Walk walk, Directory directory, Analyzer analyzer)
      throws IOException, InterruptedException {
    IndexWriterConfig config =
        new IndexWriterConfig(analyzer)
            .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
            .setRAMBufferSizeMB(32)
            .setCommitOnClose(true);
    int documents = 0;
    int unreadable = 0;
    int truncated = 0;
    long bytesRead = 0;
    try (IndexWriter writer = new IndexWriter(directory, config)) {
      for (Candidate file : walk.files) {
        checkInterrupted();
        byte[] bytes;
        Documents.Extracted text;
        try {
          bytes = Documents.read(scope, file.path());
          text = Documents.extract(file.type(), bytes, file.path().getFileName().toString());
        } catch (FileSystemException | PathRefusedException e) {
          unreadable++; // vanished, not readable, or turned into a link meanwhile
          continue;
        }
        bytesRead += bytes.length;
        if (file.size() > bytes.length) {
          truncated++;
        }
        Document doc = new Document();
        doc.add(new StoredField(PATH, file.path().toString()));
        doc.add(new TextField(TITLE, text.title(), Field.Store.YES));
        doc.add(new Field(BODY, text.body(), BODY_TYPE));
        writer.addDocument(doc);
        documents++;
        double done =
            walk.bytes == 0
                ? (double) documents / walk.files.size()
                : Math.min(1.0, (double) bytesRead / walk.bytes);
        reportProgress(INDEXING_SHARE * done, (long) documents);
      }
    }
    return new Indexed(documents, bytesRead, unreadable, truncated);
  }

  private Map<String, Object> rank(
      Job job,
      FileScope scope,
      Query query,
      int limit,
      Directory directory,
      Analyzer analyzer,
      Path folder,
      Indexed indexed,
      Walk walk)
      throws IOException {
    List<Map<String, Object>> hits = new ArrayList<>();
    long total;
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      // Count every hit exactly, not just up to the default threshold.
      TopDocs top =
          searcher.search(query, new TopScoreDocCollectorManager(limit, Integer.MAX_VALUE));
      total = top.totalHits.value;
      SnippetHighlighter highlighter =
          new SnippetHighlighter(
              UnifiedHighlighter.builder(searcher, analyzer)
                  .withMaxLength(Documents.MAX_DOCUMENT_BYTES)
                  .withFormatter(new SnippetFormatter())
                  // Passages of about 160 characters cut at word boundaries. Sentence
                  // boundaries read better but the JDK's sentence iterator backs up a long way
                  // for every hit: on a few MB of text with thousands of hits that took
                  // minutes per document, while a word boundary is always close by.
                  .withBreakIterator(
                      () ->
                          LengthGoalBreakIterator.createClosestToLength(
                              BreakIterator.getWordInstance(Locale.ROOT), 160, 0.5f))
                  .withMaxNoHighlightPassages(1));
      int[] docIds = new int[top.scoreDocs.length];
      for (int i = 0; i < docIds.length; i++) {
        docIds[i] = top.scoreDocs[i].doc;
      }
      Object[] snippets =
          docIds.length == 0
              ? new Object[0]
              : highlighter.snippets(BODY, query, docIds, SNIPPETS_PER_HIT);
      for (int i = 0; i < top.scoreDocs.length; i++) {
        ScoreDoc hit = top.scoreDocs[i];
        Document doc = searcher.storedFields().document(hit.doc, Set.of(PATH, TITLE));
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("path", scope.nameOf(Path.of(doc.get(PATH))));
        entry.put("title", doc.get(TITLE));
        entry.put("score", hit.score);
        entry.put("snippets", snippets[i] == null ? List.of() : snippets[i]);
        hits.add(entry);
      }
    }

    Map<String, Object> results = new LinkedHashMap<>();
    results.put("query", job.payload.get("query"));
    results.put("root", job.payload.get("root"));
    results.put("documents_searched", indexed.documents());
    results.put("total_hits", total);
    results.put("hits", hits);
    Path target = folder.resolve(RESULTS);
    Path partial = Artifacts.partial(target);
    try {
      try (OutputStream out = Files.newOutputStream(partial)) {
        json.writerWithDefaultPrettyPrinter().writeValue(out, results);
      }
      Artifacts.publish(partial, target);
    } finally {
      Files.deleteIfExists(partial); // gone once published; else this attempt's half file
    }

    Map<String, Object> result = new LinkedHashMap<>();
    result.put(RESULT_FILE, artifacts.relative(target));
    result.put("hits", hits.size());
    result.put("total", total);
    result.put("skipped_links", walk.skippedLinks);
    result.put("unreadable", walk.unreadable + indexed.unreadable());
    result.put("truncated", indexed.truncated());
    result.put("item_count", indexed.documents());
    result.put("bytes_in", indexed.bytesRead());
    result.put("bytes_out", Files.size(target));
    return result;
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

  private static void checkInterrupted() throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException("the search was stopped");
    }
  }

  /** Removes the job's artifact folder: its results and any index a crash left behind. */
  @Override
  protected void cleanup(Job job) throws IOException {
    artifacts.remove(KIND, job.uid);
  }
}
