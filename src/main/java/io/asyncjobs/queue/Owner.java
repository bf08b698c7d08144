package io.asyncjobs.queue;

import java.util.Objects;

/**
 * Who a job belongs to, for attribution and visibility: a principal kind ({@code user}, {@code
 * service}, ...) and its id.
 */
public record Owner(String kind, String id) {

  /** Both parts are required. */
  public Owner {
    Objects.requireNonNull(kind, "owner kind");
    Objects.requireNonNull(id, "owner id");
  }
}
