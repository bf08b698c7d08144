package io.asyncjobs.operations;

import io.asyncjobs.config.ServiceSettings;
import io.asyncjobs.engine.BaseService;
import io.asyncjobs.engine.ServiceManager;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.settings.SettingsOverride;
import io.asyncjobs.settings.SettingsStore;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Comparator;
import java.util.List;

/**
 * The registered services' settings as an admin sees and changes them; the admin routes and the
 * admin CLI both go through here, so an unknown service is refused the same way.
 */
@ApplicationScoped
public class SettingsViews {

  private final ServiceManager services;
  private final SettingsStore settings;

  SettingsViews(ServiceManager services, SettingsStore settings) {
    this.services = services;
    this.settings = settings;
  }

  /** Every registered service's settings, by name. */
  public List<SettingsView> all() {
    return services.all().stream()
        .map(BaseService::name)
        .sorted(Comparator.naturalOrder())
        .map(this::view)
        .toList();
  }

  /**
   * One service's settings.
   *
   * @throws ProblemException 404 when no service has this name
   */
  public SettingsView of(String name) {
    return view(known(name));
  }

  /**
   * Replaces a service's overrides; each null field goes back to the configured value. Every
   * replica sees the change and the owner applies it on its next tick.
   *
   * @return the settings now
   * @throws ProblemException 404 when no service has this name
   */
  public SettingsView replace(String name, SettingsOverride override) {
    String service = known(name);
    settings.update(service, override == null ? SettingsOverride.NONE : override);
    return view(service);
  }

  private String known(String name) {
    if (services.service(name).isEmpty()) {
      throw ProblemException.notFound("no service " + Requests.quote(name));
    }
    return name;
  }

  private SettingsView view(String service) {
    ServiceSettings configured = settings.configured(service);
    SettingsOverride overrides = settings.overrides(service);
    return new SettingsView(
        service,
        SettingsView.Values.of(configured),
        overrides,
        SettingsView.Values.of(overrides.applyTo(configured)));
  }
}
