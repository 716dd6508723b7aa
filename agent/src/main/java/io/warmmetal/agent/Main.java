package io.warmmetal.agent;

import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonObject;
import io.warmmetal.agent.channel.ChannelClient;
import io.warmmetal.agent.commands.CommandLog;
import io.warmmetal.agent.enrollment.AgentIdentity;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.agent.host.HostFacts;
import io.warmmetal.agent.logging.AgentLogging;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code java -jar warmmetal-agent.jar}: enrolls this host with the API (once; the identity is kept
 * in the state directory), then holds the command channel and runs what comes, until stopped. Flags
 * fall back to {@code WARMMETAL_AGENT_*} environment variables. (Many simulated agents in one JVM:
 * the {@code fleet} module.)
 */
@Command(
    name = "warmmetal-agent",
    mixinStandardHelpOptions = true,
    version = "WarmMetal agent 0.1.0",
    description = "The WarmMetal host agent: enrolls this server and runs the API's commands.")
public final class Main implements Callable<Integer> {
  @Option(
      names = "--api",
      defaultValue = "${env:WARMMETAL_AGENT_API}",
      description = "the API's agent port, e.g. https://api.example:8443 (WARMMETAL_AGENT_API)")
  String api;

  @Mixin ApiTrust trust = new ApiTrust();

  @Option(
      names = "--token-file",
      defaultValue = "${env:WARMMETAL_AGENT_TOKEN_FILE}",
      description =
          "file holding the enrollment token (WARMMETAL_AGENT_TOKEN_FILE); or WARMMETAL_AGENT_TOKEN")
  Path tokenFile;

  @Option(
      names = "--state-dir",
      defaultValue = "${env:WARMMETAL_AGENT_STATE_DIR:-/var/lib/warmmetal-agent}",
      description =
          "where the agent keeps its key, certificate and command log (WARMMETAL_AGENT_STATE_DIR)")
  Path stateDir;

  @Option(
      names = "--name",
      defaultValue = "${env:WARMMETAL_AGENT_NAME}",
      description = "the machine's name (default: the host name)")
  String name;

  @Option(
      names = "--address",
      defaultValue = "${env:WARMMETAL_AGENT_ADDRESS}",
      description = "the address the machine is reached at (default: none reported)")
  String address;

  @Option(
      names = "--image-file",
      defaultValue = "${env:WARMMETAL_AGENT_IMAGE_FILE:-/run/warmmetal/image.json}",
      description =
          "where WarmMetal's node image says what it booted, reported in the machine's facts "
              + "(WARMMETAL_AGENT_IMAGE_FILE; absent on other hosts)")
  Path imageFile;

  @Option(
      names = "--enroll-only",
      description =
          "enroll (or renew the certificate if due), then exit instead of holding the channel")
  boolean enrollOnly;

  @Option(
      names = "--renew-before",
      defaultValue = "${env:WARMMETAL_AGENT_RENEW_BEFORE}",
      description =
          "renew the client certificate this long before it expires, ISO-8601 (default: a third of its "
              + "lifetime; WARMMETAL_AGENT_RENEW_BEFORE)")
  Duration renewBefore;

  @Mixin ExecutorOptions execution = new ExecutorOptions();

  public static void main(String[] args) {
    useAgentLogging();
    System.exit(new CommandLine(new Main()).execute(args));
  }

  /**
   * The agent's logging ({@code AgentLogging}) and networking settings, unless given otherwise;
   * call before the first logger and the first Vert.x instance are made.
   */
  public static void useAgentLogging() {
    System.setProperty(AgentLogging.PROPERTY, "true");
    // The JDK's resolver (the host's /etc/hosts and DNS) rather than Netty's: the agent resolves
    // one name, and
    // Netty's DNS client is some 250 classes to load at every start.
    if (System.getProperty("vertx.disableDnsResolver") == null) {
      System.setProperty("vertx.disableDnsResolver", "true");
    }
  }

