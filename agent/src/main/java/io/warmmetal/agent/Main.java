package io.warmmetal.agent;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.warmmetal.agent.enrollment.AgentIdentity;
import io.warmmetal.agent.enrollment.Enrollment;
import io.warmmetal.agent.host.HostFacts;
import io.warmmetal.protocol.CaPin;
import java.net.InetAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code java -jar warmmetal-agent.jar}: enrolls this host with the API (once; the identity is kept in the state
 * directory). Flags fall back to {@code WARMMETAL_AGENT_*} environment variables.
 */
@Command(name = "warmmetal-agent", mixinStandardHelpOptions = true, version = "WarmMetal agent 0.1.0",
    description = "The WarmMetal host agent: enrolls this server with the API.")
public final class Main implements Callable<Integer> {

  @Option(names = "--api", defaultValue = "${env:WARMMETAL_AGENT_API}",
      description = "the API's agent port, e.g. https://api.example:8443 (WARMMETAL_AGENT_API)")
  String api;

  @Option(names = "--ca-pin", defaultValue = "${env:WARMMETAL_AGENT_CA_PIN}",
      description = "sha256:<hex> of the API CA's public key (WARMMETAL_AGENT_CA_PIN)")
  String caPin;

  @Option(names = "--token-file", defaultValue = "${env:WARMMETAL_AGENT_TOKEN_FILE}",
      description = "file holding the enrollment token (WARMMETAL_AGENT_TOKEN_FILE); or WARMMETAL_AGENT_TOKEN")
  Path tokenFile;

  @Option(names = "--state-dir", defaultValue = "${env:WARMMETAL_AGENT_STATE_DIR:-/var/lib/warmmetal-agent}",
      description = "where the agent keeps its key and certificate (WARMMETAL_AGENT_STATE_DIR)")
  Path stateDir;

  @Option(names = "--name", defaultValue = "${env:WARMMETAL_AGENT_NAME}",
      description = "the machine's name (default: the host name)")
  String name;

  @Option(names = "--address", defaultValue = "${env:WARMMETAL_AGENT_ADDRESS}",
      description = "the address the machine is reached at (default: none reported)")
  String address;

  public static void main(String[] args) {
    if (System.getProperty("logback.configurationFile") == null) {
      // Named apart from the API's logback.xml, so the two never shadow each other on one classpath.
      System.setProperty("logback.configurationFile", "logback-agent.xml");
    }
    System.exit(new CommandLine(new Main()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    Logger log = LoggerFactory.getLogger(Main.class); // after main() chose the logging configuration
    Optional<AgentIdentity> known = AgentIdentity.load(stateDir);
    if (known.isPresent()) {
      log.info("Enrolled as machine {} (state in {})", known.get().machineId(), stateDir);
      return 0;
    }
    if (api == null || caPin == null) {
      log.error("Not enrolled yet: give --api and --ca-pin (and the enrollment token)");
      return 2;
    }
    String token = tokenFile != null ? Files.readString(tokenFile).trim() : System.getenv("WARMMETAL_AGENT_TOKEN");
    if (token == null || token.isBlank()) {
      log.error("Not enrolled yet: give the enrollment token with --token-file or WARMMETAL_AGENT_TOKEN");
      return 2;
    }
    JsonObject machine = HostFacts.ofThisHost().describe(name != null ? name : InetAddress.getLocalHost()
        .getHostName());
    if (address != null) {
      machine.put("address", address);
    }
    Vertx vertx = Vertx.vertx();
    Enrollment enrollment = new Enrollment(vertx, URI.create(api), new CaPin(caPin));
    try {
      AgentIdentity identity = enrollment.enroll(token, machine).await();
      identity.save(stateDir);
      log.info("Enrolled as machine {} (state in {})", identity.machineId(), stateDir);
      return 0;
    } catch (Enrollment.EnrollmentRefused e) {
      log.error("{}", e.getMessage());
      return 1;
    } finally {
      enrollment.close();
      vertx.close();
    }
  }
}
