package io.asyncjobs.kinds.seo;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The addresses of a site's pages: where a link or canonical URL found in a page lands inside the
 * site folder, and the absolute URL a page is published under when the site's base URL is known.
 *
 * <p>Without a base URL the site is taken to sit at the root of its host. Links are resolved the
 * way a browser resolves them (RFC 3986): {@code ..} never climbs above the host's root, and a
 * root-relative link ({@code /about.html}) starts at the base URL's host root, so with a base URL
 * under a folder ({@code https://example.com/docs/}) it must start with {@code /docs/} to stay in
 * the site.
 */
public final class SiteUrls {

  /** Where a reference points. */
  public enum Where {
    /** A path inside the site folder; {@link Target#path()} names it. */
    SITE,
    /** The site's host, but outside the site's folder: nothing here can check it. */
    OUTSIDE,
    /** Another host or a non-HTTP scheme (mailto:, tel:, javascript:, ...). */
    EXTERNAL,
    /** Not a URL at all. */
    MALFORMED
  }

  /**
   * A resolved reference.
   *
   * @param where where it points
   * @param path for {@link Where#SITE}: the path relative to the site folder, with {@code /}
   *     separators and percent-escapes decoded; it ends with {@code /} (or is empty) when it names
   *     a folder
   * @param fragment the decoded part after {@code #}, or null when there is none
   * @param query whether a non-empty query ({@code ?...}) was present
   */
  public record Target(Where where, String path, String fragment, boolean query) {}

  private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");

  private final URI base;
  private final List<String> prefix;

  /**
   * The addresses of a site published under {@code base}.
   *
   * @param base the site's base URL as {@link #parseBase} returns it, or null when unknown
   */
  public SiteUrls(URI base) {
    this.base = base;
    this.prefix = base == null ? List.of() : folderSegments(base.getRawPath());
  }

  /** The base URL, or null when the job was given none. */
  public URI base() {
    return base;
  }

  /**
   * Checks and normalizes a base URL: absolute http or https with a host, no user info, query or
   * fragment; the path gets a trailing {@code /} and the scheme and host are lower-cased.
   *
   * @throws IllegalArgumentException naming the problem, for a 400
   */
  public static URI parseBase(String text) {
    URI uri;
    try {
      uri = new URI(text.strip());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("base_url is not a valid URL: " + e.getReason());
    }
    String scheme = uri.getScheme();
    if (scheme == null
        || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))
        || uri.getHost() == null) {
      throw new IllegalArgumentException(
          "base_url must be an absolute http or https URL, for example https://www.example.com/");
    }
    if (uri.getRawUserInfo() != null) {
      throw new IllegalArgumentException("base_url must not carry a user name or password");
    }
    if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
      throw new IllegalArgumentException("base_url must not have a query (?) or a fragment (#)");
    }
    String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
    if (!path.endsWith("/")) {
      path += "/";
    }
    String authority = uri.getHost().toLowerCase(Locale.ROOT);
    if (uri.getPort() >= 0) {
      authority += ":" + uri.getPort();
    }
    return URI.create(scheme.toLowerCase(Locale.ROOT) + "://" + authority + path).normalize();
  }

  /**
   * The absolute URL of a page: the base URL followed by the page's path, each segment
   * percent-encoded. An {@code index.html} or {@code index.htm} page is published as its folder
   * ({@code blog/index.html} becomes {@code <base>blog/}), as web servers serve it.
   *
   * @throws IllegalStateException when there is no base URL
   */
  public String urlOf(String pagePath) {
    if (base == null) {
      throw new IllegalStateException("no base URL");
    }
    String path = folderOfIndex(pagePath);
    StringBuilder url = new StringBuilder(base.toString());
    String[] segments = path.split("/", -1);
    for (int i = 0; i < segments.length; i++) {
      if (i > 0) {
        url.append('/');
      }
      url.append(encodeSegment(segments[i]));
    }
    return url.toString();
  }

  /**
   * The path a page is reached under when it is an index page: its folder with a trailing {@code /}
   * ({@code ""} for the site's root); any other page's path as it is.
   */
  public static String folderOfIndex(String pagePath) {
    int slash = pagePath.lastIndexOf('/');
    String name = pagePath.substring(slash + 1);
    if (name.equals("index.html") || name.equals("index.htm")) {
      return pagePath.substring(0, slash + 1);
    }
    return pagePath;
  }

  /**
   * Whether {@code href} names a path from a host's root: it is absolute or starts with {@code /}.
   */
  public static boolean isRooted(String href) {
    String ref = href.strip();
    return ref.startsWith("/") || SCHEME.matcher(ref).lookingAt();
  }

  /**
   * Resolves {@code href} found in the page at {@code pagePath}.
   *
   * @param hostAgnostic for a canonical URL when there is no base URL: an absolute http(s) URL is
   *     then resolved to its path from the host's root, whatever the host; otherwise an absolute
   *     URL without a base URL to compare with is {@link Where#EXTERNAL}
   */
  public Target resolve(String href, String pagePath, boolean hostAgnostic) {
    String ref = href.strip();
    String fragment = null;
    int hash = ref.indexOf('#');
    if (hash >= 0) {
      fragment = decode(ref.substring(hash + 1));
      ref = ref.substring(0, hash);
    }
    boolean query = false;
    int question = ref.indexOf('?');
    if (question >= 0) {
      query = question < ref.length() - 1;
      ref = ref.substring(0, question);
    }
    List<String> segments;
    if (SCHEME.matcher(ref).lookingAt() || ref.startsWith("//")) {
      URI uri;
      try {
        uri = new URI(lenient(ref.startsWith("//") ? "http:" + ref : ref));
      } catch (URISyntaxException e) {
        return new Target(Where.MALFORMED, null, fragment, query);
      }
      String scheme = uri.getScheme().toLowerCase(Locale.ROOT);
      if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null) {
        return new Target(Where.EXTERNAL, null, fragment, query);
      }
      if (base == null ? !hostAgnostic : !sameHost(uri)) {
        return new Target(Where.EXTERNAL, null, fragment, query);
      }
      String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
      segments = split(path.substring(1));
    } else if (ref.startsWith("/")) {
      segments = split(ref.substring(1));
    } else if (ref.isEmpty()) {
      return new Target(Where.SITE, pagePath, fragment, query);
    } else {
      segments = new ArrayList<>(prefix);
      List<String> page = split(pagePath);
      segments.addAll(page.subList(0, page.size() - 1));
      segments.addAll(split(ref));
    }
    List<String> resolved = removeDotSegments(segments);
    if (!startsWith(resolved, prefix)) {
      return new Target(Where.OUTSIDE, null, fragment, query);
    }
    List<String> inside = resolved.subList(prefix.size(), resolved.size());
    List<String> decoded = new ArrayList<>(inside.size());
    for (String segment : inside) {
      decoded.add(decode(segment));
    }
    return new Target(Where.SITE, String.join("/", decoded), fragment, query);
  }

  private boolean sameHost(URI uri) {
    if (!uri.getHost().equalsIgnoreCase(base.getHost())) {
      return false;
    }
    return uri.getPort() < 0 || base.getPort() < 0 || uri.getPort() == base.getPort();
  }

  /** The folders of a raw URL path that ends with {@code /}: {@code /a/b/} gives [a, b]. */
  private static List<String> folderSegments(String rawPath) {
    List<String> segments = split(rawPath.substring(1));
    // The trailing empty segment marks the folder; the prefix is the folders before it.
    return List.copyOf(segments.subList(0, segments.size() - 1));
  }

  private static List<String> split(String path) {
    List<String> out = new ArrayList<>();
    int start = 0;
    for (int i = 0; i <= path.length(); i++) {
      if (i == path.length() || path.charAt(i) == '/') {
        out.add(path.substring(start, i));
        start = i + 1;
      }
    }
    return out;
  }

  /**
   * RFC 3986 dot-segment removal on a path below the host root; {@code ..} at the root stays at the
   * root. A trailing {@code .} or {@code ..} leaves a folder (a trailing empty segment).
   */
  private static List<String> removeDotSegments(List<String> segments) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < segments.size(); i++) {
      String segment = segments.get(i);
      boolean last = i == segments.size() - 1;
      boolean dot = segment.equals(".") || segment.equalsIgnoreCase("%2e");
      boolean dotDot =
          segment.equals("..") || segment.equalsIgnoreCase("%2e%2e") || segment.equals(".%2e");
      if (dot || dotDot) {
        if (dotDot && !out.isEmpty()) {
          out.remove(out.size() - 1);
        }
        if (last) {
          out.add("");
        }
      } else {
        out.add(segment);
      }
    }
    return out;
  }

  private static boolean startsWith(List<String> path, List<String> folders) {
    if (path.size() <= folders.size()) {
      // The folder itself is reached only as "<folders>/", which has one more (empty) segment.
      return false;
    }
    for (int i = 0; i < folders.size(); i++) {
      if (!decode(path.get(i)).equals(decode(folders.get(i)))) {
        return false;
      }
    }
    return true;
  }

  /** Percent-decodes UTF-8; a malformed escape is kept as it is. */
  static String decode(String text) {
    if (text.indexOf('%') < 0) {
      return text;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(text.length());
    for (int i = 0; i < text.length(); ) {
      char c = text.charAt(i);
      if (c == '%'
          && i + 2 < text.length()
          && Character.digit(text.charAt(i + 1), 16) >= 0
          && Character.digit(text.charAt(i + 2), 16) >= 0) {
        bytes.write(Integer.parseInt(text.substring(i + 1, i + 3), 16));
        i += 3;
      } else {
        int cp = text.codePointAt(i);
        byte[] utf8 = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
        bytes.write(utf8, 0, utf8.length);
        i += Character.charCount(cp);
      }
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  /** Percent-encodes everything but RFC 3986's unreserved characters. */
  static String encodeSegment(String segment) {
    StringBuilder out = new StringBuilder(segment.length());
    for (byte b : segment.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if ((c >= 'a' && c <= 'z')
          || (c >= 'A' && c <= 'Z')
          || (c >= '0' && c <= '9')
          || c == '-'
          || c == '.'
          || c == '_'
          || c == '~') {
        out.append((char) c);
      } else {
        out.append('%').append(String.format("%02X", c));
      }
    }
    return out.toString();
  }

  /** Escapes what {@link URI} refuses (spaces, non-ASCII, stray {@code %}) so it can be parsed. */
  private static String lenient(String text) {
    StringBuilder out = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); ) {
      int cp = text.codePointAt(i);
      int width = Character.charCount(cp);
      boolean escape =
          cp == '%'
              && !(i + 2 < text.length()
                  && Character.digit(text.charAt(i + 1), 16) >= 0
                  && Character.digit(text.charAt(i + 2), 16) >= 0);
      if (escape || cp <= 0x20 || cp >= 0x7f || "\"<>\\^`{|}".indexOf(cp) >= 0) {
        for (byte b : new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8)) {
          out.append('%').append(String.format("%02X", b & 0xff));
        }
      } else {
        out.append((char) cp);
      }
      i += width;
    }
    return out.toString();
  }
}
