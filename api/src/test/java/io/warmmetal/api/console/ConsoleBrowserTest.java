package io.warmmetal.api.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.protocol.testing.Await;
import java.util.List;
import java.util.function.Supplier;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.NoSuchElementException;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.logging.LogEntry;

/**
 * The fleet console in a real headless Chromium against the real API on PostgreSQL: logging in with
 * a token, a pool filling as its machines' prepares are reported, a launch showing up without a
 * reload, 401s back to the login page, a project's token shown what it may see, and a fleet of 503
 * machines paged, filtered and read (screenshots in {@code target/console-screenshots/}).
 */
@Tag("processes")
class ConsoleBrowserTest {
  private static final String SHAPE = "x86-8c-32g";
  private static Vertx vertx;
  private static ApiFixture fx;
  private HeadlessChromium chromium;
  private ChromeDriver page;

  @BeforeAll
  static void startApi() throws Exception {
    HeadlessChromium
        .requireInstalled(); // before the API starts: the message, not a fixture failure, comes
    // first
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

  private void logIn(String token) throws InterruptedException {
    logIn(fx, token);
  }

  private void logIn(ApiFixture at, String token) throws InterruptedException {
    page.get("http://127.0.0.1:" + at.api.port() + "/console/");
    waitFor("the login page", () -> page.findElement(By.id("login")).isDisplayed());
    page.findElement(By.id("token")).sendKeys(token);
    page.findElement(By.id("login-button")).click();
  }

  private void waitFor(String what, Supplier<Boolean> condition) throws InterruptedException {
    Await.until(
        what,
        () -> {
          try {
            return Boolean.TRUE.equals(condition.get());
          } catch (NoSuchElementException | StaleElementReferenceException e) {
            return false; // not rendered yet, or re-rendered while read
          }
        },
        20_000);
  }

  /** The requests the page has made to {@code path} so far (its resource timings). */
  private long requestsTo(String path) {
    return (Long)
        page.executeScript(
            "return performance.getEntriesByType('resource')"
                + ".filter(e => new URL(e.name).pathname === arguments[0]).length;",
            path);
  }

  private String cell(String shape, String column) {
    return page.findElement(By.cssSelector("#pools tr[data-shape='" + shape + "'] td." + column))
        .getText();
  }

  private String notice(String panel) {
    return page.findElement(By.cssSelector("#" + panel + " .notice")).getText();
  }

  @Test
  void aPoolFillsAndALaunchAppearsLive() throws Exception {
    List<String> machines = fx.registerMachines(3, ApiFixture.facts(8, 32), false);
    assertThat(
            fx.client
                .put(
                    "/v1/pools/" + SHAPE,
                    ApiFixture.ADMIN,
                    new JsonObject().put("minWarm", 3).put("maxWarm", 3))
                .status())
        .isEqualTo(200);
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
    waitFor(
        "the fill chart's line",
        () ->
            page.findElement(By.cssSelector("#fill-chart polyline[data-shape='" + SHAPE + "']"))
                    .getDomAttribute("points")
                    .split(" ")
                    .length
                >= 3);
    chromium.screenshot("2-pool-warm");

    String client = fx.token("client");
    var launch = fx.client.post("/v1/instances", client, new JsonObject().put("shape", SHAPE));
    assertThat(launch.status()).isEqualTo(201);
    String instance = launch.body().getJsonArray("instances").getJsonObject(0).getString("id");
    waitFor(
        "the launched instance in the list",
        () ->
            page.findElement(
                    By.cssSelector("#instances tr[data-instance='" + instance + "'] td.state"))
                .getText()
                .equals("pending"));
    waitFor(
        "the launch in the event stream",
        () ->
            page.findElements(By.cssSelector("#events li")).stream()
                .anyMatch(li -> li.getText().contains(instance)));
    waitFor("the pool's warm count down by one", () -> cell(SHAPE, "warm").equals("2"));
    waitFor(
        "the launch latency histogram",
        () ->
            page.findElements(By.cssSelector("#latency-chart rect.bar")).stream()
                    .mapToInt(r -> Integer.parseInt(r.getDomAttribute("data-count")))
                    .sum()
                == 1);
    assertThat(page.findElement(By.id("latency-caption")).getText()).contains("1 launches", "p50");
    assertThat(page.executeScript("return window.notReloaded === true;")).isEqualTo(true);
    chromium.screenshot("3-launched");

    page.findElement(By.cssSelector("#machines tr[data-machine='" + machines.get(0) + "']"))
        .click();
    waitFor(
        "the machine's timeline",
        () ->
            page.findElements(By.cssSelector("#timeline li[data-type='MachineState']")).size()
                >= 2);
    assertThat(page.findElement(By.id("timeline-title")).getText()).contains(machines.get(0));
    assertThat(page.findElements(By.cssSelector("#timeline-strip rect.seg"))).isNotEmpty();
    chromium.screenshot("4-machine-timeline");
    assertNoPageErrors(chromium.consoleLog());
  }

  @Test
  void aTokenTheApiRefusesLandsBackOnTheLoginPage() throws Exception {
    logIn("not-a-token-0123456789abcdef");
    waitFor(
        "the login page with the 401",
        () ->
            page.findElement(By.id("login")).isDisplayed()
                && page.findElement(By.id("login-error")).getText().contains("401"));

    var minted =
        fx.client.post(
            "/v1/tokens",
            ApiFixture.ADMIN,
            new JsonObject().put("name", "console").put("role", "fleet-reader"));
    logIn(minted.body().getString("token"));
    waitFor(
        "the console",
        () ->
            page.findElement(By.id("app")).isDisplayed()
                && page.findElement(By.id("status")).getText().startsWith("updated"));
    assertThat(
            fx.client
                .delete("/v1/tokens/" + minted.body().getString("id"), ApiFixture.ADMIN)
                .status())
        .isEqualTo(204);
    waitFor(
        "the login page after the revocation",
        () ->
            page.findElement(By.id("login")).isDisplayed()
                && page.findElement(By.id("login-error")).getText().contains("401"));
    assertThat(page.findElement(By.id("app")).isDisplayed()).isFalse();
    assertThat(page.executeScript("return sessionStorage.getItem('warmmetal.token');")).isNull();
  }

  @Test
  void aProjectTokenIsToldWhatItsRoleCannotSee() throws Exception {
    fx.registerMachines(1, ApiFixture.facts(4, 16), true);
    logIn(fx.token("read-only"));
    waitFor(
        "the machines panel's refusal",
        () -> notice("machines").contains("cannot see the machines"));
    assertThat(notice("machines")).contains("fleet-read");
    waitFor("the pools panel's refusal", () -> notice("pools").contains("cannot see the pools"));
    // The launch-latency histogram counts every project's launches: fleet-read, as the machines.
    waitFor(
        "the latency chart's refusal",
        () -> page.findElement(By.id("latency-caption")).getText().contains("cannot see it"));
    assertThat(page.findElement(By.id("latency-caption")).getText()).contains("fleet-read");
    // What it may read still shows: the shapes' counts, and no refusal for instances or events.
    waitFor("the shapes' counts", () -> cell("x86-4c-16g", "warm").equals("1"));
    assertThat(notice("instances")).isEmpty();
    assertThat(notice("events")).isEmpty();
    chromium.screenshot("5-project-token");
    // A refusal is final for the role: asked once, not every tick (the browser logs each 403 it
    // gets). Every tick polls the events; the pools have their turn every other tick, the latency
    // chart every tenth: twelve more ticks (the tenth done and its request answered) have given
    // both their turns again.
    long ticks = requestsTo("/v1/events");
    waitFor("twelve more ticks", () -> requestsTo("/v1/events") >= ticks + 12);
    List<LogEntry> logged = chromium.consoleLog();
    assertThat(logged).filteredOn(e -> e.getMessage().contains("/v1/pools ")).hasSize(1);
    assertThat(logged).filteredOn(e -> e.getMessage().contains("/v1/launch-latency ")).hasSize(1);
    assertNoPageErrors(logged);
  }

  @Test
  void newHardwareIsAcceptedOrRejectedFromTheMachinesList() throws Exception {
    // Two machines waiting as new hardware (set up in the database: how one gets there is
    // BootAdmissionTest's).
    List<String> waiting = fx.registerMachines(2, ApiFixture.facts(2, 4), false);
    waiting.forEach(id -> waitForAcceptance(fx, id));
    logIn(ApiFixture.ADMIN);
    String first = "#machines tr[data-machine='" + waiting.get(0) + "']";
    String second = "#machines tr[data-machine='" + waiting.get(1) + "']";
    waitFor(
        "the new machines with their actions",
        () ->
            page.findElement(By.cssSelector(first + " td.state")).getText().equals("new")
                && page.findElements(By.cssSelector(second + " button.reject")).size() == 1);
    chromium.screenshot("6-new-hardware");

    page.findElement(By.cssSelector(first + " button.accept")).click();
    waitFor(
        "the accepted machine in standby",
        () ->
            page.findElement(By.cssSelector(first + " td.state")).getText().equals("standby")
                && page.findElements(By.cssSelector(first + " button")).isEmpty());
    assertThat(notice("machines")).contains("accepted");
    assertThat(page.findElement(By.id("timeline")).isDisplayed())
        .as("the button is not the row's click")
        .isFalse();

    page.findElement(By.cssSelector(second + " button.reject")).click();
    waitFor(
        "the rejection asked to be confirmed",
        () ->
            page.findElement(By.cssSelector(second + " button.reject")).getText().contains("sure"));
    assertThat(
            fx.client
                .get("/v1/machines/" + waiting.get(1), ApiFixture.ADMIN)
                .body()
                .getString("state"))
        .isEqualTo("new");
    page.findElement(By.cssSelector(second + " button.reject")).click();
    waitFor(
        "the rejected machine retired",
        () -> page.findElement(By.cssSelector(second + " td.state")).getText().equals("retired"));
    assertThat(
            fx.client
                .get("/v1/machines/" + waiting.get(0), ApiFixture.ADMIN)
                .body()
                .getBoolean("admitted"))
        .isTrue();
    assertNoPageErrors(chromium.consoleLog());
  }

  /**
   * A fleet of 503 machines, in a database of its own (the other tests' machines stay few): the
   * first page's count stays through later renders, "Load more" reaches the last machine, a
   * server-side filter finds the failed one, and its failure's reason shows whole in its timeline,
   * beside the live events.
   */
  @Test
  void aFleetOf500IsNavigableAndItsReasonsReadable() throws Exception {
    try (ApiFixture fleet = ApiFixture.start(vertx)) {
      // The first machine fails its prepare with a long message; 502 more are warm; 250 of them are
      // launched.
      String failing = fleet.registerMachines(1, ApiFixture.facts(8, 32), false).get(0);
      assertThat(
              fleet
                  .client
                  .put(
                      "/v1/pools/" + SHAPE,
                      ApiFixture.ADMIN,
                      new JsonObject().put("minWarm", 1).put("maxWarm", 1))
                  .status())
          .isEqualTo(200);
      fleet.reconcilePools();
      String why =
          "kubelet 1.31.2 is not in the image cache at /var/lib/warmmetal/images and the mirror "
              + "refused the download (HTTP 403); see the agent's journal on the host";
      var failed =
          fleet.client.post(
              "/v1/commands/" + fleet.openCommands(failing, "prepare").get(0) + "/result",
              ApiFixture.ADMIN,
              new JsonObject().put("status", "failed").put("message", why));
      assertThat(failed.status()).as(failed.raw()).isEqualTo(200);
      List<String> warm = fleet.registerMachines(502, ApiFixture.facts(4, 16), true);
      String last = warm.get(warm.size() - 1);
      String waiting = warm.get(1); // new hardware waiting for acceptance, sorted among the first
      waitForAcceptance(fleet, waiting);
      assertThat(
              fleet
                  .client
                  .post(
                      "/v1/instances",
                      fleet.token("client"),
                      new JsonObject().put("shape", "x86-4c-16g").put("minCount", 250))
                  .status())
          .isEqualTo(201);

      logIn(fleet, ApiFixture.ADMIN);
      waitFor(
          "the first page of machines and its count",
          () ->
              page.findElements(By.cssSelector("#machines tbody tr")).size() == 200
                  && pager("machines").contains("Showing 200 of 503 machines"));
      assertThat(pager("machines")).contains("1 new machine waits for acceptance");
      waitFor(
          "the launch's joins in the live events",
          () ->
              !page.findElements(By.cssSelector("#events li[data-type='CommandQueued']"))
                  .isEmpty());
      chromium.screenshot("7-fleet-500");
      // The instances show the newest 200, and the rest a click away.
      assertThat(pager("instances")).contains("Showing the newest 200 of 250 instances");
      assertThat(page.findElements(By.cssSelector("#instances tbody tr"))).hasSize(200);
      page.findElement(By.cssSelector("#instances .pager button.more")).click();
      waitFor(
          "all 250 instances",
          () ->
              page.findElements(By.cssSelector("#instances tbody tr")).size() == 250
                  && pager("instances").contains("250 instances, newest first"));
      // A later render of the list (a machine changed, so it is read again) keeps the count and the
      // way on.
      assertThat(
              fleet
                  .client
                  .post("/v1/machines/" + warm.get(0) + "/cordon", ApiFixture.ADMIN, null)
                  .status())
          .isEqualTo(200);
      waitFor(
          "the cordon on the page",
          () ->
              page.findElement(
                      By.cssSelector("#machines tr[data-machine='" + warm.get(0) + "'] td.state"))
                  .getText()
                  .contains("cordoned"));
      assertThat(pager("machines")).contains("Showing 200 of 503 machines");
      assertThat(page.findElement(By.cssSelector("#machines .pager button.more")).isDisplayed())
          .isTrue();

      // Load more, twice: the last machine registered (#503) is reached, and the pager says all are
      // shown.
      page.findElement(By.cssSelector("#machines .pager button.more")).click();
      waitFor(
          "400 machines",
          () -> page.findElements(By.cssSelector("#machines tbody tr")).size() == 400);
      page.findElement(By.cssSelector("#machines .pager button.more")).click();
      String lastRow = "#machines tr[data-machine='" + last + "']";
      waitFor("machine #503", () -> page.findElements(By.cssSelector(lastRow)).size() == 1);
      assertThat(page.findElements(By.cssSelector("#machines tbody tr"))).hasSize(503);
      assertThat(pager("machines")).contains("503 machines, all shown");
      assertThat(page.findElement(By.cssSelector("#machines .pager button.more")).isDisplayed())
          .isFalse();
      page.executeScript(
          "arguments[0].scrollIntoView({block: 'center'});",
          page.findElement(By.cssSelector(lastRow)));
      chromium.screenshot("8-machine-503");

      // Filtered on the server: the failed machine alone; its timeline shows the failure's reason
      // whole.
      page.executeScript(
          "document.querySelector('#machine-filters [name=state]').value = 'failed';");
      page.findElement(By.cssSelector("#machine-filters button[type=submit]")).click();
      waitFor(
          "the failed machine alone",
          () ->
              page.findElements(By.cssSelector("#machines tbody tr")).size() == 1
                  && pager("machines").contains("1 machine, all shown"));
      page.findElement(By.cssSelector("#machines tr[data-machine='" + failing + "']")).click();
      String reasonCss = "#timeline li[data-type='MachineState'] .reason";
      waitFor(
          "the failure in the timeline",
          () ->
              page.findElements(By.cssSelector(reasonCss)).stream()
                  .anyMatch(r -> r.getText().contains("refused")));
      WebElement reason =
          page.findElements(By.cssSelector(reasonCss)).stream()
              .filter(r -> r.getText().contains("refused"))
              .findFirst()
              .orElseThrow();
      assertThat(reason.getText()).isEqualTo("prepare failed: " + why);
      assertThat(
              page.executeScript(
                  "const r = arguments[0]; return r.scrollWidth <= r.clientWidth "
                      + "&& r.scrollHeight <= r.clientHeight + 1 && r.getBoundingClientRect().width > 200;",
                  reason))
          .as("the reason is not clipped")
          .isEqualTo(true);
      page.executeScript("arguments[0].scrollIntoView({block: 'center'});", reason);
      chromium.screenshot("9-whole-reason");
      // New hardware is one click away whatever the filter.
      page.findElement(By.cssSelector("#machines .pager button.waiting")).click();
      String waitingRow = "#machines tr[data-machine='" + waiting + "']";
      waitFor(
          "the new machine alone",
          () ->
              page.findElements(By.cssSelector("#machines tbody tr")).size() == 1
                  && page.findElements(By.cssSelector(waitingRow + " button.accept")).size() == 1);
      assertThat(page.findElement(By.cssSelector("#machines .pager button.waiting")).isDisplayed())
          .isFalse();
      // The chart's legend is text without an outline (a stroke blurs it).
      assertThat(
              page.executeScript(
                  "return getComputedStyle(document.querySelector('#fill-chart text.legend'))"
                      + ".stroke;"))
          .isEqualTo("none");
      assertNoPageErrors(chromium.consoleLog());
    }
  }

  /**
   * Puts a machine back to new hardware waiting for acceptance (how one gets there is
   * BootAdmissionTest's).
   */
  private static void waitForAcceptance(ApiFixture at, String machineId) {
    at.db()
        .preparedQuery("UPDATE machines SET state = 'new', admitted = false WHERE id = $1")
        .execute(Tuple.of(machineId))
        .await();
  }

  private String pager(String panel) {
    return page.findElement(By.cssSelector("#" + panel + " .pager")).getText();
  }

  /**
   * No script errors and no Content-Security-Policy violations (a violation is how an inline script
   * would show).
   */
  private static void assertNoPageErrors(List<LogEntry> logged) {
    assertThat(logged)
        .filteredOn(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
        .extracting(LogEntry::getMessage)
        .filteredOn(
            m -> !m.contains("/v1/")) // the 403s the page was meant to get, logged by the browser
        .isEmpty();
  }
}
