package io.asyncjobs.files;

/**
 * The one rule for naming a caller's file inside a zip the service writes: a backslash, a legal
 * file name character here but a folder separator to Windows extractors, becomes {@code _}, so a
 * file named {@code ..\..\x} can never unpack outside the archive's folder.
 */
public final class ZipEntryNames {

  private ZipEntryNames() {}

  /** The entry name of a file named {@code relative} (folders separated by {@code /}). */
  public static String of(String relative) {
    return relative.replace('\\', '_');
  }
}
