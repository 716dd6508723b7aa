package io.warmmetal.api.console;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.logging.Level;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

/**
 * Debian's Chromium, headless, through its chromedriver: a fresh profile per browser, and the flags
 * that keep it off the network (this machine refuses outside connections; without them Chromium
 * waits on its background services).
 */
record HeadlessChromium(ChromeDriver driver, ChromeDriverService service, Path profile)
    implements AutoCloseable {
  static final Path BROWSER = Path.of("/usr/bin/chromium");
  static final Path DRIVER = Path.of("/usr/bin/chromedriver");
  static final Path SCREENSHOTS = Path.of("target", "console-screenshots");

  /**
   * Fails (never skips) when Chromium is missing: a console nobody tested in a browser is not
   * tested.
   */
  static void requireInstalled() {
    if (!Files.isExecutable(BROWSER) || !Files.isExecutable(DRIVER)) {
      throw new AssertionError(
          "The console's browser test needs Debian's Chromium and chromedriver at "
              + BROWSER
              + " and "
              + DRIVER
              + ": run .ci/install-chromium.sh as root (apt-get install chromium chromium-driver)");
    }
  }

  static HeadlessChromium open() throws Exception {
    requireInstalled();
    Path profile = Files.createTempDirectory("warmmetal-chromium");
    ChromeOptions options = new ChromeOptions().setBinary(BROWSER.toFile());
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1400,1800",
        "--user-data-dir=" + profile);
    LoggingPreferences logs = new LoggingPreferences();
    logs.enable(LogType.BROWSER, Level.ALL);
    options.setCapability("goog:loggingPrefs", logs);
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(DRIVER.toFile())
            .usingAnyFreePort()
            .build();
    ChromeDriver driver = new ChromeDriver(service, options);
    driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
    return new HeadlessChromium(driver, service, profile);
  }

  /** What the page logged (errors, CSP violations) since the last call. */
  List<LogEntry> consoleLog() {
    return driver.manage().logs().get(LogType.BROWSER).getAll();
  }

  void screenshot(String name) throws Exception {
    Files.createDirectories(SCREENSHOTS);
    Files.write(SCREENSHOTS.resolve(name + ".png"), driver.getScreenshotAs(OutputType.BYTES));
  }

  @Override
  public void close() {
    try {
      driver.quit();
    } finally {
      service.stop();
      deleteTree(profile);
    }
  }

  private static void deleteTree(Path dir) {
    try (var walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (Exception ignored) {
      // best effort: a temporary profile
    }
  }
}
