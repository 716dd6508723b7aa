package io.warmmetal.api.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.warmmetal.api.testing.ApiFixture;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.logging.LogEntry;

/**
 * The fleet console in a real headless Chromium against the real API on PostgreSQL: logging in with a token, a pool
 * filling as its machines' prepares are reported, a launch showing up without a reload, 401s back to the login page,
 * and a project's token shown what it may see.
 */
class ConsoleBrowserTest {
  private static final String SHAPE = "x86-8c-32g";
  private static Vertx vertx;
  private static ApiFixture fx;
  private HeadlessChromium chromium;
  private ChromeDriver page;

  @BeforeAll
  static void startApi() throws Exception {
    HeadlessChromium.requireInstalled(); // before the API starts: the message, not a fixture failure, comes first
    vertx = Vertx.vertx();
    fx = ApiFixture.start(vertx);
  }

  @AfterAll
  static void stopApi() {
    if (fx != null) {
      fx.close();
    }
    vertx.close().await();
  }

  @BeforeEach
  void openBrowser() throws Exception {
    chromium = HeadlessChromium.open();
    page = chromium.driver();
  }

  @AfterEach
  void closeBrowser() {
    chromium.close();
  }

  private String consoleUrl() {
    return "http://127.0.0.1:" + fx.api.port() + "/console/";
  }

  private void logIn(String token) {
    page.get(consoleUrl());
    waitFor("the login page", () -> page.findElement(By.id("login")).isDisplayed());
    page.findElement(By.id("token")).sendKeys(token);
    page.findElement(By.id("login-button")).click();
  }

  private void waitFor(String what, Supplier<Boolean> condition) {
    long deadline = System.currentTimeMillis() + 20_000;
    while (true) {
      Boolean ok;
      try {
        ok = condition.get();
      } catch (org.openqa.selenium.NoSuchElementException | org.openqa.selenium.StaleElementReferenceException e) {
        ok = false; // not rendered yet, or re-rendered while read
      }
      if (Boolean.TRUE.equals(ok)) {
        return;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for " + what);
      }
    }
  }

  private String cell(String shape, String column) {
    return page.findElement(By.cssSelector("#pools tr[data-shape='" + shape + "'] td." + column)).getText();
  }

  private String notice(String panel) {
    return page.findElement(By.cssSelector("#" + panel + " .notice")).getText();
  }

  @Test
  void aPoolFillsAndALaunchAppearsLive() throws Exception {
    List<String> machines = fx.registerMachines(3, ApiFixture.facts(8, 32), false);
    assertThat(fx.client.put("/v1/pools/" + SHAPE, ApiFixture.ADMIN, new JsonObject().put("minWarm", 3)
        .put("maxWarm", 3)).status()).isEqualTo(200);
    logIn(ApiFixture.ADMIN);
    waitFor("the pool's row, nothing warm yet", () -> cell(SHAPE, "warm").equals("0"));
    assertThat(page.getCurrentUrl()).doesNotContain(ApiFixture.ADMIN);
    page.executeScript("window.notReloaded = true;");

    fx.reconcilePools();
    waitFor("three machines preparing", () -> cell(SHAPE, "preparing").equals("3"));
    chromium.screenshot("1-pool-preparing");
    for (int i = 0; i < machines.size(); i++) {
      fx.openCommands(machines.get(i), "prepare").forEach(c -> fx.report(c, true));
      String warm = Integer.toString(i + 1);
      waitFor(warm + " warm on the page", () -> cell(SHAPE, "warm").equals(warm));
    }
    assertThat(cell(SHAPE, "deficit")).isEqualTo("0");
    waitFor("the fill chart's line", () -> page.findElement(By.cssSelector("#fill-chart polyline[data-shape='"
        + SHAPE + "']")).getDomAttribute("points").split(" ").length >= 3);
    chromium.screenshot("2-pool-warm");

    String client = fx.token("client");
    var launch = fx.client.post("/v1/instances", client, new JsonObject().put("shape", SHAPE));
    assertThat(launch.status()).isEqualTo(201);
    String instance = launch.body().getJsonArray("instances").getJsonObject(0).getString("id");
    waitFor("the launched instance in the list", () -> page.findElement(By.cssSelector(
        "#instances tr[data-instance='" + instance + "'] td.state")).getText().equals("pending"));
    waitFor("the launch in the event stream", () -> page.findElements(By.cssSelector("#events li"))
        .stream().anyMatch(li -> li.getText().contains(instance)));
    waitFor("the pool's warm count down by one", () -> cell(SHAPE, "warm").equals("2"));
    waitFor("the launch latency histogram", () -> page.findElements(By.cssSelector("#latency-chart rect.bar"))
        .stream().mapToInt(r -> Integer.parseInt(r.getDomAttribute("data-count"))).sum() == 1);
    assertThat(page.findElement(By.id("latency-caption")).getText()).contains("1 launches", "p50");
    assertThat(page.executeScript("return window.notReloaded === true;")).isEqualTo(true);
    chromium.screenshot("3-launched");

    page.findElement(By.cssSelector("#machines tr[data-machine='" + machines.get(0) + "']")).click();
    waitFor("the machine's timeline", () -> page.findElements(By.cssSelector(
        "#timeline li[data-type='MachineState']")).size() >= 2);
    assertThat(page.findElement(By.id("timeline-title")).getText()).contains(machines.get(0));
    assertThat(page.findElements(By.cssSelector("#timeline-strip rect.seg"))).isNotEmpty();
    chromium.screenshot("4-machine-timeline");
    assertNoPageErrors(chromium.consoleLog());
  }

