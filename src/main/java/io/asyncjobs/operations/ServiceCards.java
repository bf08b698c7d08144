package io.asyncjobs.operations;

import io.asyncjobs.engine.BaseService;
import io.asyncjobs.engine.JobService;
import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.queue.CardQueries;
import io.asyncjobs.settings.PauseStore;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.SQLException;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/** The admin page's service cards: each registered service's figures with its settings. */
@ApplicationScoped
public class ServiceCards {

  private final ServiceManager services;
  private final CardQueries queries;
  private final SettingsViews settings;
  private final ShardOwners owners;
  private final PauseStore pauses;

  ServiceCards(
      ServiceManager services,
      CardQueries queries,
      SettingsViews settings,
      ShardOwners owners,
      PauseStore pauses) {
    this.services = services;
    this.queries = queries;
    this.settings = settings;
    this.owners = owners;
    this.pauses = pauses;
  }

  /** One card per registered service, by name; a service without jobs shows zeros. */
  public List<ServiceCard> all() {
    Map<String, CardQueries.Figures> figures = queries.figures();
    Map<String, List<ShardOwners.ShardOwner>> shardOwners = owners.byKind();
    Map<String, PauseStore.Pause> paused;
    try {
      paused = pauses.all();
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the paused services", e);
    }
    return services.all().stream()
        .sorted(Comparator.comparing(BaseService::name))
        .map(
            service -> {
              CardQueries.Figures f =
                  figures.getOrDefault(service.name(), CardQueries.Figures.none());
              String title = service instanceof JobService job ? job.title() : service.name();
              return new ServiceCard(
                  service.name(),
                  title,
                  f.counts(),
                  f.completedLastHour(),
                  f.perMinuteList(),
                  f.durationMs(),
                  f.bytesIn(),
                  f.bytesOut(),
                  f.items(),
                  f.oldestPendingAgeSeconds(),
                  settings.of(service.name()),
                  shardOwners.getOrDefault(service.name(), List.of()),
                  PauseView.of(service.name(), paused.get(service.name())));
            })
        .toList();
  }
}
