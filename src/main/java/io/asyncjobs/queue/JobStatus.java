package io.asyncjobs.queue;

import java.util.Arrays;
import java.util.Optional;

/** Where a job is in its life: {@code pending -> running -> done | failed}. */
public enum JobStatus {
  PENDING("pending"),
  RUNNING("running"),
  DONE("done"),
  FAILED("failed");

  private final String dbValue;

  JobStatus(String dbValue) {
    this.dbValue = dbValue;
  }

  /** The value stored in {@code jobs.status} and shown to callers. */
  public String dbValue() {
    return dbValue;
  }

  /** Whether the job will not change any more. */
  public boolean isFinal() {
    return this == DONE || this == FAILED;
  }

  /** The status stored as {@code value}, if there is one. */
  public static Optional<JobStatus> fromDbValue(String value) {
    return Arrays.stream(values()).filter(s -> s.dbValue.equals(value)).findFirst();
  }
}