  @Test
  void aTokenTheApiRefusesLandsBackOnTheLoginPage() {
    logIn("not-a-token-0123456789abcdef");
    waitFor("the login page with the 401", () -> page.findElement(By.id("login")).isDisplayed()
        && page.findElement(By.id("login-error")).getText().contains("401"));

    var minted = fx.client.post("/v1/tokens", ApiFixture.ADMIN, new JsonObject().put("name", "console")
        .put("role", "fleet-reader"));
    logIn(minted.body().getString("token"));
    waitFor("the console", () -> page.findElement(By.id("app")).isDisplayed()
        && page.findElement(By.id("status")).getText().startsWith("updated"));
    assertThat(fx.client.delete("/v1/tokens/" + minted.body().getString("id"), ApiFixture.ADMIN).status())
        .isEqualTo(204);
    waitFor("the login page after the revocation", () -> page.findElement(By.id("login")).isDisplayed()
        && page.findElement(By.id("login-error")).getText().contains("401"));
    assertThat(page.findElement(By.id("app")).isDisplayed()).isFalse();
    assertThat(page.executeScript("return sessionStorage.getItem('warmmetal.token');")).isNull();
  }

  @Test
  void aProjectTokenIsToldWhatItsRoleCannotSee() throws Exception {
    fx.registerMachines(1, ApiFixture.facts(4, 16), true);
    logIn(fx.token("read-only"));
    waitFor("the machines panel's refusal", () -> notice("machines").contains("cannot see the machines"));
    assertThat(notice("machines")).contains("fleet-read");
    waitFor("the pools panel's refusal", () -> notice("pools").contains("cannot see the pools"));
    // The launch-latency histogram counts every project's launches: fleet-read, as the machines.
    waitFor("the latency chart's refusal", () -> page.findElement(By.id("latency-caption")).getText()
        .contains("cannot see it"));
    assertThat(page.findElement(By.id("latency-caption")).getText()).contains("fleet-read");
    // What it may read still shows: the shapes' counts, and no refusal for instances or events.
    waitFor("the shapes' counts", () -> cell("x86-4c-16g", "warm").equals("1"));
    assertThat(notice("instances")).isEmpty();
    assertThat(notice("events")).isEmpty();
    chromium.screenshot("5-project-token");
    // A refusal is final for the role: asked once, not every tick (the browser logs each 403 it gets).
    Thread.sleep(3000);
    List<LogEntry> logged = chromium.consoleLog();
    assertThat(logged).filteredOn(e -> e.getMessage().contains("/v1/pools ")).hasSize(1);
    assertThat(logged).filteredOn(e -> e.getMessage().contains("/v1/launch-latency ")).hasSize(1);
    assertNoPageErrors(logged);
  }

  /** No script errors and no Content-Security-Policy violations (a violation is how an inline script would show). */
  private static void assertNoPageErrors(List<LogEntry> logged) {
    assertThat(logged).filteredOn(e -> e.getLevel().intValue() >= java.util.logging.Level.SEVERE.intValue())
        .extracting(LogEntry::getMessage)
        .filteredOn(m -> !m.contains("/v1/")) // the 403s the page was meant to get, logged by the browser
        .isEmpty();
  }
}
