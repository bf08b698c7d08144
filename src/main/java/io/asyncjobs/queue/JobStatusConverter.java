package io.asyncjobs.queue;

import jakarta.persistence.AttributeConverter;
import jakarta.persistence.Converter;

/** Stores {@link JobStatus} as the lower-case words the table's CHECK constraint allows. */
@Converter
public class JobStatusConverter implements AttributeConverter<JobStatus, String> {

  @Override
  public String convertToDatabaseColumn(JobStatus status) {
    return status == null ? null : status.dbValue();
  }

  @Override
  public JobStatus convertToEntityAttribute(String value) {
    if (value == null) {
      return null;
    }
    return JobStatus.fromDbValue(value)
        .orElseThrow(() -> new IllegalStateException("unknown job status in database: " + value));
  }
}
