package io.asyncjobs.files;

import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.Owner;
import io.asyncjobs.storage.DataDirectory;
import jakarta.enterprise.context.ApplicationScoped;

/** Makes {@link FileScope}s: a caller's at enqueue, the one a job recorded in {@code process}. */
@ApplicationScoped
public class FileScopes {

  private final DataDirectory data;

  FileScopes(DataDirectory data) {
    this.data = data;
  }

  /** What an admin may name: all of {@code files/}. */
  public FileScope forAdmin() {
    return FileScope.ofAdmin(data.root());
  }

  /** What an owner may name: its own folder. */
  public FileScope forOwner(Owner owner) {
    return FileScope.ofOwner(data.root(), owner);
  }

  /**
   * The scope the job's enqueue endpoint recorded in its payload. A job enqueued before folders
   * were keyed on the owner kind too recorded {@code files/<id>}; it gets its owner's folder as it
   * is now, so it neither fails after the move nor reaches a kind's folder of that name.
   */
  public FileScope forJob(Job job) {
    FileScope recorded = FileScope.fromPayload(data.root(), job.payload.get(FileScope.PAYLOAD_KEY));
    if (recorded.relative().split("/").length == 2) {
      return FileScope.ofOwner(data.root(), new Owner(job.ownerKind, job.ownerId));
    }
    return recorded;
  }
}
