package io.warmmetal.api.bench;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.warmmetal.api.enrollment.AgentProcessTest;
import io.warmmetal.api.power.IpmiTarget;
import io.warmmetal.api.power.PowerDriver;
import io.warmmetal.api.ssh.SshRunner;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.api.testing.IpmiSim;
import io.warmmetal.api.testing.Sshd;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Out-of-band management on this machine: (1) enrolling a server over SSH — a real sshd on
 * loopback, the real agent jar (34 MB) uploaded and started — from {@code POST
 * /v1/machines:enroll-ssh} to the install done and to the machine enrolled, the first time (with
 * the upload) and again (same build there: no upload); (2) one IPMI power call (ipmitool →
 * ipmi_sim), p50 and max. Prints numbers; asserts nothing.
 *
 * <pre>mvn -B -q install -DskipTests && mvn -B -q -pl api exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.warmmetal.api.bench.OutOfBandBenchmark -Dexec.args="3 20"</pre>
 *
 * Arguments: SSH enrollments (default 3), IPMI calls (default 20).
 */
public final class OutOfBandBenchmark {
  public static void main(String[] args) {
    try {
      run(
          args.length > 0 ? Integer.parseInt(args[0]) : 3,
          args.length > 1 ? Integer.parseInt(args[1]) : 20);
      System.exit(0);
    } catch (Throwable e) {
      e.printStackTrace();
      System.exit(1);
    }
  }

  private static void run(int enrollments, int ipmiCalls) throws Exception {
    Vertx vertx = Vertx.vertx();
    Path installDir = Files.createTempDirectory("bench-install").resolve("agent");
    try (Sshd sshd = Sshd.start();
        ApiFixture fx =
            ApiFixture.start(
                vertx,
                Map.of(
                    "WARMMETAL_AGENT_JAR", AgentProcessTest.AGENT_JAR.toString(),
                    "WARMMETAL_AGENT_INSTALL_DIR", installDir.toString()))) {
      String key =
          fx.client
              .post(
                  "/v1/ssh-keys",
                  ApiFixture.ADMIN,
                  new JsonObject().put("name", "bench").put("privateKey", sshd.clientKey))
              .body()
              .getString("id");
      for (int i = 0; i < enrollments; i++) {
        long start = System.nanoTime();
        String id =
            fx.client
                .post(
                    "/v1/machines:enroll-ssh",
                    ApiFixture.ADMIN,
                    new JsonObject()
                        .put("address", "127.0.0.1")
                        .put("port", sshd.port)
                        .put("user", sshd.user)
                        .put("keyId", key)
                        .put("hostKeyFingerprint", sshd.hostKeyFingerprint)
                        .put("allowReenroll", true)
                        .put(
                            "agentEnvironment",
                            new JsonObject().put("WARMMETAL_AGENT_SIMULATE", "true")))
                .body()
                .getString("id");
        long installed = -1;
        while (true) {
          String state =
              fx.client
                  .get("/v1/ssh-enrollments/" + id, ApiFixture.ADMIN)
                  .body()
                  .getString("state");
          if (installed < 0 && !state.equals("installing")) {
            installed = System.nanoTime();
          }
          if (state.equals("enrolled") || state.equals("failed")) {
            System.out.printf(
                "SSH enrollment %d (%s): installed %d ms, %s %d ms after the POST%n",
                i + 1,
                i == 0 ? "with the upload" : "build already there",
                (installed - start) / 1_000_000,
                state,
                (System.nanoTime() - start) / 1_000_000);
            break;
          }
          Thread.sleep(20);
        }
        // Stop the agent and forget its identity, so that the next round enrolls again.
        long pid = Long.parseLong(Files.readString(installDir.resolve("agent.pid")).trim());
        ProcessHandle.of(pid)
            .ifPresent(
                p -> {
                  p.destroyForcibly();
                  p.onExit().join();
                });
        try (var files = Files.walk(installDir.resolve("state"))) {
          files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
      }
    }
    try (IpmiSim bmc = IpmiSim.start()) {
      PowerDriver ipmi =
          PowerDriver.ipmi(
              SshRunner.outOfBandWorkers(vertx),
              new IpmiTarget("127.0.0.1", bmc.port, IpmiSim.USER, IpmiSim.PASSWORD),
              Duration.ofSeconds(10));
      List<Long> micros = new ArrayList<>();
      for (int i = 0; i < ipmiCalls; i++) {
        long start = System.nanoTime();
        if (i % 2 == 0) {
          ipmi.on().await();
        } else {
          ipmi.off().await();
        }
        micros.add((System.nanoTime() - start) / 1000);
      }
      Collections.sort(micros);
      System.out.printf(
          "IPMI power on/off (ipmitool lanplus → ipmi_sim), %d calls: p50 %.1f ms, max %.1f ms%n",
          ipmiCalls,
          micros.get(micros.size() / 2) / 1000.0,
          micros.get(micros.size() - 1) / 1000.0);
    }
    vertx.close().await();
  }
}
