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
import jakarta.annotation.PreDestroy;
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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.queryparser.classic.MultiFieldQueryParser;
import org.apache.lucene.queryparser.classic.ParseException;
import org.apache.lucene.search.Query;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.NIOFSDirectory;

/**
 * The {@code deepsearch} kind: ranked full-text search over the {@code .txt}, {@code .md} and
 * {@code .html}/{@code .htm} files under one folder of the caller's tree.
 *
 * <p>A query in Lucene's classic syntax whose matches all contain some literal word (see {@link
 * QueryPlan#prefilters}) is searched without an index: each document is read once, on a small pool
 * of threads the kind keeps (two by default), and decided from its raw bytes ({@link RawText},
 * {@link Prefilter}); a document the bytes cannot decide is extracted and checked exactly with the
 * analyzer. The matches are ranked with BM25 from the counts the bytes gave and collection
 * statistics estimated over every document read ({@link CollectionEstimate}); the best {@code
 * limit} get up to three highlighted snippets ({@link Snippets}). Any other query takes the full
 * index, the reference the prefiltered search is tested against: every document goes into a
 * throw-away Lucene index in a folder of the attempt's own in the job's artifact folder ({@link
 * HitIndex}), deleted whether the attempt succeeds or fails.
 *
 * <p>Either way {@code results.json} is written under a temporary name of the attempt's own and
 * renamed into place, so two attempts of one job running at once never touch each other's files.
 * The walk follows links only while they stay inside the caller's folder; any other link is skipped
 * and counted. A cancel or a timeout interrupts the attempt, which stops its threads. {@link
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

  /** The indexed fields a query searches, and their weights. */
  static final Map<String, Float> FIELDS = Map.of(QueryPlan.TITLE, 2.0f, QueryPlan.BODY, 1.0f);

  /** The share of the progress bar that indexing takes (full index); ranking takes the rest. */
  private static final double INDEXING_SHARE = 0.9;

  /** Prefiltered: the share that scanning (with the exact checks) takes; ranking the rest. */
  private static final double SCAN_SHARE = 0.9;

  private final FileScopes scopes;
  private final Artifacts artifacts;
  private final ObjectMapper json;

  /**
   * The kind's two scan threads, shared by its attempts: threads that live on keep their own
   * buffers for file reads, where threads made per attempt left native memory behind each time.
   */
  private final Parallel parallel = new Parallel();

  /**
   * Each scan thread's read buffer, kept from one attempt to the next (at most {@link
   * Documents#MAX_DOCUMENT_BYTES} each) rather than made anew: a search of a large tree otherwise
   * leaves tens of megabytes of buffers behind for the collector.
   */
  private final ThreadLocal<Documents.Buffer> buffers =
      ThreadLocal.withInitial(Documents.Buffer::new);

  /** The bytes of snippet stretches a search copies while scanning; a test's to lower. */
  volatile long stretchBudget = STRETCH_BUDGET;

  /** Where a test runs something half-way through an attempt. */
  private volatile Checkpoint onDecided = Checkpoint.NONE;

  DeepsearchService(FileScopes scopes, Artifacts artifacts, ObjectMapper json) {
    this.scopes = scopes;
    this.artifacts = artifacts;
    this.json = json;
  }

  /**
   * Sets what runs once an attempt knows which documents match (it has built its full index, or
   * decided every document), right before it ranks them: a test's way to run another attempt
   * meanwhile.
   */
  void whenDecided(Checkpoint hook) {
    this.onDecided = Checkpoint.orNone(hook);
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
        """
        {"type": "object", "required": ["root", "query"], "additionalProperties": false,
         "properties": {
           "root": {"type": "string", "minLength": 1, "maxLength": %d, "pattern": "%s",
                    "description": "the folder of your tree to search"},
           "query": {"type": "string", "minLength": 1, "maxLength": %d, "pattern": "%s",
                     "description": "Lucene classic query syntax"},
           "limit": {"type": "integer", "minimum": 1, "maximum": %d,
                     "description": "most hits kept"}}}"""
            .formatted(MAX_PATH, Payloads.NOT_BLANK, MAX_QUERY, Payloads.NOT_BLANK, MAX_LIMIT),
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
        new MultiFieldQueryParser(new String[] {QueryPlan.TITLE, QueryPlan.BODY}, analyzer, FIELDS);
    return parser.parse(query);
  }

  /** A file to search: the path the walk reached it by, its type and size. */
  record Candidate(Path path, Documents.Type type, long size) {}

  /** What the walk found. */
  static final class Walk {
    final List<Candidate> files = new ArrayList<>();
    long bytes;
    int skippedLinks;
    int unreadable;
  }

  /** How an attempt searches: which documents it indexes. */
  enum Strategy {
    /**
     * Index every document read: the reference, and the way for queries the prefilter cannot
     * narrow.
     */
    FULL_INDEX,
    /** Decide documents from their bytes; analyse only those the bytes cannot decide. */
    PREFILTER
  }

  /**
   * What a search found, and what it read. {@code analysed}: documents extracted and run through
   * the analyzer (every one read for the full index; for the prefilter only those its bytes could
   * not decide).
   */
  record Searched(
      Strategy strategy,
      List<Map<String, Object>> hits,
      long total,
      int documents,
      int analysed,
      long bytesRead,
      int unreadable,
      int truncated,
      int skippedLinks,
      List<Path> matching) {}

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
      Path folder = artifacts.folder(KIND, job.uid);
      Searched searched = search(scope, root, queryText, limit, folder, null, false);
      Map<String, Object> outcome = publish(job, folder, searched);
      reportProgress(1.0, (long) searched.documents());
      return outcome;
    } catch (FileSystemException e) {
      // Its message holds absolute paths; the caller sees its own names instead.
      throw new IOException(describe(e, scope), e);
    }
  }

  /**
   * Searches the documents under {@code root}.
   *
   * @param folder where a full-index attempt keeps its index, in a folder of its own
   * @param strategy how to search; null chooses: the prefilter when the query allows one
   * @param listMatching whether to list every matching file (tests compare the strategies)
   */
  Searched search(
      FileScope scope,
      Path root,
      String queryText,
      int limit,
      Path folder,
      Strategy strategy,
      boolean listMatching)
      throws Exception {
    try (Analyzer analyzer = analyzer()) {
      Query query = parse(queryText, analyzer);
      QueryPlan plan = QueryPlan.of(query);
      Walk walk = walk(scope, root);
      Strategy chosen =
          strategy != null ? strategy : plan.prefilters ? Strategy.PREFILTER : Strategy.FULL_INDEX;
      if (chosen == Strategy.PREFILTER) {
        return prefiltered(scope, walk, query, plan, limit, analyzer, listMatching);
      }
      // This attempt's own index: another attempt of the job (an old owner still searching, say)
      // may be using its own in the same folder, and must find it as it left it. So an index a
      // crashed attempt left stays until the job expires: it cannot be told from a live one.
      Path indexDir = Artifacts.partial(folder.resolve("index"));
      // Not FSDirectory.open, which picks MMapDirectory: that one finds its Java 19+ reader
      // through a reflective MethodHandles look-up and maps files through shared memory arenas,
      // which a native executable lacks (its class initializer fails there). The index is written
      // once, searched once and deleted, so plain positional reads cost nothing that matters.
      try (Directory directory = new NIOFSDirectory(indexDir)) {
        return fullIndex(scope, walk, query, limit, directory, analyzer, listMatching);
      } finally {
        Trees.delete(indexDir);
      }
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

  /**
   * The full-index search: every document read is extracted and indexed, and the index itself gives
   * the statistics BM25 ranks with. The reference the prefilter is tested against, and the search
   * for queries the prefilter cannot narrow.
   */
  private Searched fullIndex(
      FileScope scope,
      Walk walk,
      Query query,
      int limit,
      Directory directory,
      Analyzer analyzer,
      boolean listMatching)
      throws IOException, InterruptedException {
    int documents = 0;
    int unreadable = 0;
    int truncated = 0;
    long bytesRead = 0;
    try (HitIndex index = new HitIndex(directory, analyzer)) {
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
        index.add(file.path(), text);
        documents++;
        double done =
            walk.bytes == 0
                ? (double) documents / walk.files.size()
                : Math.min(1.0, (double) bytesRead / walk.bytes);
        reportProgress(INDEXING_SHARE * done, (long) documents);
      }
      index.commit();
      onDecided.reached();
      HitIndex.Found found = index.search(query, limit, scope);
      return new Searched(
          Strategy.FULL_INDEX,
          found.hits(),
          found.total(),
          documents,
          documents,
          bytesRead,
          walk.unreadable + unreadable,
          truncated,
          walk.skippedLinks,
          listMatching ? index.matching(query) : List.of());
    }
  }

  /** What a prefiltered search keeps per document: its facts, and the exact verdict if checked. */
  private static final class Scanned {
    Prefilter.Facts facts;
    boolean matched;
    float score;

    /** The title, when known without parsing; whether the body is the file's bytes. */
    String title;

    boolean plain;

    /**
     * The bytes of the snippet stretch, copied while the file was in the buffer (where the snippets
     * come from the bytes and the budget allowed); null when {@link #hit} reads them.
     */
    byte[] stretch;

    /** How much of the file the scan read: the length the stretch is cut against. */
    long read;
  }

  /** The state of one scanning thread. */
  private record Scanner(Documents.Buffer buffer, Prefilter prefilter) {}

  /**
   * The prefiltered search. Every document is read once and decided from its bytes where they can
   * tell (see {@link RawText}); those they cannot are extracted and checked exactly with the
   * analyzer. The matching documents are ranked with BM25 from the counts the bytes gave and
   * collection statistics estimated over every document read ({@link CollectionEstimate}); the best
   * {@code limit} get their snippets. Nothing is indexed.
   */
  private Searched prefiltered(
      FileScope scope,
      Walk walk,
      Query query,
      QueryPlan plan,
      int limit,
      Analyzer analyzer,
      boolean listMatching)
      throws Exception {
    List<Candidate> files = walk.files;
    int count = files.size();
    Scanned[] scanned = new Scanned[count];
    AtomicLong bytesScanned = new AtomicLong();
    AtomicInteger documentsScanned = new AtomicInteger();
    AtomicInteger unreadable = new AtomicInteger();
    AtomicInteger truncated = new AtomicInteger();
    AtomicInteger checked = new AtomicInteger();
    AtomicLong stretchBudget = new AtomicLong(this.stretchBudget);
    Runnable scanProgress =
        () -> {
          double done =
              walk.bytes == 0
                  ? (double) documentsScanned.get() / Math.max(1, count)
                  : Math.min(1.0, (double) bytesScanned.get() / walk.bytes);
          reportProgress(SCAN_SHARE * done, (long) documentsScanned.get());
        };
    // The largest files first: the threads then end together on small ones, where a large file
    // taken last would leave one thread scanning alone.
    int[] order =
        IntStream.range(0, count)
            .boxed()
            .sorted((a, b) -> Long.compare(files.get(b).size(), files.get(a).size()))
            .mapToInt(Integer::intValue)
            .toArray();
    parallel.forEach(
        count,
        () -> new Scanner(buffers.get(), new Prefilter(plan, analyzer)),
        (scanner, k) -> {
          int i = order[k];
          Candidate file = files.get(i);
          Documents.Buffer buffer = scanner.buffer();
          try {
            buffer.read(scope, file.path(), file.size(), file.type() == Documents.Type.HTML);
          } catch (FileSystemException | PathRefusedException e) {
            unreadable.incrementAndGet(); // vanished, not readable, or now a link
            return;
          }
          String fileName = file.path().getFileName().toString();
          RawText raw =
              new RawText(
                  buffer.bytes, buffer.length, file.type() == Documents.Type.HTML, buffer.tally);
          String title =
              switch (file.type()) {
                case TEXT -> fileName;
                case MARKDOWN ->
                    Documents.markdownTitle(buffer.bytes, buffer.length).orElse(fileName);
                case HTML -> raw.plain ? fileName : null;
              };
          Scanned entry = new Scanned();
          entry.title = title;
          entry.plain = raw.plain;
          entry.facts = scanner.prefilter().scan(raw, title, fileName);
          entry.matched = entry.facts.verdict == QueryPlan.TRUE;
          if (entry.facts.verdict == QueryPlan.UNKNOWN) {
            // The bytes cannot tell: the same bytes extracted and checked exactly.
            Documents.Extracted text =
                Documents.extract(
                    file.type(), Arrays.copyOf(buffer.bytes, buffer.length), fileName);
            entry.matched = scanner.prefilter().check(query, text);
            entry.plain = false; // its snippets come from the whole text
            checked.incrementAndGet();
          }
          if (entry.matched && entry.title != null && entry.plain) {
            keepStretch(entry, buffer, stretchBudget);
          }
          scanned[i] = entry;
          if (file.size() > buffer.length) {
            truncated.incrementAndGet();
          }
          bytesScanned.addAndGet(buffer.length);
          documentsScanned.incrementAndGet();
        },
        scanProgress);

    List<Prefilter.Facts> facts = new ArrayList<>(count);
    List<Integer> matching = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      facts.add(scanned[i] == null ? null : scanned[i].facts);
      if (scanned[i] != null && scanned[i].matched) {
        matching.add(i);
      }
    }
    CollectionEstimate estimate = new CollectionEstimate(plan, facts);
    for (int i : matching) {
      Prefilter.Facts fact = scanned[i].facts;
      scanned[i].score = plan.score(fact.leaves, leaf -> estimate.score(leaf, fact));
    }
    // The best first; ties in walk order, as the full index breaks them (by document number).
    List<Integer> best = new ArrayList<>(matching);
    best.sort(
        (a, b) ->
            scanned[a].score != scanned[b].score
                ? Float.compare(scanned[b].score, scanned[a].score)
                : Integer.compare(a, b));
    best = best.subList(0, Math.min(limit, best.size()));
    onDecided.reached();

    List<Integer> shown = best;
    @SuppressWarnings("unchecked")
    Map<String, Object>[] made = new Map[shown.size()];
    parallel.forEach(
        shown.size(),
        () -> new Snippets(analyzer, query),
        (own, k) ->
            made[k] =
                hit(scope, files.get(shown.get(k)), scanned[shown.get(k)], own, plan.literals),
        () -> {});
    List<Map<String, Object>> hits = new ArrayList<>();
    for (Map<String, Object> hit : made) {
      if (hit != null) {
        hits.add(hit); // null: the file is gone since it was scanned
      }
    }
    List<Path> paths = new ArrayList<>();
    if (listMatching) {
      matching.forEach(i -> paths.add(files.get(i).path()));
    }
    return new Searched(
        Strategy.PREFILTER,
        hits,
        matching.size(),
        documentsScanned.get(),
        checked.get(),
        bytesScanned.get(),
        walk.unreadable + unreadable.get(),
        truncated.get(),
        walk.skippedLinks,
        paths);
  }

  /** Bytes of a hit's text shown around its first sure match, for its snippets. */
  private static final int SNIPPET_LEAD = 256;

  private static final int SNIPPET_SPAN = 2 << 10;

  /**
   * The most bytes of snippet stretches one search copies while scanning (2,048 hits' worth): the
   * hits beyond it, when shown, read theirs from the file again.
   */
  static final long STRETCH_BUDGET = 4L << 20;

  /** Copies the stretch a matching document's snippets come from, while the budget lasts. */
  private static void keepStretch(Scanned entry, Documents.Buffer buffer, AtomicLong budget) {
    int from = stretchStart(entry.facts);
    int to = Math.min(buffer.length, from + SNIPPET_SPAN);
    if (from >= to || budget.addAndGet(-(to - from)) < 0) {
      return;
    }
    entry.stretch = Arrays.copyOfRange(buffer.bytes, from, to);
    entry.read = buffer.length;
  }

  /** Where a plain hit's snippet stretch starts: a little before its first sure match. */
  private static int stretchStart(Prefilter.Facts facts) {
    return Math.max(0, facts.firstMatch - SNIPPET_LEAD);
  }

  /**
   * One hit of a prefiltered search: its title and snippets. Where the body is the file's bytes and
   * the bytes showed where a match is, the snippets come from the stretch of text around the first
   * such match; otherwise from the extracted text, around the first of the query's words in it.
   * Null when the file must be read again and is gone (or no longer readable in the scope); a hit
   * whose stretch was kept from the scan is shown from the bytes that matched, whatever became of
   * its file since.
   */
  private Map<String, Object> hit(
      FileScope scope, Candidate file, Scanned scanned, Snippets snippets, List<String> literals)
      throws IOException {
    Prefilter.Facts fact = scanned.facts;
    String fileName = file.path().getFileName().toString();
    String title = scanned.title;
    List<?> shown;
    try {
      if (title != null && scanned.plain) {
        int from = stretchStart(fact);
        Documents.Stretch stretch =
            scanned.stretch != null
                ? Documents.stretchOf(scanned.stretch, scanned.stretch.length, from, scanned.read)
                : Documents.readStretch(scope, file.path(), from, SNIPPET_SPAN);
        shown = snippets.of(stretch.text(), stretch.moreBefore(), stretch.moreAfter());
      } else {
        byte[] bytes = Documents.read(scope, file.path());
        Documents.Extracted text = Documents.extract(file.type(), bytes, fileName);
        title = text.title();
        shown = snippets.around(text.body(), literals, SNIPPET_LEAD, SNIPPET_SPAN);
      }
    } catch (FileSystemException | PathRefusedException e) {
      return null; // gone since it was scanned
    }
    Map<String, Object> hit = new LinkedHashMap<>();
    hit.put("path", scope.nameOf(file.path()));
    hit.put("title", title);
    hit.put("score", scanned.score);
    hit.put("snippets", shown);
    return hit;
  }

  /** Writes results.json under a name of this attempt's own, renames it into place. */
  private Map<String, Object> publish(Job job, Path folder, Searched searched) throws IOException {
    Map<String, Object> results = new LinkedHashMap<>();
    results.put("query", job.payload.get("query"));
    results.put("root", job.payload.get("root"));
    results.put("documents_searched", searched.documents());
    results.put("total_hits", searched.total());
    results.put("hits", searched.hits());
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
    result.put("hits", searched.hits().size());
    result.put("total", searched.total());
    result.put("skipped_links", searched.skippedLinks());
    result.put("unreadable", searched.unreadable());
    result.put("truncated", searched.truncated());
    result.put("item_count", searched.documents());
    result.put("bytes_in", searched.bytesRead());
    result.put("bytes_out", Files.size(target));
    return result;
  }

  private static void checkInterrupted() throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException("the search was stopped");
    }
  }

  /** Stops the scan threads when the application stops. */
  @PreDestroy
  void stopScanning() {
    parallel.close();
  }

  /** Removes the job's artifact folder: its results and any index a crash left behind. */
  @Override
  protected void cleanup(Job job) throws IOException {
    artifacts.remove(KIND, job.uid);
  }
}
