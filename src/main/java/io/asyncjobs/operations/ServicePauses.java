package io.asyncjobs.operations;

import io.asyncjobs.channels.Notifier;
import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.JobQueue;
import io.asyncjobs.settings.PauseStore;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.SQLException;
import org.jboss.logging.Logger;

/**
 * Pausing and resuming a service, with the refusals a caller sees: the admin routes and the admin
 * CLI both go through here. Both are idempotent, and both wake the kind's owner wherever it runs,
 * so that it stops claiming, or claims again, at once rather than at its next tick.
 */
@ApplicationScoped
public class ServicePauses {

  private static final Logger LOG = Logger.getLogger(ServicePauses.class);

  private final ServiceManager services;
  private final PauseStore pauses;
  private final Notifier notifier;

  ServicePauses(ServiceManager services, PauseStore pauses, Notifier notifier) {
    this.services = services;
    this.pauses = pauses;
    this.notifier = notifier;
  }

  /**
   * Pauses a service: its owner claims nothing until it is resumed; running jobs finish and
   * enqueues are accepted. Pausing a paused service keeps the first pause.
   *
   * @param pausedBy who asks, or null
   * @param reason why, up to {@value PauseStore#MAX_REASON} characters, or null
   * @return the pause in force
   * @throws ProblemException 404 when no service has this name, 400 for a reason too long or blank
   */
  public PauseView pause(String name, String pausedBy, String reason) {
    String service = known(name);
    if (reason != null && (reason.isBlank() || reason.length() > PauseStore.MAX_REASON)) {
      throw ProblemException.badRequest(
          "reason must be 1 to " + PauseStore.MAX_REASON + " characters, or left out");
    }
    PauseView view = PauseView.of(service, pauses.pause(service, pausedBy, reason));
    wakeOwner(service);
    LOG.infof("%s paused by %s%s", service, pausedBy, reason == null ? "" : ": " + reason);
    return view;
  }

  /**
   * Resumes a service: its owner claims again at once. Resuming a running service changes nothing.
   *
   * @return the service, running
   * @throws ProblemException 404 when no service has this name
   */
  public PauseView resume(String name) {
    String service = known(name);
    if (pauses.resume(service)) {
      LOG.infof("%s resumed", service);
    }
    wakeOwner(service);
    return PauseView.of(service, null);
  }

  /**
   * Whether a service is paused.
   *
   * @throws ProblemException 404 when no service has this name
   */
  public PauseView of(String name) {
    String service = known(name);
    return PauseView.of(service, pauses.of(service).orElse(null));
  }

  /**
   * Tells the owner, wherever it runs, to read the kind's settings again. Should the notification
   * get lost, the owner's next tick reads them anyway.
   */
  private void wakeOwner(String service) {
    try {
      notifier.send(JobQueue.ENQUEUED_CHANNEL, service + JobQueue.SETTINGS_CHANGED);
    } catch (SQLException e) {
      LOG.warnf("could not wake the owner of %s; its next tick applies the change: %s", service, e);
    }
  }

  private String known(String name) {
    if (services.jobService(name).isEmpty()) {
      throw ProblemException.notFound("no service " + Requests.quote(name));
    }
    return name;
  }
}