  @Override
  public Integer call() throws Exception {
    Logger log =
        LoggerFactory.getLogger(Main.class); // after main() chose the logging configuration
    Vertx vertx = Vertx.vertx();
    try {
      AgentIdentity identity = AgentIdentity.load(stateDir).orElse(null);
      if (identity == null) {
        identity = enrollOnly ? enroll(vertx, log) : enrollPatiently(vertx, log);
        if (identity == null) {
          return 2;
        }
        identity.save(stateDir);
      }
      log.info("Enrolled as machine {} (state in {})", identity.machineId(), stateDir);
      if (api != null && identity.renewalDue(Instant.now(), renewBefore)) {
        identity = renew(vertx, identity, log);
      }
      if (enrollOnly) {
        return 0;
      }
      if (api == null) {
        log.error("Give --api: the agent port to hold the channel with");
        return 2;
      }
      var ws = vertx.createWebSocketClient(new WebSocketClientOptions().setVerifyHost(false));
      var executor = execution.executor(vertx, stateDir);
      CommandLog commands = CommandLog.load(vertx, stateDir);
      AtomicReference<ChannelClient> channel =
          new AtomicReference<>(
              new ChannelClient(vertx, ws, URI.create(api), identity, commands, executor));
      channel.get().start();
      // Hourly: renew the certificate when due, then hold the channel with the new one.
      AgentIdentity[] current = {identity};
      vertx.setPeriodic(
          3_600_000,
          id -> {
            if (current[0].renewalDue(Instant.now(), renewBefore)) {
              vertx
                  .executeBlocking(() -> renew(vertx, current[0], log), false)
                  .onSuccess(
                      renewed -> {
                        current[0] = renewed;
                        ChannelClient next =
                            new ChannelClient(
                                vertx, ws, URI.create(api), renewed, commands, executor);
                        channel.getAndSet(next).stop().onComplete(x -> next.start());
                      })
                  .onFailure(
                      err ->
                          log.warn(
                              "Certificate renewal failed (will retry): {}", err.getMessage()));
            }
          });
      CountDownLatch stopped = new CountDownLatch(1);
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    channel.get().stop();
                    stopped.countDown();
                  },
                  "warmmetal-agent-shutdown"));
      stopped.await();
      return 0;
    } catch (Enrollment.EnrollmentRefused e) {
      log.error("{}", e.getMessage());
      return 1;
    } finally {
      if (enrollOnly) {
        vertx.close();
      }
    }
  }

  /** Renews the certificate and stores it (blocking: call from a worker or the main thread). */
  private AgentIdentity renew(Vertx vertx, AgentIdentity identity, Logger log) throws Exception {
    AgentIdentity renewed = Enrollment.renew(vertx, URI.create(api), identity).await();
    renewed.saveRenewed(stateDir);
    log.info(
        "Renewed the client certificate of machine {} (valid until {})",
        renewed.machineId(),
        renewed.certificate().getNotAfter().toInstant());
    return renewed;
  }

  private String nodeName() throws UnknownHostException {
    return name != null ? name : InetAddress.getLocalHost().getHostName();
  }

  /**
   * Enrolls, trying again while the API refuses the token or cannot be reached — with a growing
   * pause (2 s to 5 min), reading the token file again each time, so that an operator's new token,
   * or the API coming back, is enough. A process that exited instead would be restarted by its
   * service manager to be refused again at once.
   */
  private AgentIdentity enrollPatiently(Vertx vertx, Logger log) throws Exception {
    long pauseMs = 2_000;
    while (true) {
      try {
        return enroll(vertx, log);
      } catch (Enrollment.EnrollmentRefused e) {
        log.error(
            "{}; trying again in {} s (with the token file read again)",
            e.getMessage(),
            pauseMs / 1000);
      } catch (Exception e) {
        log.warn(
            "Could not reach the API to enroll ({}); trying again in {} s",
            e.getMessage(),
            pauseMs / 1000);
      }
      Thread.sleep(pauseMs);
      pauseMs = Math.min(pauseMs * 2, 300_000);
    }
  }

  /** Enrolls with the token; null (after saying why) if the flags are missing. */
  private AgentIdentity enroll(Vertx vertx, Logger log) throws Exception {
    if (api == null || !trust.given()) {
      log.error(
          "Not enrolled yet: give --api and --ca-pin or --ca-file (and the enrollment token)");
      return null;
    }
    String token =
        tokenFile != null
            ? Files.readString(tokenFile).trim()
            : System.getenv("WARMMETAL_AGENT_TOKEN");
    if (token == null || token.isBlank()) {
      log.error(
          "Not enrolled yet: give the enrollment token with --token-file or WARMMETAL_AGENT_TOKEN");
      return null;
    }
    JsonObject machine =
        HostFacts.ofThisHost(imageFile, System.getenv("WARMMETAL_KUBE_VERSION"))
            .describe(nodeName());
    if (address != null) {
      machine.put("address", address);
    }
    Enrollment enrollment = new Enrollment(vertx, URI.create(api), trust.pin());
    try {
      return enrollment.enroll(token, machine).await();
    } finally {
      enrollment.close();
    }
  }
}
