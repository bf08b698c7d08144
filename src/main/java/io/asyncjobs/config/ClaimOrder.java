package io.asyncjobs.config;

import java.util.Locale;

/** In which order a kind's due pending jobs are claimed, after their priority. */
public enum ClaimOrder {
  /** Enqueue order (uid order), as the spec says: the default. */
  FIFO,
  /** Turns between owners (round robin over the owners with due jobs), enqueue order within one. */
  FAIR;

  /** The name in configuration, settings and views: {@code fifo} or {@code fair}. */
  public String value() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The order named {@code value}.
   *
   * @throws IllegalArgumentException naming the values allowed
   */
  public static ClaimOrder of(String value) {
    for (ClaimOrder order : values()) {
      if (order.value().equals(value)) {
        return order;
      }
    }
    throw new IllegalArgumentException(
        "claim_order must be fifo or fair, was " + (value == null ? "nothing" : "'" + value + "'"));
  }
}
