package io.asyncjobs.testing;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;

/**
 * Debian's headless Chromium driven through its chromedriver, with a throw-away profile under
 * {@code target/}: one per browser test class, started in {@code @BeforeAll} and closed in
 * {@code @AfterAll}.
 */
public final class Browser implements AutoCloseable {

  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

  /** The tallest screenshot taken, in pixels; a longer page is cut off at the bottom. */
  static final int MAX_SHOT_HEIGHT = 4000;

  /** Held so the level set on it stays (loggers are weakly referenced). */
  private static final Logger SELENIUM_DEVTOOLS_LOG =
      Logger.getLogger("org.openqa.selenium.devtools");

  private final ChromeDriver driver;
  private final Path profile;

  private Browser(ChromeDriver driver, Path profile) {
    this.driver = driver;
    this.profile = profile;
  }

  /**
   * Starts the browser, installing Debian's Chromium and its driver first when they are missing
   * (see {@link DebianPackages}).
   */
  public static Browser start() throws IOException {
    DebianPackages.require(
        "The browser tests", Map.of(CHROMIUM, "chromium", CHROMEDRIVER, "chromium-driver"));
    // Browser and driver are named below, so Selenium Manager is never asked for them; should
    // anything ask it anyway, it must not go to the network (SE_* properties reach it as env).
    System.setProperty("SE_OFFLINE", "true");
    // Selenium ships no DevTools bindings for every Chromium release; none are used here.
    SELENIUM_DEVTOOLS_LOG.setLevel(Level.SEVERE);
    Path target = Files.createDirectories(Path.of("target"));
    Path profile = Files.createTempDirectory(target.toAbsolutePath(), "chromium-profile-");
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--window-size=1280,1000",
        "--user-data-dir=" + profile);
    // The console, for messages such as Content-Security-Policy violations.
    options.setCapability("goog:loggingPrefs", Map.of(LogType.BROWSER, "ALL"));
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(new File(CHROMEDRIVER.toString()))
            .usingAnyFreePort()
            .build();
    ChromeDriver driver = new ChromeDriver(service, options);
    driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(10));
    return new Browser(driver, profile);
  }

  /** The driver, for navigating and finding elements. */
  public ChromeDriver driver() {
    return driver;
  }

  /** Runs a script in the page and returns its result. */
  public Object js(String script, Object... args) {
    return driver.executeScript(script, args);
  }

  /** The console messages logged since the previous call. */
  public List<String> console() {
    return driver.manage().logs().get(LogType.BROWSER).getAll().stream()
        .map(LogEntry::getMessage)
        .toList();
  }

  /** Saves the whole page, not just the window, to {@code file}, as far as the browser can. */
  public void screenshot(Path file) {
    Dimension window = driver.manage().window().getSize();
    try {
      long height = ((Number) js("return document.documentElement.scrollHeight")).longValue();
      driver
          .manage()
          .window()
          .setSize(new Dimension(window.width, (int) Math.min(height + 150, MAX_SHOT_HEIGHT)));
      Path shot = driver.getScreenshotAs(OutputType.FILE).toPath();
      Files.copy(shot, file, StandardCopyOption.REPLACE_EXISTING);
    } catch (RuntimeException | IOException e) {
      // The screenshot is a convenience; a failure to take it is no test failure.
    } finally {
      driver.manage().window().setSize(window);
    }
  }

  /** Quits the browser and deletes its profile. */
  @Override
  public void close() throws IOException {
    try {
      driver.quit();
    } finally {
      try (Stream<Path> tree = Files.walk(profile)) {
        tree.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
      }
    }
  }
}
