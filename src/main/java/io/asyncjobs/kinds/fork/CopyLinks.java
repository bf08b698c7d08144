package io.asyncjobs.kinds.fork;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which links of a fork's source are copied as links: those that lead inside the caller's folder
 * from their place in the copy, once the copy is renamed to its target. Where a link leads is found
 * the way the kernel finds it, one name at a time, following every link on the way and taking each
 * {@code ..} from the real folder reached so far: a text such as {@code s/../s/../x} with {@code s
 * -> .} climbs two real levels although it normalizes to {@code x}. The copy does not exist yet, so
 * names inside it are looked up among the links that will be copied; names outside it on the
 * volume, reading a link's text but never going through it unchecked.
 */
final class CopyLinks {

  /** Most links followed for one link, as Linux allows in one lookup (ELOOP beyond). */
  static final int MAX_FOLLOWED = 40;

  private final Path realTarget;
  private final Path realBase;

  /**
   * @param realTarget where the copy will be: the target's real parent and its name
   * @param realBase the caller's folder, real
   */
  CopyLinks(Path realTarget, Path realBase) {
    this.realTarget = realTarget;
    this.realBase = realBase;
  }

  /**
   * The links that lead inside the caller's folder from the copy. Links that do not are left out,
   * and then the others are judged again without them (a link that led inside through a left-out
   * one may not any more), until none changes.
   */
  List<SourceListing.Link> keep(List<SourceListing.Link> links) {
    List<SourceListing.Link> kept = new ArrayList<>(links);
    boolean changed = true;
    while (changed && !kept.isEmpty()) {
      Map<Path, Path> texts = new HashMap<>();
      for (SourceListing.Link link : kept) {
        texts.put(link.relative(), link.text());
      }
      changed = kept.removeIf(link -> !leadsInside(link, texts));
    }
    return kept;
  }

  private boolean leadsInside(SourceListing.Link link, Map<Path, Path> texts) {
    Path place = realTarget.resolve(link.relative()).getParent();
    Path leadsTo = resolve(place, link.text(), texts);
    return leadsTo != null && leadsTo.startsWith(realBase);
  }

  /**
   * Where {@code text}, read in the real folder {@code start}, leads: a real path, every link on
   * the way followed. A name that does not exist is taken as a plain folder (it cannot lead
   * anywhere else until someone makes it). Null when more than {@link #MAX_FOLLOWED} links are on
   * the way.
   */
  private Path resolve(Path start, Path text, Map<Path, Path> texts) {
    Deque<String> names = new ArrayDeque<>();
    pushFront(names, text);
    Path current = text.isAbsolute() ? text.getRoot() : start;
    int followed = 0;
    while (!names.isEmpty()) {
      String name = names.pop();
      if (name.isEmpty() || name.equals(".")) {
        continue;
      }
      if (name.equals("..")) {
        // current is real (no link in it), so its parent is where ".." physically leads.
        current = current.getParent() == null ? current : current.getParent();
        continue;
      }
      Path next = current.resolve(name);
      Path linkText = linkAt(next, texts);
      if (linkText == null) {
        current = next;
        continue;
      }
      if (++followed > MAX_FOLLOWED) {
        return null;
      }
      pushFront(names, linkText);
      if (linkText.isAbsolute()) {
        current = linkText.getRoot();
      }
    }
    return current;
  }

  /** The text of the link at the real path {@code path}, or null when no link is there. */
  private Path linkAt(Path path, Map<Path, Path> texts) {
    if (path.startsWith(realTarget)) {
      return texts.get(realTarget.relativize(path));
    }
    try {
      BasicFileAttributes attributes =
          Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      return attributes.isSymbolicLink() ? Files.readSymbolicLink(path) : null;
    } catch (IOException e) {
      return null; // missing (or gone meanwhile): a plain name from here on
    }
  }

  private static void pushFront(Deque<String> names, Path text) {
    for (int i = text.getNameCount() - 1; i >= 0; i--) {
      names.push(text.getName(i).toString());
    }
  }
}
