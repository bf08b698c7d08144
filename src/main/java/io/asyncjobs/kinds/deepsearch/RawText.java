package io.asyncjobs.kinds.deepsearch;

import static java.nio.charset.StandardCharsets.US_ASCII;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * The bytes of one document as read from disk, and what they prove about the words of a query
 * without running the analyzer: whether a word surely is one of the document's tokens, surely is
 * none of them, or cannot be told from the bytes.
 *
 * <p>The proofs follow the word boundary rules of Unicode's text segmentation (UAX #29) that
 * StandardTokenizer implements, restricted to ASCII: a run of letters and digits is one token when
 * the bytes on both sides break it off (a space, a line end, most punctuation); letters or digits
 * or {@code _} next to it, or the joining punctuation between two letters ({@code . : '}) or two
 * digits ({@code . ' , ;}), make it part of a longer token. Any byte at or above 0x80 next to a
 * word leaves that occurrence undecided, as does a run of word characters long enough (255) for the
 * tokenizer to split it. A word is matched without regard to ASCII case, which is what lower-casing
 * does to ASCII; the few other characters that lower-case to an ASCII letter (found at class load)
 * make a document that contains them undecided for words with that letter.
 *
 * <p>A proof that a word is present only holds where the document's body is its bytes as text
 * ({@link #plain}: plain text, Markdown, and HTML without markup or character references); for
 * other HTML the bytes can only prove absence, and only where no markup or reference could have
 * made the word (see {@link #absenceHolds}).
 */
final class RawText {

  /** A boundary that surely separates tokens. */
  static final int BREAK = 0;

  /** A boundary inside a token. */
  static final int JOIN = 1;

  /** A boundary the bytes cannot decide. */
  static final int UNKNOWN = 2;

  /** StandardTokenizer splits longer runs into pieces of this many characters. */
  static final int MAX_TOKEN = 255;

  private static final byte OTHER = 0;
  private static final byte ALNUM = 1;
  private static final byte UNDERSCORE = 2;

  /** {@code . '}: join two letters or two digits. */
  private static final byte MID_NUM_LET = 3;

  /** {@code :}: joins two letters. */
  private static final byte MID_LETTER = 4;

  /** {@code , ;}: join two digits. */
  private static final byte MID_NUM = 5;

  private static final byte HIGH = 6;

  private static final byte[] CLASS = new byte[256];
  private static final byte[] LOWER = new byte[256];

  /** How far back an HTML character reference could reach to swallow the byte before a word. */
  private static final int REFERENCE_REACH = 40;

  /** How much of an HTML file jsoup reads to find a declared character set (5 KiB), with room. */
  private static final int CHARSET_WINDOW = 16 << 10;

  /** Characters at or above 0x80 whose lower case is an ASCII letter or digit, UTF-8 encoded. */
  private static final List<byte[]> FOLDING;

  /** For each of {@link #FOLDING}, the ASCII character it lower-cases to. */
  private static final byte[] FOLDS_TO;

  /**
   * HTML named references that decode to ASCII letters or digits (or to a character that
   * lower-cases to one), by the letters they make: jsoup's table, checked by RawTextTest.
   */
  static final String[][] LETTER_REFERENCES = {{"fjlig", "fj"}, {"Idot", "i"}};

  static {
    for (int c = 0; c < 256; c++) {
      byte kind;
      if (c >= 0x80) {
        kind = HIGH;
      } else if (Character.isLetterOrDigit(c)) {
        kind = ALNUM;
      } else {
        kind =
            switch (c) {
              case '_' -> UNDERSCORE;
              case '.', '\'' -> MID_NUM_LET;
              case ':' -> MID_LETTER;
              case ',', ';' -> MID_NUM;
              default -> OTHER;
            };
      }
      CLASS[c] = kind;
      LOWER[c] = (byte) (c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    List<byte[]> folding = new ArrayList<>();
    StringBuilder targets = new StringBuilder();
    for (int cp = 0x80; cp <= Character.MAX_CODE_POINT; cp++) {
      int lower = Character.toLowerCase(cp);
      if (lower < 0x80 && Character.isLetterOrDigit(lower)) {
        folding.add(new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8));
        targets.append((char) lower);
      }
    }
    FOLDING = List.copyOf(folding);
    FOLDS_TO = targets.toString().getBytes(US_ASCII);
  }

  final byte[] bytes;
  final int length;

  /** Whether the document's body text is these bytes, decoded (whitespace aside). */
  final boolean plain;

  /** Whether any byte is at or above 0x80. */
  final boolean high;

  /**
   * HTML: whether the file has a {@code <}, a {@code &}, a {@code &#}, a NUL (which jsoup drops).
   */
  final boolean lt;

  final boolean amp;
  private final boolean numericReference;
  final boolean nul;

  /** HTML: whether jsoup surely decodes the file as UTF-8 (or as ASCII-compatible). */
  private final boolean utf8;

  /** How many runs of word bytes there are: the estimate of the body's length in tokens. */
  final int wordRuns;

  /**
   * @param bytes the document's bytes, of which the first {@code length} count
   * @param html whether the document is HTML (parsed), rather than text or Markdown
   */
  RawText(byte[] bytes, int length, boolean html) {
    this(bytes, length, html, tally(bytes, length, html));
  }

  private static Tally tally(byte[] bytes, int length, boolean html) {
    Tally tally = new Tally();
    tally.add(bytes, 0, length, html);
    return tally;
  }

  /**
   * What one pass over a document's bytes counts, taken piece by piece while the document is read
   * (each piece still in the processor's cache): the runs of word bytes, whether any byte is at or
   * above 0x80, and for HTML whether there is a {@code <}, a {@code &}, a NUL.
   */
  static final class Tally {
    private long runs;
    private long or;
    private long lts;
    private long amps;
    private long nuls;

    /** The high bit set when the last byte counted may belong to a word. */
    private long carry;

    /** Counts {@code bytes[from, to)}, which follow what was counted before. */
    void add(byte[] bytes, int from, int to, boolean html) {
      int i = from;
      // Eight bytes at a time: a mask with the high bit of each byte that may belong to a word,
      // and a run starts where such a byte follows one that may not. HTML also looks for its
      // three bytes until each is found (markup and references turn up early in most pages).
      boolean markup = html && (lts == 0 || amps == 0);
      boolean nul = html && nuls == 0;
      // The loop works on locals, written back at the end.
      long runsNow = runs;
      long orNow = or;
      long carryNow = carry;
      long ltsNow = 0;
      long ampsNow = 0;
      long nulsNow = 0;
      for (; i + 8 <= to; i += 8) {
        long x = (long) LONGS.get(bytes, i);
        orNow |= x;
        long word = wordMask(x);
        runsNow += Long.bitCount(word & ~((word << 8) | carryNow));
        carryNow = (word >>> 56) & 0x80;
        if (markup) { // the same all through the loop, which the compiler splits on it
          ltsNow |= anyZero(x ^ ('<' * ONES));
          ampsNow |= anyZero(x ^ ('&' * ONES));
        }
        if (nul) {
          nulsNow |= anyZero(x);
        }
      }
      for (; i < to; i++) {
        int c = bytes[i] & 0xff;
        orNow |= c;
        byte kind = CLASS[c];
        long word = kind == ALNUM || kind == UNDERSCORE || kind == HIGH || c == 0x7f ? 0x80 : 0;
        if (word != 0 && carryNow == 0) {
          runsNow++;
        }
        carryNow = word;
        ltsNow |= c == '<' ? 1 : 0;
        ampsNow |= c == '&' ? 1 : 0;
        nulsNow |= c == 0 ? 1 : 0;
      }
      runs = runsNow;
      or = orNow;
      carry = carryNow;
      lts |= ltsNow;
      amps |= ampsNow;
      nuls |= nulsNow;
    }
  }

  /**
   * @param tally the counts of the first {@code length} bytes, taken while they were read
   */
  RawText(byte[] bytes, int length, boolean html, Tally tally) {
    this.bytes = bytes;
    this.length = length;
    this.wordRuns = (int) Math.min(Integer.MAX_VALUE, tally.runs);
    this.high = (tally.or & HIGHS) != 0;
    this.lt = html && tally.lts != 0;
    this.amp = html && tally.amps != 0;
    this.nul = html && tally.nuls != 0;
    this.numericReference = amp && indexOf(new byte[] {'&', '#'}, 0, length) >= 0;
    boolean wideBom = html && startsWithWideBom();
    this.utf8 = !html || (!wideBom && declaresNoOtherCharset());
    this.plain = !html || (!lt && !amp && !nul && !wideBom);
  }

  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private static final long ONES = 0x0101010101010101L;
  private static final long HIGHS = 0x8080808080808080L;
  private static final long LOWS = 0x7f7f7f7f7f7f7f7fL;

  /**
   * Not zero exactly when some byte of {@code x} is zero (which bits are set says nothing more: a
   * borrow may mark the byte above a zero one): one operation fewer than {@link #zeros}.
   */
  private static long anyZero(long x) {
    return (x - ONES) & ~x & HIGHS;
  }

  /** The high bit of every byte of {@code x} that is zero, and of no other. */
  private static long zeros(long x) {
    return ~(((x & LOWS) + LOWS) | x | LOWS);
  }

  /** The first index in {@code [from, to)} where {@code bytes} holds {@code b}, or -1. */
  static int indexOfByte(byte[] bytes, int from, int to, byte b) {
    long pattern = (b & 0xffL) * ONES;
    int i = from;
    for (; i + 8 <= to; i += 8) {
      long found = zeros((long) LONGS.get(bytes, i) ^ pattern);
      if (found != 0) {
        return i + (Long.numberOfTrailingZeros(found) >>> 3);
      }
    }
    for (; i < to; i++) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }

  /**
   * The high bit of every byte of {@code x} that may belong to a word: an ASCII letter or digit,
   * {@code _} (and DEL, which costs nothing to count along), any byte at or above 0x80.
   */
  private static long wordMask(long x) {
    long seven = x & LOWS;
    long folded = seven | (0x20 * ONES);
    // For 7-bit bytes, adding (0x80 - lo) sets the high bit exactly when the byte is >= lo.
    long letters = (folded + (0x80 - 'a') * ONES) & ~(folded + (0x7f - 'z') * ONES);
    long digits = (seven + (0x80 - '0') * ONES) & ~(seven + (0x7f - '9') * ONES);
    long underscore = folded + ONES; // 0x7f: '_' (0x5f) or DEL folded
    return (x | letters | digits | underscore) & HIGHS;
  }

  private boolean startsWithWideBom() {
    if (length < 2) {
      return false;
    }
    int b0 = bytes[0] & 0xff;
    int b1 = bytes[1] & 0xff;
    return (b0 == 0xfe && b1 == 0xff)
        || (b0 == 0xff && b1 == 0xfe)
        || (length >= 4 && b0 == 0 && b1 == 0 && bytes[2] == (byte) 0xfe);
  }

  /**
   * Whether every mention of {@code charset} or {@code encoding} near the start names UTF-8: jsoup
   * decodes in the character set a meta tag or XML declaration there names, else in UTF-8.
   */
  private boolean declaresNoOtherCharset() {
    if (!lt) {
      return true; // no tag, so no declaration
    }
    int window = Math.min(length, CHARSET_WINDOW);
    for (String word : new String[] {"charset", "encoding"}) {
      byte[] w = word.getBytes(US_ASCII);
      for (int at = indexOf(w, 0, window); at >= 0; at = indexOf(w, at + 1, window)) {
        int i = at + w.length;
        while (i < length && " \t\r\n=:\"'".indexOf(bytes[i]) >= 0) {
          i++;
        }
        if (!startsWithAt(i, "utf-8") && !startsWithAt(i, "utf8")) {
          return false;
        }
      }
    }
    return true;
  }

  private boolean startsWithAt(int at, String lowerAscii) {
    if (at + lowerAscii.length() > length) {
      return false;
    }
    for (int j = 0; j < lowerAscii.length(); j++) {
      if (LOWER[bytes[at + j] & 0xff] != lowerAscii.charAt(j)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The next place at or after {@code from} where {@code word} (lower-case ASCII) starts, or -1.
   */
  int indexOf(byte[] word, int from) {
    return indexOf(word, from, length);
  }

  /**
   * {@link #indexOf(byte[], int)} for a word that starts before {@code limit}. Looks eight bytes at
   * a time for the word's rarest pair of letters (either case: setting bit 5 folds a letter's two
   * cases together, and maps nothing else onto a letter), then compares the rest.
   */
  private int indexOf(byte[] word, int from, int limit) {
    int n = word.length;
    int lastStart = Math.min(length - n, limit - 1);
    if (lastStart < from) {
      return -1;
    }
    if (n == 1) {
      return indexOfLetter(word[0], from, lastStart + 1);
    }
    if (word != pivotOf) {
      pivotOf = word;
      pivot = rarestPair(word);
    }
    int pivot = this.pivot;
    long first = (word[pivot] & 0xffL) * ONES;
    long second = (word[pivot + 1] & 0xffL) * ONES;
    long fold = 0x20 * ONES;
    int i = from + pivot;
    int lastPivot = lastStart + pivot;
    // Both loads stay inside the bytes: i + 1 + 8 <= lastPivot + 1 + 8 <= length.
    for (; i + 8 <= lastPivot + 1; i += 8) {
      long x = (long) LONGS.get(bytes, i);
      long y = (long) LONGS.get(bytes, i + 1);
      long found = zeros((x | fold) ^ first) & zeros((y | fold) ^ second);
      while (found != 0) {
        int start = i + (Long.numberOfTrailingZeros(found) >>> 3) - pivot;
        if (sameLetters(start, word)) {
          return start;
        }
        found &= found - 1;
      }
    }
    for (; i <= lastPivot; i++) {
      if (sameLetters(i - pivot, word)) {
        return i - pivot;
      }
    }
    return -1;
  }

  /** The first place in {@code [from, to)} of a one-character word, in either case. */
  private int indexOfLetter(byte letter, int from, int to) {
    for (int i = from; i < to; i++) {
      if (LOWER[bytes[i] & 0xff] == letter) {
        return i;
      }
    }
    return -1;
  }

  /** The word whose rarest pair {@link #pivot} is: phrase() looks for one word many times. */
  private byte[] pivotOf;

  private int pivot;

  /** English letters from the most to the least frequent; digits and the rest rarer still. */
  private static final String FREQUENT = "etaoinshrdlcumwfgypbvkjxqz";

  /**
   * Where the word's least frequent pair of neighbouring letters starts, where a search for the
   * pair stops least often.
   */
  private static int rarestPair(byte[] word) {
    int best = 0;
    int bestRank = -1;
    for (int j = 0; j + 1 < word.length; j++) {
      int rank = rank(word[j]) + rank(word[j + 1]);
      if (rank > bestRank) {
        best = j;
        bestRank = rank;
      }
    }
    return best;
  }

  private static int rank(byte letter) {
    int rank = FREQUENT.indexOf(letter);
    return rank < 0 ? FREQUENT.length() : rank;
  }

  private static boolean letter(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  private static boolean digit(int c) {
    return c >= '0' && c <= '9';
  }

  /** Whether a token may begin at {@code start}, where a letter or digit stands. */
  int before(int start) {
    return edge(start - 1, start, start - 2);
  }

  /** Whether a token may end at {@code end} (exclusive), after a letter or digit. */
  int after(int end) {
    return edge(end, end - 1, end + 1);
  }

  /**
   * Whether a token stops at one of its sides: {@code inner} is its byte on that side, {@code
   * outside} the byte next to it there, {@code beyond} the one after that (an index out of the text
   * means the text ends there). Punctuation that joins only between letters or digits is judged
   * from the bytes on both of its sides.
   */
  private int edge(int outside, int inner, int beyond) {
    if (outside < 0 || outside >= length) {
      return BREAK;
    }
    byte kind = CLASS[bytes[outside] & 0xff];
    return switch (kind) {
      case ALNUM, UNDERSCORE -> JOIN;
      case HIGH -> UNKNOWN;
      case MID_NUM_LET, MID_LETTER, MID_NUM ->
          beyond < 0 || beyond >= length
              ? BREAK
              : joinAcross(kind, bytes[inner] & 0xff, bytes[beyond] & 0xff);
      default -> BREAK;
    };
  }

  /** Whether punctuation of class {@code mid} between {@code left} and {@code right} joins them. */
  private static int joinAcross(byte mid, int left, int right) {
    if (left >= 0x80 || right >= 0x80) {
      return UNKNOWN; // a letter or digit of another script, or a combining mark
    }
    boolean letters = letter(left) && letter(right);
    boolean digits = digit(left) && digit(right);
    return switch (mid) {
      case MID_NUM_LET -> letters || digits ? JOIN : BREAK;
      case MID_LETTER -> letters ? JOIN : BREAK;
      default -> digits ? JOIN : BREAK;
    };
  }

  /**
   * Whether the run of word and joining bytes around {@code [start, end)} is short enough that the
   * tokenizer does not cut it into pieces (where a piece could start at {@code start}).
   */
  private boolean unsplit(int start, int end) {
    int from = start;
    while (from > 0 && isWordish(bytes[from - 1]) && start - from < MAX_TOKEN) {
      from--;
    }
    int to = end;
    while (to < length && isWordish(bytes[to]) && to - from < MAX_TOKEN) {
      to++;
    }
    return to - from < MAX_TOKEN;
  }

  /** Any byte that may belong to a token (a letter of another script, too). */
  private static boolean isWordish(byte b) {
    return CLASS[b & 0xff] != OTHER;
  }

  /**
   * A refutation from the byte before a word holds in HTML only if no character reference could
   * have swallowed that byte ({@code &not} in {@code &notice} decodes to "¬ice").
   */
  private boolean referenceBefore(int start) {
    if (!amp) {
      return false;
    }
    for (int i = start - 1; i >= 0 && i >= start - REFERENCE_REACH; i--) {
      if (bytes[i] == '&') {
        return true;
      }
    }
    return false;
  }

  /** What the bytes say about one occurrence of a word at {@code [start, end)}. */
  private int occurrence(int start, int end) {
    int before = before(start);
    int after = after(end);
    if (after == JOIN || (before == JOIN && !referenceBefore(start))) {
      return unsplit(start, end) ? JOIN : UNKNOWN;
    }
    return before == BREAK && after == BREAK ? BREAK : UNKNOWN;
  }

  /**
   * What the bytes say about a word: how often it surely is a whole token, whether some occurrence
   * is left open, and where the first sure one starts (-1 for none).
   */
  record Count(int sure, boolean open, int first) {}

  /**
   * Counts where {@code word} (lower-case ASCII letters and digits) is surely a token; {@code open}
   * when some occurrence cannot be decided. With {@code first}, stops at the first sure one.
   */
  Count word(byte[] word, boolean first) {
    int sure = 0;
    boolean open = false;
    int firstAt = -1;
    for (int at = indexOf(word, 0); at >= 0; at = indexOf(word, at + 1)) {
      switch (occurrence(at, at + word.length)) {
        case BREAK -> {
          sure++;
          firstAt = firstAt < 0 ? at : firstAt;
          if (first) {
            return new Count(sure, open, firstAt);
          }
        }
        case UNKNOWN -> open = true;
        default -> {}
      }
    }
    return new Count(sure, open, firstAt);
  }

  /**
   * Counts where the words follow one another as consecutive tokens: between two of them only ASCII
   * bytes that make no token. {@code open} when some occurrence of the first word cannot be
   * decided.
   */
  Count phrase(byte[][] words) {
    int sure = 0;
    boolean open = false;
    int firstAt = -1;
    byte[] head = words[0];
    for (int at = indexOf(head, 0); at >= 0; at = indexOf(head, at + 1)) {
      int end = at + head.length;
      int kind = occurrence(at, end);
      if (kind == JOIN) {
        continue;
      }
      if (kind == UNKNOWN) {
        open = true;
        continue;
      }
      int chain = chain(words, end);
      if (chain == BREAK) {
        sure++;
        firstAt = firstAt < 0 ? at : firstAt;
      } else if (chain == UNKNOWN) {
        open = true;
      }
    }
    return new Count(sure, open, firstAt);
  }

  /**
   * After a whole token of the first word ending at {@code end}: BREAK when the other words follow
   * as tokens, JOIN when they surely do not, UNKNOWN when the bytes cannot tell.
   */
  private int chain(byte[][] words, int end) {
    int pos = end;
    for (int k = 1; k < words.length; k++) {
      // Skip what lies between: ASCII bytes that are no part of a word make no token.
      while (pos < length && CLASS[bytes[pos] & 0xff] != ALNUM) {
        byte kind = CLASS[bytes[pos] & 0xff];
        if (kind == HIGH || kind == UNDERSCORE) {
          return UNKNOWN;
        }
        pos++;
      }
      if (pos >= length) {
        return JOIN; // the text ends: no next token
      }
      // Here a token starts (the byte before is punctuation that cannot join: the previous
      // token ended with a break). It is the next word only if its letters and digits are.
      int runEnd = pos;
      while (runEnd < length && CLASS[bytes[runEnd] & 0xff] == ALNUM) {
        runEnd++;
      }
      if (runEnd < length && CLASS[bytes[runEnd] & 0xff] == HIGH) {
        return UNKNOWN; // a letter that lower-cases to ASCII, a mark, another script
      }
      byte[] word = words[k];
      if (runEnd - pos != word.length || !sameLetters(pos, word)) {
        // The token starts with this run and is either the run or longer: never the word.
        return JOIN;
      }
      int after = after(runEnd);
      if (after != BREAK) {
        return after == JOIN && unsplit(pos, runEnd) ? JOIN : UNKNOWN;
      }
      pos = runEnd;
    }
    return BREAK;
  }

  private boolean sameLetters(int at, byte[] word) {
    for (int j = 0; j < word.length; j++) {
      if (LOWER[bytes[at + j] & 0xff] != word[j]) {
        return false;
      }
    }
    return true;
  }

  /**
   * Counts the tokens that start with {@code literal} and that {@code accepts} takes (a prefix or
   * wildcard query); {@code open} when some occurrence cannot be decided.
   */
  Count prefix(byte[] literal, Predicate<String> accepts) {
    int sure = 0;
    boolean open = false;
    int firstAt = -1;
    for (int at = indexOf(literal, 0); at >= 0; at = indexOf(literal, at + 1)) {
      int before = before(at);
      if (before == JOIN && !referenceBefore(at) && unsplit(at, at + literal.length)) {
        continue; // inside a longer token
      }
      if (before != BREAK) {
        open = true;
        continue;
      }
      int end = at + literal.length;
      while (end < length && CLASS[bytes[end] & 0xff] == ALNUM) {
        end++;
      }
      if (after(end) != BREAK || end - at >= MAX_TOKEN || !plain) {
        open = true; // a longer token, perhaps accepted; or text that markup may join
        continue;
      }
      if (accepts.test(lower(at, end))) {
        sure++;
        firstAt = firstAt < 0 ? at : firstAt;
      }
    }
    return new Count(sure, open, firstAt);
  }

  private String lower(int from, int to) {
    char[] chars = new char[to - from];
    for (int i = from; i < to; i++) {
      chars[i - from] = (char) LOWER[bytes[i] & 0xff];
    }
    return new String(chars);
  }

  /**
   * Whether a count with nothing sure and nothing open proves that no token with the letters of
   * {@code literal} is in the document's text: no character outside ASCII that lower-cases into
   * them, and for HTML no character reference or markup that could have made them.
   */
  boolean absenceHolds(byte[] literal) {
    if (high) {
      for (int i = 0; i < FOLDING.size(); i++) {
        if (contains(literal, FOLDS_TO[i]) && folding(i)) {
          return false;
        }
      }
    }
    if (plain) {
      return true;
    }
    if (!utf8 || numericReference || nul) {
      return false;
    }
    if (amp) {
      for (String[] reference : LETTER_REFERENCES) {
        if (sharesLetter(literal, reference[1])
            && indexOf(("&" + reference[0]).toLowerCase(Locale.ROOT).getBytes(US_ASCII), 0) >= 0) {
          return false;
        }
      }
    }
    return !lt || !splitByMarkup(literal);
  }

  private static boolean contains(byte[] literal, byte c) {
    for (byte b : literal) {
      if (b == c) {
        return true;
      }
    }
    return false;
  }

  private static boolean sharesLetter(byte[] literal, String letters) {
    for (int i = 0; i < letters.length(); i++) {
      if (contains(literal, (byte) letters.charAt(i))) {
        return true;
      }
    }
    return false;
  }

  /** Per character of {@link #FOLDING}: 0 not looked for yet, 1 absent, 2 present. */
  private byte[] folding;

  /** Whether the document holds the {@code i}th of {@link #FOLDING}; looked for once. */
  private boolean folding(int i) {
    if (folding == null) {
      folding = new byte[FOLDING.size()];
    }
    if (folding[i] == 0) {
      folding[i] = (byte) (indexOfExact(FOLDING.get(i)) >= 0 ? 2 : 1);
    }
    return folding[i] == 2;
  }

  private int indexOfExact(byte[] sequence) {
    int last = length - sequence.length;
    for (int i = indexOfByte(bytes, 0, last + 1, sequence[0]);
        i >= 0;
        i = indexOfByte(bytes, i + 1, last + 1, sequence[0])) {
      int j = 1;
      while (j < sequence.length && bytes[i + j] == sequence[j]) {
        j++;
      }
      if (j == sequence.length) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Whether the literal could be made of text pieces on both sides of tags ({@code le<b>ase}): that
   * needs a start of it right before some {@code <} and an end of it right after some {@code >}.
   */
  private boolean splitByMarkup(byte[] literal) {
    int n = literal.length;
    if (n < 2) {
      return false;
    }
    boolean head = false;
    boolean tail = false;
    for (int i = 0; i < length && !(head && tail); i++) {
      byte c = bytes[i];
      if (c == '<' && !head) {
        for (int k = 1; k < n && k <= i && !head; k++) {
          head = matchesAt(i - k, literal, 0, k);
        }
      } else if (c == '>' && !tail) {
        for (int k = 1; k < n && i + 1 + k <= length && !tail; k++) {
          tail = matchesAt(i + 1, literal, n - k, k);
        }
      }
    }
    return head && tail;
  }

  private boolean matchesAt(int at, byte[] literal, int from, int count) {
    for (int j = 0; j < count; j++) {
      if (LOWER[bytes[at + j] & 0xff] != literal[from + j]) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code text} is one the byte-level proofs handle: ASCII letters and digits only. */
  static boolean scannable(String text) {
    if (text.isEmpty() || text.length() >= MAX_TOKEN) {
      return false;
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c >= 0x80 || CLASS[c] != ALNUM || (c >= 'A' && c <= 'Z')) {
        return false;
      }
    }
    return true;
  }
}
