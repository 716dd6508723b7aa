package io.warmmetal.api.lifecycle;

import static io.warmmetal.api.lifecycle.LaunchSpecBuilder.launch;
import static io.warmmetal.api.lifecycle.MachineState.ENROLLING;
import static io.warmmetal.api.lifecycle.MachineState.FAILED;
import static io.warmmetal.api.lifecycle.MachineState.IN_USE;
import static io.warmmetal.api.lifecycle.MachineState.JOINING;
import static io.warmmetal.api.lifecycle.MachineState.NEW;
import static io.warmmetal.api.lifecycle.MachineState.OFFLINE;
import static io.warmmetal.api.lifecycle.MachineState.PREPARING;
import static io.warmmetal.api.lifecycle.MachineState.PRE_JOINED;
import static io.warmmetal.api.lifecycle.MachineState.REBOOTING;
import static io.warmmetal.api.lifecycle.MachineState.RESETTING;
import static io.warmmetal.api.lifecycle.MachineState.RETIRED;
import static io.warmmetal.api.lifecycle.MachineState.STANDBY;
import static io.warmmetal.api.lifecycle.MachineState.WARM;
import static io.warmmetal.api.lifecycle.Refusal.Reason.Conflict;
import static io.warmmetal.api.lifecycle.Refusal.Reason.EarlierCommandOpen;
import static io.warmmetal.api.lifecycle.Refusal.Reason.Forbidden;
import static io.warmmetal.api.lifecycle.Refusal.Reason.IdempotentParameterMismatch;
import static io.warmmetal.api.lifecycle.Refusal.Reason.InsufficientCapacity;
import static io.warmmetal.api.lifecycle.Refusal.Reason.InvalidState;
import static io.warmmetal.api.lifecycle.Refusal.Reason.NotFound;
import static io.warmmetal.api.lifecycle.Refusal.Reason.QuotaExceeded;
import static io.warmmetal.api.lifecycle.Refusal.Reason.Unauthorized;
import static io.warmmetal.api.lifecycle.Refusal.Reason.ValidationError;
import static java.time.Duration.ZERO;
import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.crypto.CertificateAuthority;
import io.warmmetal.api.lifecycle.EnrollmentGrants.Grant;
import io.warmmetal.api.lifecycle.Refusal.Reason;
import io.warmmetal.api.testing.LifecycleFixture;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The core's specification: {@link Lifecycle} driven directly with its own records — no HTTP, no
 * agent channel, no pool manager — on a real PostgreSQL ({@link LifecycleFixture}: a fresh database
 * per test). One test per behaviour, grouped by method: what each change does to machines and
 * instances, the events it records (in order, as {@link #recorded()} spells them), the commands it
 * queues, the {@link Committed} notice it sends, and how it says no.
 */
class LifecycleTest {
  private static final String SHAPE = "x86-8c-32g";
  private static final String BIG = "x86-64c-256g";
  private static final Caller CLIENT = new Caller("token-client", "client", "default", false);
  private static final Caller OPERATOR = new Caller("token-admin", "admin", null, true);

  /** An operator's enrollment token: what it enrolls is admitted. */
  private static final Grant ADMITS =
      new Grant("operator-token", new JsonObject(), false, false, null);

  /** An operator's token that may also take back hardware the fleet knows. */
  private static final Grant REENROLLS =
      new Grant("reenroll-token", new JsonObject(), true, false, null);

  /**
   * A token a network boot minted: what it enrolls new waits for an operator; it takes back only
   * idle machines.
   */
  private static final Grant BOOT =
      new Grant("boot-minted-token", new JsonObject(), true, true, "boot-token");

  private static final Duration HOUR = Duration.ofHours(1);

  /** The cluster standby launches join, and other clusters' join blocks. */
  private static final String SERVER_A = "10.0.0.2:6443";

  private static final String HASH_A = "sha256:" + "ab".repeat(32);
  private static final String HASH_B = "sha256:" + "cd".repeat(32);
  private static final JsonObject CLUSTER_A = cluster(SERVER_A, HASH_A);

  private static Vertx vertx;
  private static String csr;

  private LifecycleFixture fx;
  private Lifecycle lifecycle;
  private int hosts;
  private int tokens;
  private long mark;

  @BeforeAll
  static void startVertx() throws Exception {
    vertx = Vertx.vertx();
    csr = certificateRequest();
  }

  @AfterAll
  static void stopVertx() {
    vertx.close().await();
  }

  @BeforeEach
  void start() throws Exception {
    fx = LifecycleFixture.start(vertx);
    lifecycle = fx.lifecycle;
  }

  @AfterEach
  void stop() throws Exception {
    fx.close();
  }

  @Nested
  class Register {
    @Test
    void aPreparedMachineIsWarmAndItsShapeNamedFromItsFacts() {
      mark();
      Machine m = lifecycle.register(new Registration(host(), new JsonObject(), true)).await();

      assertThat(m.state()).isEqualTo(WARM);
      assertThat(m.shape()).isEqualTo(SHAPE);
      assertThat(m.admitted()).isTrue();
      assertThat(recorded()).containsExactly("MachineState warm");
      assertThat(fx.notices).containsExactly(new Committed(List.of(), true));
    }

    @Test
    void anUnpreparedMachineWaitsInStandbyForItsPool() {
      mark();
      Machine m = lifecycle.register(new Registration(host(), new JsonObject(), false)).await();

      assertThat(m.state()).isEqualTo(STANDBY);
      assertThat(recorded()).containsExactly("MachineState standby");
      assertThat(fx.notices).containsExactly(new Committed(List.of(), true));
    }

    @Test
    void theSameHardwareTwiceIsAConflict() {
      Host host = host();
      lifecycle.register(new Registration(host, new JsonObject(), true)).await();

      Refusal r = refused(lifecycle.register(new Registration(host, new JsonObject(), true)));
      assertThat(r.reason()).isEqualTo(Conflict);
      assertThat(r.field()).startsWith("identity.");
      assertThat(fx.count("SELECT count(*) FROM machines")).isEqualTo(1);
    }

    @Test
    void factsThatMakeAnOverlongShapeNameAreRefusedNamingThem() {
      JsonArray gpus = new JsonArray();
      for (String model :
          List.of("a10", "a30", "a40", "a100", "h100", "h200", "l4", "l40s", "t4", "v100")) {
        gpus.add(new JsonObject().put("model", model));
      }
      Host host = host(facts(8, 32).put("gpus", gpus));

      Refusal r = refused(lifecycle.register(new Registration(host, new JsonObject(), true)));
      assertThat(r.reason()).isEqualTo(ValidationError);
      assertThat(r.field()).isEqualTo("facts.gpus");
      assertThat(fx.count("SELECT count(*) FROM machines")).isZero();
    }
  }

  @Nested
  class Enroll {
    @Test
    void anAgentBecomesANewMachineInEnrollingWithACertificateForIt() throws Exception {
      mark();
      AgentCertificate cert = lifecycle.enroll(enrollment(host(), ADMITS)).await();

      Machine m = machine(cert.machineId());
      assertThat(m.state()).isEqualTo(ENROLLING);
      assertThat(m.admitted()).isTrue();
      assertThat(certificate(cert).getSubjectX500Principal().getName()).contains("CN=" + m.id());
      assertThat(
              fx.count(
                  "SELECT count(*) FROM machines WHERE id = $1 AND cert_serial = $2",
                  m.id(),
                  serial(cert)))
          .isOne();
      assertThat(fx.grants.enrolled).containsEntry(ADMITS.tokenId(), m.id());
      assertThat(recorded()).containsExactly("MachineState enrolling", "MachineCertified");
      assertThat(fx.notices).isEmpty();
    }

    @Test
    void aTokenTheGrantsDoNotKnowIsRefused() {
      Refusal r = refused(lifecycle.enroll(new EnrollmentRequest("no-such-token", csr, host())));
      assertThat(r.reason()).isEqualTo(Unauthorized);
      assertThat(fx.count("SELECT count(*) FROM machines")).isZero();
    }

    @Test
    void aMalformedCertificateRequestIsRefusedNamingIt() {
      fx.grants.put("token", ADMITS);
      Refusal r = refused(lifecycle.enroll(new EnrollmentRequest("token", "not a CSR", host())));
      assertThat(r.reason()).isEqualTo(ValidationError);
      assertThat(r.field()).isEqualTo("csr");
      assertThat(fx.count("SELECT count(*) FROM machines")).isZero();
    }

    @Test
    void knownHardwareIsRefusedUnlessTheTokenAllowsReenrollmentAndTheRefusalIsRecordedOnIt() {
      Host host = host();
      String id = lifecycle.enroll(enrollment(host, ADMITS)).await().machineId();
      mark();

      assertThat(refusal(lifecycle.enroll(enrollment(host, ADMITS)))).isEqualTo(Conflict);
      assertThat(recorded()).containsExactly("EnrollmentRefused");
      assertThat(machine(id).state()).isEqualTo(ENROLLING);
    }

    @Test
    void knownHardwareEnrollingAgainStartsOverWithANewCertificate() {
      Host host = host();
      Agent old = connected(host);
      pool(1, 5);
      lifecycle.reconcilePools().await();
      assertThat(machine(old.id()).state()).isEqualTo(PREPARING);
      mark();

      AgentCertificate again = lifecycle.enroll(enrollment(host, REENROLLS)).await();

      assertThat(again.machineId()).isEqualTo(old.id());
      assertThat(machine(old.id()).state()).isEqualTo(ENROLLING);
      assertThat(open(old.id())).isEmpty();
      assertThat(recorded())
          .containsExactly(
              "CommandResult prepare cancelled",
              "MachineState preparing → enrolling",
              "MachineCertified");
      assertThat(refusal(lifecycle.agentConnected(old.id(), old.serial()))).isEqualTo(Forbidden);
    }

    @Test
    void aRestartedServerStartsOverFromStandbyOrWarm() {
      Host standbyHost = host();
      Agent standby = connected(standbyHost);
      Host warmHost = host();
      String warm = register(warmHost, true);

      lifecycle.enroll(enrollment(standbyHost, REENROLLS)).await();
      lifecycle.enroll(enrollment(warmHost, REENROLLS)).await();

      assertThat(states("MachineState", standby.id())).endsWith("standby → enrolling");
      assertThat(states("MachineState", warm)).endsWith("warm → enrolling");
    }

    @Test
    void newHardwareEnrollingAgainWithAnOperatorsTokenIsAdmitted() {
      Host host = host();
      Agent waiting = enrolled(host, BOOT);
      lifecycle.agentConnected(waiting.id(), waiting.serial()).await();
      mark();

      Agent again = enrolled(host, REENROLLS);

      assertThat(again.id()).isEqualTo(waiting.id());
      assertThat(machine(again.id()).admitted()).isTrue();
      assertThat(recorded())
          .containsExactly("MachineState new → enrolling", "MachineAccepted", "MachineCertified");
      lifecycle.agentConnected(again.id(), again.serial()).await();
      assertThat(machine(again.id()).state()).isEqualTo(STANDBY);
    }

    @Test
    void aMachineCarryingAnInstanceKeepsItsStateWhenItsHardwareEnrollsAgain() {
      Host host = host();
      String m = register(host, true);
      launchOne();

      lifecycle.enroll(enrollment(host, REENROLLS)).await();

      assertThat(machine(m).state()).isEqualTo(JOINING);
      assertThat(open(m)).containsExactly("join");
    }

    @Test
    void aRetiredMachinesHardwareCannotEnroll() {
      Host host = host();
      String m = register(host, true);
      lifecycle.retire(m).await();

      assertThat(refusal(lifecycle.enroll(enrollment(host, REENROLLS)))).isEqualTo(InvalidState);
    }

    @Test
    void aBootTokenTakesBackOnlyAMachineNobodyIsUsing() {
      Host host = host();
      Agent agent = connected(host);

      assertThat(refused(lifecycle.enroll(enrollment(host, BOOT))).reason()).isEqualTo(Conflict);

      lifecycle.markSilentOffline(ZERO, HOUR).await();
      assertThat(lifecycle.enroll(enrollment(host, BOOT)).await().machineId())
          .isEqualTo(agent.id());
      assertThat(machine(agent.id()).state()).isEqualTo(ENROLLING);
      assertThat(machine(agent.id()).admitted()).isTrue(); // known hardware keeps its admission
    }

    @Test
    void newHardwareFromANetworkBootWaitsInNewForAnOperator() {
      Agent agent = enrolled(host(), BOOT);
      assertThat(machine(agent.id()).admitted()).isFalse();
      mark();

      lifecycle.agentConnected(agent.id(), agent.serial()).await();

      assertThat(machine(agent.id()).state()).isEqualTo(NEW);
      assertThat(recorded()).containsExactly("MachineState enrolling → new");
    }

    @Test
    void aHardwareRecordAdmitsANetworkBootedServerWithItsLabels() {
      Host host = host();
      fx.hardware.expect(host.primaryMac(), new JsonObject().put("rack", "r1"));
      mark();

      Agent agent = enrolled(host, BOOT);

      Machine m = machine(agent.id());
      assertThat(m.admitted()).isTrue();
      assertThat(m.labels().getString("rack")).isEqualTo("r1");
      assertThat(recorded())
          .containsExactly("MachineState enrolling", "MachineAccepted", "MachineCertified");
      lifecycle.agentConnected(agent.id(), agent.serial()).await();
      assertThat(machine(agent.id()).state()).isEqualTo(STANDBY);
    }
  }

  @Nested
  class AcceptAndReject {
    @Test
    void acceptedNewHardwareIsAdmittedIntoStandby() {
      String m = newHardware().id();
      mark();

      Machine accepted = lifecycle.accept(m, "alice").await();

      assertThat(accepted.state()).isEqualTo(STANDBY);
      assertThat(accepted.admitted()).isTrue();
      assertThat(recorded()).containsExactly("MachineAccepted", "MachineState new → standby");
      assertThat(fx.notices).containsExactly(new Committed(List.of(), true));
    }

    @Test
    void acceptingAnAdmittedMachineChangesNothing() {
      String m = register(host(), true);
      mark();

      assertThat(lifecycle.accept(m, "alice").await().state()).isEqualTo(WARM);
      assertThat(recorded()).isEmpty();
    }

    @Test
    void aRetiredMachineCannotBeAccepted() {
      String m = newHardware().id();
      lifecycle.reject(m, "alice").await();

      assertThat(refusal(lifecycle.accept(m, "alice"))).isEqualTo(InvalidState);
    }

    @Test
    void rejectedNewHardwareIsRetiredAndItsIdentityReleased() {
      Host host = host();
      Agent agent = enrolled(host, BOOT);
      lifecycle.agentConnected(agent.id(), agent.serial()).await();
      mark();

      Machine rejected = lifecycle.reject(agent.id(), "alice").await();

      assertThat(rejected.state()).isEqualTo(RETIRED);
      assertThat(rejected.primaryMac()).isNull();
      assertThat(rejected.systemUuid()).isNull();
      assertThat(recorded()).containsExactly("MachineState new → retired", "MachineRejected");
      assertThat(lifecycle.enroll(enrollment(host, BOOT)).await().machineId())
          .isNotEqualTo(agent.id());
    }

    @Test
    void rejectingARejectedMachineChangesNothing() {
      String m = newHardware().id();
      lifecycle.reject(m, "alice").await();
      mark();

      assertThat(lifecycle.reject(m, "alice").await().state()).isEqualTo(RETIRED);
      assertThat(recorded()).isEmpty();
    }

    @Test
    void anAdmittedMachineCannotBeRejected() {
      String m = register(host(), true);

      assertThat(refusal(lifecycle.reject(m, "alice"))).isEqualTo(InvalidState);
      assertThat(machine(m).state()).isEqualTo(WARM);
    }

    @Test
    void newHardwareAcceptedWhileOutOfContactComesBackToStandby() {
      Agent agent = newHardware();
      lifecycle.markSilentOffline(ZERO, HOUR).await();
      assertThat(machine(agent.id()).state()).isEqualTo(OFFLINE);

      lifecycle.accept(agent.id(), "alice").await();
      assertThat(machine(agent.id()).state()).isEqualTo(OFFLINE);
      lifecycle.agentConnected(agent.id(), agent.serial()).await();

      assertThat(machine(agent.id()).state()).isEqualTo(STANDBY);
    }
  }

  @Nested
  class Renew {
    @Test
    void theCurrentCertificateRenewsIntoTheMachinesNextOne() throws Exception {
      Agent agent = connected(host());
      mark();

      AgentCertificate next = lifecycle.renew(agent.id(), agent.serial(), csr).await();

      assertThat(next.machineId()).isEqualTo(agent.id());
      assertThat(
              fx.count(
                  "SELECT count(*) FROM machines WHERE id = $1 AND cert_serial = $2 AND next_cert_serial = $3",
                  agent.id(),
                  agent.serial(),
                  serial(next)))
          .isOne();
      assertThat(recorded()).containsExactly("MachineCertified");
    }

    @Test
    void aCertificateThatIsNotTheMachinesCannotRenew() {
      Agent agent = connected(host());
      Agent other = connected(host());

      assertThat(refusal(lifecycle.renew(agent.id(), other.serial(), csr))).isEqualTo(Unauthorized);
    }

    @Test
    void aRetiredMachineCannotRenew() {
      Agent agent = connected(host());
      lifecycle.retire(agent.id()).await();

      assertThat(refusal(lifecycle.renew(agent.id(), agent.serial(), csr))).isEqualTo(Unauthorized);
    }
  }

  @Nested
  class Cordon {
    @Test
    void aCordonedWarmMachineIsPassedOverByLaunchesUntilUncordoned() {
      String m = register(host(), true);
      mark();

      assertThat(lifecycle.cordon(m, true).await().cordoned()).isTrue();
      assertThat(recorded()).containsExactly("MachineCordoned");
      assertThat(fx.notices).containsExactly(new Committed(List.of(), true));
      assertThat(refusal(lifecycle.launch(launch(CLIENT, SHAPE).build())))
          .isEqualTo(InsufficientCapacity);

      mark();
      assertThat(lifecycle.cordon(m, false).await().cordoned()).isFalse();
      assertThat(recorded()).containsExactly("MachineUncordoned");
      assertThat(launchOne().machineId()).isEqualTo(m);
    }

    @Test
    void cordoningACordonedMachineRecordsNothing() {
      String m = register(host(), true);
      lifecycle.cordon(m, true).await();
      mark();

      lifecycle.cordon(m, true).await();
      assertThat(recorded()).isEmpty();
    }

    @Test
    void aRetiredMachineCannotBeCordoned() {
      String m = register(host(), true);
      lifecycle.retire(m).await();

      assertThat(refusal(lifecycle.cordon(m, true))).isEqualTo(InvalidState);
    }

    @Test
    void anUnknownMachineIsNotFoundToEveryOperatorAction() {
      String nobody = "m-doesnotexist";
      assertThat(refusal(lifecycle.cordon(nobody, true))).isEqualTo(NotFound);
      assertThat(refusal(lifecycle.retire(nobody))).isEqualTo(NotFound);
      assertThat(refusal(lifecycle.reboot(nobody, "test"))).isEqualTo(NotFound);
      assertThat(refusal(lifecycle.accept(nobody, "alice"))).isEqualTo(NotFound);
      assertThat(refusal(lifecycle.reject(nobody, "alice"))).isEqualTo(NotFound);
    }
  }

  @Nested
  class Retire {
    @Test
    void anIdleMachineIsRetiredForGoodWithItsCommandsCancelled() {
      String m = register(host(), false);
      pool(1, 5);
      lifecycle.reconcilePools().await();
      mark();

      assertThat(lifecycle.retire(m).await().state()).isEqualTo(RETIRED);
      assertThat(open(m)).isEmpty();
      assertThat(recorded())
          .containsExactly("CommandResult prepare cancelled", "MachineState preparing → retired");
      assertThat(fx.notices).containsExactly(new Committed(List.of(), true));

      mark();
      assertThat(lifecycle.retire(m).await().state()).isEqualTo(RETIRED);
      assertThat(recorded()).isEmpty();
    }

    @Test
    void aMachineUnderAnInstanceCannotBeRetired() {
      String m = register(host(), true);
      launchOne();

      assertThat(refusal(lifecycle.retire(m))).isEqualTo(InvalidState);
      assertThat(machine(m).state()).isEqualTo(JOINING);
    }

    @Test
    void aMachineResettingAfterItsInstanceIsRetiredOnceTheResetIsReported() {
      String m = register(host(), true);
      Instance i = launchOne();
      report(command(m, "join"), true);
      lifecycle.terminate(i.id(), CLIENT).await();

      // Nothing left to terminate: the refusal says what the machine waits for, and the reboot's
      // says the same.
      Refusal refused = refused(lifecycle.retire(m));
      assertThat(refused.reason()).isEqualTo(InvalidState);
      assertThat(refused.getMessage())
          .contains("resetting", "was terminated", "waits for the agent's report")
          .doesNotContain("terminate its instance");
      assertThat(refused(lifecycle.reboot(m, "new kernel")).getMessage())
          .contains("waits for the agent's report");
      report(command(m, "reset"), false);
      assertThat(lifecycle.retire(m).await().state()).isEqualTo(RETIRED);
    }

    @Test
    void anIdleMachineIsRetiredWhateverStateItIsIn() {
      Agent offline = connected(host());
      lifecycle.markSilentOffline(ZERO, HOUR).await();
      String enrolling = enrolled(host(), ADMITS).id();
      String rebooting = register(host(), true);
      lifecycle.reboot(rebooting, "new kernel").await();
      String failed = quarantined();

      for (String m : List.of(offline.id(), enrolling, rebooting, failed)) {
        MachineState was = machine(m).state();
        assertThat(lifecycle.retire(m).await().state())
            .as("retired from %s", was)
            .isEqualTo(RETIRED);
      }
    }
  }

  @Nested
  class Reboot {
    @Test
    void anIdleMachinesAgentIsToldToReboot() {
      String m = register(host(), true);
      mark();

      assertThat(lifecycle.reboot(m, "new kernel").await().state()).isEqualTo(REBOOTING);
      assertThat(open(m)).containsExactly("reboot");
      assertThat(recorded())
          .containsExactly("MachineState warm → rebooting", "CommandQueued reboot");
      assertThat(fx.notices).containsExactly(new Committed(List.of(m), true));
    }

    @Test
    void aRebootSupersedesTheMachinesOpenCommands() {
      String m = register(host(), false);
      pool(1, 5);
      lifecycle.reconcilePools().await();
      mark();

      lifecycle.reboot(m, "new kernel").await();

      assertThat(open(m)).containsExactly("reboot");
      assertThat(recorded())
          .containsExactly(
              "MachineState preparing → rebooting",
              "CommandResult prepare cancelled",
              "CommandQueued reboot");
    }

    @Test
    void rebootingARebootingMachineChangesNothing() {
      String m = register(host(), true);
      lifecycle.reboot(m, "new kernel").await();
      mark();

      assertThat(lifecycle.reboot(m, "again").await().state()).isEqualTo(REBOOTING);
      assertThat(recorded()).isEmpty();
    }

    @Test
    void aMachineUnderAnInstanceCannotBeRebooted() {
      String m = register(host(), true);
      launchOne();

      assertThat(refusal(lifecycle.reboot(m, "new kernel"))).isEqualTo(InvalidState);
    }

    @Test
    void aMachineWhoseAgentCannotBeToldIsNotRebooted() {
      Agent enrolling = enrolled(host(), ADMITS);
      Agent waiting = newHardware();

      assertThat(refusal(lifecycle.reboot(enrolling.id(), "test"))).isEqualTo(InvalidState);
      assertThat(refusal(lifecycle.reboot(waiting.id(), "test"))).isEqualTo(InvalidState);
    }

    @Test
    void aFailedRebootQuarantinesTheMachine() {
      String m = register(host(), true);
      lifecycle.reboot(m, "new kernel").await();
      mark();

      report(command(m, "reboot"), false);

      assertThat(machine(m).state()).isEqualTo(FAILED);
      assertThat(recorded())
          .containsExactly("CommandResult reboot failed", "MachineState rebooting → failed");
    }

    @Test
    void aQuarantinedMachineIsRebootedOutOfQuarantine() {
      String m = quarantined();
      mark();

      assertThat(lifecycle.reboot(m, "operator's second chance").await().state())
          .isEqualTo(REBOOTING);
      assertThat(recorded())
          .containsExactly("MachineState failed → rebooting", "CommandQueued reboot");
    }

    @Test
    void aRebootEndsWhenTheServerEnrollsAgain() {
      Host host = host();
      Agent agent = connected(host);
      lifecycle.reboot(agent.id(), "new image").await();
      mark();

      Agent again = enrolled(host, BOOT);

      assertThat(machine(again.id()).state()).isEqualTo(ENROLLING);
      assertThat(recorded())
          .containsExactly(
              "CommandResult reboot succeeded",
              "MachineState rebooting → enrolling",
              "MachineCertified");
      lifecycle.agentConnected(again.id(), again.serial()).await();
      assertThat(machine(again.id()).state()).isEqualTo(STANDBY);
    }

    @Test
    void anAgentThatKeepsItsIdentityIsBackInStandbyOnceItHasRunTheReboot() {
      Agent agent = connected(host());
      lifecycle.reboot(agent.id(), "new kernel").await();

      lifecycle
          .agentConnected(agent.id(), agent.serial())
          .await(); // the old session, before it goes down
      assertThat(machine(agent.id()).state()).isEqualTo(REBOOTING);

      report(command(agent.id(), "reboot"), true);
      assertThat(machine(agent.id()).state()).isEqualTo(REBOOTING);
      mark();
      lifecycle.agentConnected(agent.id(), agent.serial()).await();

      assertThat(machine(agent.id()).state()).isEqualTo(STANDBY);
      assertThat(recorded()).containsExactly("MachineState rebooting → standby");
    }
  }

  @Nested
  class Launch {
    @Test
    void aLaunchClaimsAWarmMachineAndQueuesItsJoin() {
      String m = register(host(), true);
      mark();

      Instance i = launchOne();

      assertThat(i.state()).isEqualTo(InstanceState.PENDING);
      assertThat(i.machineId()).isEqualTo(m);
      assertThat(i.project()).isEqualTo("default");
      assertThat(machine(m).state()).isEqualTo(JOINING);
      assertThat(machine(m).instanceId()).isEqualTo(i.id());
      assertThat(open(m)).containsExactly("join");
      assertThat(recorded())
          .containsExactly(
              "InstanceState pending", "MachineState warm → joining", "CommandQueued join");
      assertThat(fx.notices).containsExactly(new Committed(List.of(m), true));
    }

    @Test
    void tooFewMachinesIsInsufficientCapacityAndClaimsNone() {
      register(host(), true);
      register(host(), true);
      mark();

      Refusal r = refused(lifecycle.launch(launch(CLIENT, SHAPE).count(3, 3).build()));

      assertThat(r.reason()).isEqualTo(InsufficientCapacity);
      assertThat(r.details().getJsonObject("available").getJsonObject(SHAPE).getInteger("warm"))
          .isEqualTo(2);
      assertThat(
              fx.count(
                  "SELECT count(*) FROM machines WHERE state = 'warm' AND instance_id IS NULL"))
          .isEqualTo(2);
      assertThat(recorded()).isEmpty();
      assertThat(fx.notices).isEmpty();
    }

    @Test
    void aLaunchTakesAsManyAsItCanUpToMaxCountNeverOneMachineTwice() {
      register(host(), true);
      register(host(), true);

      List<Instance> instances =
          lifecycle.launch(launch(CLIENT, SHAPE).count(1, 5).build()).await().instances();

      assertThat(instances).hasSize(2);
      assertThat(instances.stream().map(Instance::machineId).distinct()).hasSize(2);
    }

    @Test
    void aRetriedLaunchWithTheSameClientTokenReplaysTheFirst() {
      register(host(), true);
      register(host(), true);
      LaunchSpec spec = launch(CLIENT, SHAPE).clientToken("claim-1").build();

      var first = lifecycle.launch(spec).await();
      var again = lifecycle.launch(spec).await();

      assertThat(again.replayed()).isTrue();
      assertThat(again.launchId()).isEqualTo(first.launchId());
      assertThat(again.instances())
          .extracting(Instance::id)
          .containsExactly(first.instances().get(0).id());
      assertThat(fx.count("SELECT count(*) FROM instances")).isOne();
    }

    @Test
    void aClientTokenReusedWithOtherParametersIsRefused() {
      register(host(), true);
      register(host(), true);
      lifecycle.launch(launch(CLIENT, SHAPE).clientToken("claim-1").build()).await();

      Refusal r =
          refused(
              lifecycle.launch(launch(CLIENT, SHAPE).clientToken("claim-1").count(1, 2).build()));
      assertThat(r.reason()).isEqualTo(IdempotentParameterMismatch);
      assertThat(r.field()).isEqualTo("clientToken");
    }

    @Test
    void anUnknownShapeIsRefusedNamingTheShape() {
      Refusal r = refused(lifecycle.launch(launch(CLIENT, "x86-1c-1g").build()));
      assertThat(r.reason()).isEqualTo(ValidationError);
      assertThat(r.field()).isEqualTo("shape");
    }

    @Test
    void aLaunchFallsBackToTheNextShapeItAccepts() {
      lifecycle.register(new Registration(host(facts(64, 256)), new JsonObject(), false)).await();
      String m = register(host(), true);

      Instance i = lifecycle.launch(launch(CLIENT, BIG, SHAPE).build()).await().instances().get(0);

      assertThat(i.machineId()).isEqualTo(m);
      assertThat(i.shape()).isEqualTo(SHAPE);
    }

    @Test
    void aLaunchThatAcceptsPreparingMachinesJoinsOneOnceItIsPrepared() {
      String m = register(host(), false);
      pool(1, 5);
      lifecycle.reconcilePools().await();
      assertThat(refusal(lifecycle.launch(launch(CLIENT, SHAPE).build())))
          .isEqualTo(InsufficientCapacity);
      mark();

      Instance i =
          lifecycle
              .launch(launch(CLIENT, SHAPE).allowPreparing().build())
              .await()
              .instances()
              .get(0);

      assertThat(i.machineId()).isEqualTo(m);
      assertThat(machine(m).state()).isEqualTo(PREPARING);
      assertThat(open(m)).containsExactly("prepare", "join");
      assertThat(recorded()).containsExactly("InstanceState pending", "CommandQueued join");
    }

    @Test
    void aLaunchThatAcceptsStandbyPreparesAStandbyMachineFirst() {
      String m = register(host(), false);
      mark();

      Instance i =
          lifecycle.launch(launch(CLIENT, SHAPE).allowStandby().build()).await().instances().get(0);

      assertThat(i.machineId()).isEqualTo(m);
      assertThat(machine(m).state()).isEqualTo(PREPARING);
      assertThat(open(m)).containsExactly("prepare", "join");
      assertThat(recorded())
          .containsExactlyInAnyOrder(
              "CommandQueued prepare",
              "InstanceState pending",
              "MachineState standby → preparing",
              "CommandQueued join");
    }

    @Test
    void machineLabelsNarrowWhichMachinesALaunchMayClaim() {
      register(host(), true);
      String rackA =
          lifecycle
              .register(new Registration(host(), new JsonObject().put("rack", "a"), true))
              .await()
              .id();
      LaunchSpecBuilder onRackA =
          launch(CLIENT, SHAPE).onMachinesLabelled(new JsonObject().put("rack", "a"));

      assertThat(lifecycle.launch(onRackA.build()).await().instances().get(0).machineId())
          .isEqualTo(rackA);
      assertThat(refusal(lifecycle.launch(onRackA.build()))).isEqualTo(InsufficientCapacity);
    }

    @Test
    void aProjectsQuotaCapsItsLiveInstances() {
      register(host(), true);
      register(host(), true);
      fx.sql(
          "INSERT INTO project_quotas (project, shape, max_instances) VALUES ('default', $1, 1)",
          SHAPE);

      launchOne();
      assertThat(refusal(lifecycle.launch(launch(CLIENT, SHAPE).build()))).isEqualTo(QuotaExceeded);
    }

    @Test
    void aLaunchLandsInItsCallersProject() {
      register(host(), true);
      fx.sql("INSERT INTO projects (name) VALUES ('team-a')");

      Instance i =
          lifecycle.launch(launch(caller("team-a"), SHAPE).build()).await().instances().get(0);

      assertThat(i.project()).isEqualTo("team-a");
      assertThat(instance(i.id()).project()).isEqualTo("team-a");
    }
  }

  @Nested
  class Terminate {
    @Test
    void aRunningInstanceShutsDownAndItsMachineResets() {
      String m = register(host(), true);
      Instance i = running(m);

      terminatedIntoAReset(i, m, IN_USE);
      assertThat(fx.notices).containsExactly(new Committed(List.of(m), true));
    }

    @Test
    void terminatingTwiceChangesNothingTheSecondTime() {
      String m = register(host(), true);
      Instance i = running(m);
      lifecycle.terminate(i.id(), CLIENT).await();
      mark();

      assertThat(lifecycle.terminate(i.id(), CLIENT).await().state())
          .isEqualTo(InstanceState.SHUTTING_DOWN);
      assertThat(open(m)).containsExactly("reset");
      assertThat(recorded()).isEmpty();
    }

    @Test
    void aPendingInstancesJoinIsCancelled() {
      String m = register(host(), true);
      Instance i = launchOne();
      mark();

      lifecycle.terminate(i.id(), CLIENT).await();

      assertThat(open(m)).containsExactly("reset");
      assertThat(recorded())
          .containsExactly(
              "CommandResult join cancelled",
              "InstanceState pending → shutting-down",
              "MachineState joining → resetting",
              "CommandQueued reset");
    }

    @Test
    void aPendingInstanceOnAMachineStillPreparingHasItsPrepareCancelledAndTheMachineReset() {
      String m = preparing();
      Instance i =
          lifecycle
              .launch(launch(CLIENT, SHAPE).allowPreparing().build())
              .await()
              .instances()
              .get(0);
      mark();

      lifecycle.terminate(i.id(), CLIENT).await();

      assertThat(machine(m).state()).isEqualTo(RESETTING);
      assertThat(open(m)).containsExactly("reset");
      assertThat(recorded())
          .containsExactly(
              "CommandResult prepare cancelled",
              "CommandResult join cancelled",
              "InstanceState pending → shutting-down",
              "MachineState preparing → resetting",
              "CommandQueued reset");
    }

    @Test
    void aFailedInstanceLetsGoOfItsQuarantinedMachine() {
      String m = register(host(), true);
      Instance i = launchOne();
      report(command(m, "join"), false);
      mark();

      assertThat(lifecycle.terminate(i.id(), CLIENT).await().state())
          .isEqualTo(InstanceState.TERMINATED);
      assertThat(machine(m).state()).isEqualTo(FAILED);
      assertThat(machine(m).instanceId()).isNull();
      assertThat(recorded()).containsExactly("InstanceState failed → terminated");
    }

    @Test
    void anotherProjectsInstanceIsNotFoundToItsCallersButAnOperatorReachesIt() {
      register(host(), true);
      Instance i = launchOne();
      fx.sql("INSERT INTO projects (name) VALUES ('team-b')");

      assertThat(refusal(lifecycle.terminate(i.id(), caller("team-b")))).isEqualTo(NotFound);
      assertThat(lifecycle.terminate(i.id(), OPERATOR).await().state())
          .isEqualTo(InstanceState.SHUTTING_DOWN);
    }

    @Test
    void anUnknownInstanceIsNotFound() {
      assertThat(refusal(lifecycle.terminate("i-doesnotexist", CLIENT))).isEqualTo(NotFound);
    }

    @Test
    void anInstanceWhoseMachineIsOfflineEndsAtOnceAndTheMachineResetsWhenItIsBack() {
      Agent agent = connected(host());
      Instance i = runningOn(agent);
      lifecycle.markSilentOffline(ZERO, HOUR).await();
      mark();

      assertThat(lifecycle.terminate(i.id(), CLIENT).await().state())
          .isEqualTo(InstanceState.TERMINATED);
      assertThat(machine(agent.id()).instanceId()).isNull();
      assertThat(open(agent.id())).containsExactly("reset");
      assertThat(recorded())
          .containsExactly(
              "InstanceState running → shutting-down",
              "InstanceState shutting-down → terminated",
              "CommandQueued reset");
      assertThat(fx.notices).containsExactly(new Committed(List.of(agent.id()), true));

      lifecycle.agentsHeard(Map.of(agent.id(), agent.serial())).await();
      assertThat(machine(agent.id()).state()).isEqualTo(RESETTING);
      report(command(agent.id(), "reset"), true);
      assertThat(machine(agent.id()).state()).isEqualTo(PREPARING);
    }
  }

  @Nested
  class CommandResults {
    @Test
    void aPreparedMachineIsWarm() {
      String m = preparing();
      mark();

      Command c = report(command(m, "prepare"), true);

      assertThat(c.status()).isEqualTo("succeeded");
      assertThat(machine(m).state()).isEqualTo(WARM);
      assertThat(recorded())
          .containsExactly("CommandResult prepare succeeded", "MachineState preparing → warm");
      assertThat(fx.notices).isEmpty();
    }

    @Test
    void aMachineClaimedWhilePreparingGoesOnToJoining() {
      String m = preparing();
      lifecycle.launch(launch(CLIENT, SHAPE).allowPreparing().build()).await();

      report(command(m, "prepare"), true);

      assertThat(machine(m).state()).isEqualTo(JOINING);
      assertThat(open(m)).containsExactly("join");
    }

    @Test
    void aFailedPrepareQuarantinesTheMachineAndFailsTheInstanceWaitingForIt() {
      String m = preparing();
      Instance i =
          lifecycle
              .launch(launch(CLIENT, SHAPE).allowPreparing().build())
              .await()
              .instances()
              .get(0);
      mark();

      report(command(m, "prepare"), false);

      assertThat(machine(m).state()).isEqualTo(FAILED);
      assertThat(instance(i.id()).state()).isEqualTo(InstanceState.FAILED);
      assertThat(open(m)).isEmpty();
      assertThat(recorded())
          .containsExactly(
              "CommandResult prepare failed",
              "MachineState preparing → failed",
              "CommandResult join cancelled",
              "InstanceState pending → failed");
    }

    @Test
    void aJoinMakesTheInstanceRunningAndTheMachineInUse() {
      String m = register(host(), true);
      Instance i = launchOne();
      mark();

      report(command(m, "join"), true);

      assertThat(instance(i.id()).state()).isEqualTo(InstanceState.RUNNING);
      assertThat(instance(i.id()).runningAt()).isNotNull();
      assertThat(machine(m).state()).isEqualTo(IN_USE);
      assertThat(recorded())
          .containsExactly(
              "CommandResult join succeeded",
              "MachineState joining → in-use",
              "InstanceState pending → running");
      assertThat(fx.notices).isEmpty();
    }

    @Test
    void aFailedJoinFailsTheInstanceAndQuarantinesTheMachine() {
      String m = register(host(), true);
      Instance i = launchOne();
      mark();

      report(command(m, "join"), false);

      assertThat(instance(i.id()).state()).isEqualTo(InstanceState.FAILED);
      assertThat(machine(m).state()).isEqualTo(FAILED);
      assertThat(recorded())
          .containsExactly(
              "CommandResult join failed",
              "MachineState joining → failed",
              "InstanceState pending → failed");
    }

    @Test
    void aJoinResultForAMachineNoLongerJoiningIsRefused() {
      String m = register(host(), true);
      Instance i = launchOne();
      String join = command(m, "join");
      lifecycle.terminate(i.id(), CLIENT).await();

      assertThat(refusal(lifecycle.reportCommandResult(join, true, null))).isEqualTo(InvalidState);
      assertThat(machine(m).state()).isEqualTo(RESETTING);
      assertThat(instance(i.id()).state()).isEqualTo(InstanceState.SHUTTING_DOWN);
    }

    @Test
    void aResultCannotOvertakeTheCommandQueuedBeforeIt() {
      String m = register(host(), false);
      lifecycle.launch(launch(CLIENT, SHAPE).allowStandby().build()).await();

      Refusal r = refused(lifecycle.reportCommandResult(command(m, "join"), true, null));

      assertThat(r.reason()).isEqualTo(EarlierCommandOpen);
      assertThat(r.details().getBoolean("retry")).isTrue();
      assertThat(open(m)).containsExactly("prepare", "join");
    }

    @Test
    void aResetReturnsTheMachineToPreparingAndTerminatesTheInstance() {
      String m = register(host(), true);
      Instance i = shuttingDown(m);
      mark();

      report(command(m, "reset"), true);

      assertThat(machine(m).state()).isEqualTo(PREPARING);
      assertThat(machine(m).instanceId()).isNull();
      assertThat(instance(i.id()).state()).isEqualTo(InstanceState.TERMINATED);
      assertThat(instance(i.id()).terminatedAt()).isNotNull();
      assertThat(open(m)).containsExactly("prepare");
      assertThat(recorded())
          .containsExactly(
              "CommandResult reset succeeded",
              "MachineState resetting → preparing",
              "CommandQueued prepare",
              "InstanceState shutting-down → terminated");
      assertThat(fx.notices).containsExactly(new Committed(List.of(m), false));
    }

    @Test
    void aFailedResetQuarantinesTheMachineAndStillTerminatesTheInstance() {
      String m = register(host(), true);
      Instance i = shuttingDown(m);
      mark();

      report(command(m, "reset"), false);

      assertThat(machine(m).state()).isEqualTo(FAILED);
      assertThat(machine(m).instanceId()).isNull();
      assertThat(instance(i.id()).state()).isEqualTo(InstanceState.TERMINATED);
      assertThat(recorded())
          .containsExactly(
              "CommandResult reset failed",
              "MachineState resetting → failed",
              "InstanceState shutting-down → terminated");
    }

    @Test
    void theSameResultAgainChangesNothingAndAContradictionIsAConflict() {
      String m = preparing();
      String prepare = command(m, "prepare");
      report(prepare, true);
      mark();

      assertThat(report(prepare, true).status()).isEqualTo("succeeded");
      assertThat(recorded()).isEmpty();
      assertThat(refusal(lifecycle.reportCommandResult(prepare, false, null))).isEqualTo(Conflict);
    }

    @Test
    void anUnknownCommandIsNotFound() {
      assertThat(refusal(lifecycle.reportCommandResult("c-doesnotexist", true, null)))
          .isEqualTo(NotFound);
    }

    @Test
    void anAgentReportsOnlyItsOwnMachinesCommandsWithItsCurrentCertificate() {
      Agent agent = connected(host());
      Agent other = connected(host());
      pool(1, 5);
      lifecycle.reconcilePools().await();
      String prepare = command(agent.id(), "prepare");

      assertThat(
              refusal(lifecycle.reportAgentResult(other.id(), other.serial(), prepare, true, null)))
          .isEqualTo(Forbidden);
      assertThat(
              refusal(lifecycle.reportAgentResult(agent.id(), other.serial(), prepare, true, null)))
          .isEqualTo(Forbidden);
      lifecycle.reportAgentResult(agent.id(), agent.serial(), prepare, true, null).await();
      assertThat(machine(agent.id()).state()).isEqualTo(WARM);
    }

    @Test
    void progressIsRecordedForTheMachinesOwnCommandsOnly() {
      Agent agent = connected(host());
      Agent other = connected(host());
      pool(1, 5);
      lifecycle.reconcilePools().await();
      String prepare = command(agent.id(), "prepare");
      mark();

      lifecycle
          .recordProgress(other.id(), other.serial(), prepare, "pull-images", "3 images")
          .await();
      assertThat(recorded()).isEmpty();
      lifecycle
          .recordProgress(agent.id(), agent.serial(), prepare, "pull-images", "3 images")
          .await();
      assertThat(recorded()).containsExactly("CommandProgress");
    }
  }

  @Nested
  class Presence {
    @Test
    void aHelloBringsAnEnrolledMachineToStandby() {
      Agent agent = enrolled(host(), ADMITS);
      mark();

      lifecycle.agentConnected(agent.id(), agent.serial()).await();

      assertThat(machine(agent.id()).state()).isEqualTo(STANDBY);
      assertThat(recorded()).containsExactly("MachineState enrolling → standby");
      assertThat(fx.notices).containsExactly(new Committed(List.of(), true));
    }

    @Test
    void aHelloWithACertificateThatIsNoLongerTheMachinesIsForbidden() {
      Agent agent = enrolled(host(), ADMITS);
      Agent other = enrolled(host(), ADMITS);

      assertThat(refusal(lifecycle.agentConnected(agent.id(), other.serial())))
          .isEqualTo(Forbidden);
      assertThat(machine(agent.id()).state()).isEqualTo(ENROLLING);
    }

    @Test
    void silenceTakesAMachineOfflineAndItsInstanceSaysSo() {
      Agent agent = connected(host());
      Instance i = runningOn(agent);
      mark();

      assertThat(lifecycle.markSilentOffline(ZERO, HOUR).await()).isOne();

      assertThat(machine(agent.id()).state()).isEqualTo(OFFLINE);
      assertThat(instance(i.id()).state()).isEqualTo(InstanceState.RUNNING);
      assertThat(instance(i.id()).stateReason()).isEqualTo("machine offline");
      assertThat(recorded()).containsExactly("MachineState in-use → offline");
    }

    @Test
    void anOfflineMachineHeardAgainIsBackWhereItWas() {
      Agent agent = connected(host());
      Instance i = runningOn(agent);
      lifecycle.markSilentOffline(ZERO, HOUR).await();
      mark();

      assertThat(lifecycle.agentsHeard(Map.of(agent.id(), agent.serial())).await())
          .containsExactly(agent.id());

      assertThat(machine(agent.id()).state()).isEqualTo(IN_USE);
      assertThat(instance(i.id()).stateReason()).isNull();
      assertThat(recorded()).containsExactly("MachineState offline → in-use");
      assertThat(fx.notices).containsExactly(new Committed(List.of(), true));
    }

    @Test
    void aMachineOutOfContactAnywhereInItsCycleComesBackWhereItWas() {
      Agent agent = connected(host());
      offlineAndBack(agent, STANDBY);
      pool(1, 1);
      lifecycle.reconcilePools().await();
      offlineAndBack(agent, PREPARING);
      report(command(agent.id(), "prepare"), true);
      offlineAndBack(agent, WARM);
      Instance i = launchOne();
      offlineAndBack(agent, JOINING);
      report(command(agent.id(), "join"), true);
      offlineAndBack(agent, IN_USE);
      lifecycle.terminate(i.id(), CLIENT).await();
      offlineAndBack(agent, RESETTING);
      report(command(agent.id(), "reset"), true);

      assertThat(machine(agent.id()).state()).isEqualTo(PREPARING);
    }

    @Test
    void onlyAgentsWithTheMachinesCurrentCertificateAreHeard() {
      Agent agent = connected(host());
      Agent other = connected(host());

      assertThat(
              lifecycle
                  .agentsHeard(Map.of(agent.id(), other.serial(), other.id(), other.serial()))
                  .await())
          .containsExactly(other.id());
    }

    @Test
    void anEnrolledMachineHeardWithoutItsHelloComesInAsAHelloWouldBringIt() {
      Agent agent = enrolled(host(), ADMITS);

      lifecycle.agentsHeard(Map.of(agent.id(), agent.serial())).await();

      assertThat(machine(agent.id()).state()).isEqualTo(STANDBY);
    }

    @Test
    void newHardwareOutOfContactComesBackAsNew() {
      Agent agent = newHardware();
      lifecycle.markSilentOffline(ZERO, HOUR).await();

      lifecycle.agentConnected(agent.id(), agent.serial()).await();

      assertThat(machine(agent.id()).state()).isEqualTo(NEW);
    }

    @Test
    void aQuarantinedMachineIsNeverSweptOffline() {
      Agent agent = connected(host());
      pool(1, 5);
      lifecycle.reconcilePools().await();
      report(command(agent.id(), "prepare"), false);

      assertThat(lifecycle.markSilentOffline(ZERO, HOUR).await()).isZero();
      assertThat(machine(agent.id()).state()).isEqualTo(FAILED);
    }

    @Test
    void aRebootingMachineHasTheBootGraceBeforeItsSilenceCounts() {
      Agent agent = connected(host());
      lifecycle.reboot(agent.id(), "new kernel").await();

      assertThat(lifecycle.markSilentOffline(ZERO, HOUR).await()).isZero();
      assertThat(lifecycle.markSilentOffline(ZERO, ZERO).await()).isOne();
      assertThat(machine(agent.id()).state()).isEqualTo(OFFLINE);
      lifecycle.agentConnected(agent.id(), agent.serial()).await();
      assertThat(machine(agent.id()).state()).isEqualTo(REBOOTING);
    }

    @Test
    void aMachineWithoutAnAgentIsNeverSweptOffline() {
      String m = register(host(), true);

      assertThat(lifecycle.markSilentOffline(ZERO, ZERO).await()).isZero();
      assertThat(machine(m).state()).isEqualTo(WARM);
    }
  }

  @Nested
  class ExpireJoins {
    @Test
    void aDeliveredJoinWithoutAResultInTimeFailsTheInstanceAndQuarantinesTheMachine() {
      String m = register(host(), true);
      Instance i = launchOne();
      delivered(command(m, "join"));
      mark();

      assertThat(lifecycle.expireJoins(ZERO).await()).isOne();

      assertThat(instance(i.id()).state()).isEqualTo(InstanceState.FAILED);
      assertThat(instance(i.id()).stateReason()).isEqualTo("join failed: no result within 0 s");
      assertThat(machine(m).state()).isEqualTo(FAILED);
      assertThat(recorded())
          .containsExactly(
              "CommandResult join failed",
              "MachineState joining → failed",
              "InstanceState pending → failed");
    }

    @Test
    void aJoinNotYetDeliveredIsNotTimed() {
      register(host(), true);
      launchOne();

      assertThat(lifecycle.expireJoins(ZERO).await()).isZero();
    }

    @Test
    void aJoinQueuedBehindAPrepareIsNotTimedWhileThePrepareRuns() {
      String m = register(host(), false);
      lifecycle.launch(launch(CLIENT, SHAPE).allowStandby().build()).await();
      delivered(command(m, "join"));

      assertThat(lifecycle.expireJoins(ZERO).await()).isZero();
      assertThat(machine(m).state()).isEqualTo(PREPARING);
    }

    @Test
    void aJoinWhoseMachineWentSilentStillTimesOut() {
      Agent agent = connected(host());
      Instance i =
          lifecycle.launch(launch(CLIENT, SHAPE).allowStandby().build()).await().instances().get(0);
      report(command(agent.id(), "prepare"), true);
      delivered(command(agent.id(), "join"));
      lifecycle.markSilentOffline(ZERO, HOUR).await();
      assertThat(machine(agent.id()).state()).isEqualTo(OFFLINE);

      assertThat(lifecycle.expireJoins(ZERO).await()).isOne();

      assertThat(machine(agent.id()).state()).isEqualTo(FAILED);
      assertThat(instance(i.id()).state()).isEqualTo(InstanceState.FAILED);
    }
  }

  @Nested
  class ReconcilePools {
    @Test
    void aPoolBelowMinWarmPreparesItsOldestStandbyMachines() {
      String s1 = register(host(), false);
      String s2 = register(host(), false);
      String s3 = register(host(), false);
      pool(2, 5);
      mark();

      PoolDecisions d = lifecycle.reconcilePools().await();

      assertThat(d.prepare()).containsExactly(s1, s2);
      assertThat(List.of(machine(s1).state(), machine(s2).state(), machine(s3).state()))
          .containsExactly(PREPARING, PREPARING, STANDBY);
      assertThat(open(s1)).containsExactly("prepare");
      assertThat(recorded())
          .containsExactly(
              "MachineState standby → preparing",
              "CommandQueued prepare",
              "MachineState standby → preparing",
              "CommandQueued prepare");
      assertThat(fx.notices).containsExactly(new Committed(List.of(s1, s2), false));
    }

    @Test
    void aPoolShortOfMachinesRecordsItsDeficitOnceAndItsRecovery() {
      register(host(), false);
      pool(2, 5);
      mark();

      assertThat(lifecycle.reconcilePools().await().deficits())
          .extracting(PoolDecisions.Deficit::deficit)
          .containsExactly(1);
      assertThat(recorded())
          .containsExactly(
              "MachineState standby → preparing", "CommandQueued prepare", "PoolDeficit");
      assertThat(fx.count("SELECT deficit FROM pools WHERE shape = $1", SHAPE)).isOne();

      mark();
      lifecycle.reconcilePools().await();
      assertThat(recorded()).isEmpty();

      register(host(), false);
      mark();
      lifecycle.reconcilePools().await();
      assertThat(recorded())
          .containsExactly(
              "MachineState standby → preparing", "CommandQueued prepare", "PoolSatisfied");
    }

    @Test
    void aPoolAboveMaxWarmParksItsNewestWarmMachines() {
      String w1 = register(host(), true);
      String w2 = register(host(), true);
      String w3 = register(host(), true);
      pool(0, 1);
      mark();

      assertThat(lifecycle.reconcilePools().await().park()).containsExactly(w3, w2);

      assertThat(machine(w1).state()).isEqualTo(WARM);
      assertThat(machine(w2).state()).isEqualTo(STANDBY);
      assertThat(recorded())
          .containsExactly("MachineState warm → standby", "MachineState warm → standby");
      assertThat(fx.notices).isEmpty();
    }

    @Test
    void cordonedMachinesAndNewHardwareAreNoPoolsToMove() {
      String cordoned = register(host(), false);
      lifecycle.cordon(cordoned, true).await();
      Agent waiting = newHardware();
      pool(1, 5);

      PoolDecisions d = lifecycle.reconcilePools().await();

      assertThat(d.prepare()).isEmpty();
      assertThat(d.deficits()).extracting(PoolDecisions.Deficit::deficit).containsExactly(1);
      assertThat(machine(cordoned).state()).isEqualTo(STANDBY);
      assertThat(machine(waiting.id()).state()).isEqualTo(NEW);
    }

    @Test
    void aPoolNamingAnImageRebootsItsMachinesOntoItOneAtATime() {
      JsonObject onV1 = facts(8, 32).put("image", new JsonObject().put("version", "v1"));
      String w1 =
          lifecycle.register(new Registration(host(onV1), new JsonObject(), true)).await().id();
      String w2 =
          lifecycle.register(new Registration(host(onV1), new JsonObject(), true)).await().id();
      fx.sql("INSERT INTO pools (shape, min_warm, max_warm, image) VALUES ($1, 0, 5, 'v2')", SHAPE);
      mark();

      assertThat(lifecycle.reconcilePools().await().reboot())
          .extracting(PoolDecisions.Reboot::machineId)
          .containsExactly(w1);
      assertThat(recorded())
          .containsExactly("MachineState warm → rebooting", "CommandQueued reboot");
      assertThat(fx.notices).containsExactly(new Committed(List.of(w1), false));

      assertThat(lifecycle.reconcilePools().await().reboot()).isEmpty();
      assertThat(machine(w2).state()).isEqualTo(WARM);
    }
  }

  @Nested
  class PreJoinedStandby {
    @Test
    void aStandbyInstancesJoinLeavesItsMachinePreJoined() {
      String m = register(host(), true);
      Instance i = lifecycle.launch(standbyLaunch().build()).await().instances().get(0);
      assertThat(i.standby()).isTrue();
      assertThat(machine(m).state()).isEqualTo(JOINING);
      assertThat(open(m)).containsExactly("join");
      mark();

      report(command(m, "join"), true);

      assertThat(machine(m).state()).isEqualTo(PRE_JOINED);
      assertThat(machine(m).instanceId()).isEqualTo(i.id());
      assertThat(instance(i.id()).state()).isEqualTo(InstanceState.RUNNING);
      assertThat(recorded())
          .containsExactly(
              "CommandResult join succeeded",
              "MachineState joining → pre-joined",
              "InstanceState pending → running");
    }

    @Test
    void aLaunchAllowingPreJoinedTakesThePreJoinedMachineWithoutAJoin() {
      String m = register(host(), true);
      Instance standby = preJoined(m);
      String warm = register(host(), true);
      mark();

      Instance i = takeOne();

      assertThat(i.machineId()).isEqualTo(m);
      assertThat(i.state()).isEqualTo(InstanceState.RUNNING);
      assertThat(i.preJoined()).isTrue();
      assertThat(i.standby()).isFalse();
      assertThat(i.runningAt()).isNotNull();
      assertThat(instance(i.id()).state()).isEqualTo(InstanceState.RUNNING);
      assertThat(instance(i.id()).preJoined()).isTrue();
      assertThat(instance(standby.id()).state()).isEqualTo(InstanceState.TERMINATED);
      assertThat(instance(standby.id()).stateReason())
          .isEqualTo("handed over to instance " + i.id());
      assertThat(machine(m).state()).isEqualTo(IN_USE);
      assertThat(machine(m).instanceId()).isEqualTo(i.id());
      assertThat(open(m)).isEmpty();
      assertThat(machine(warm).state()).isEqualTo(WARM);
      assertThat(recorded())
          .containsExactly(
              "InstanceState running → terminated",
              "InstanceState running",
              "MachineState pre-joined → in-use");
      assertThat(fx.notices).containsExactly(new Committed(List.of(m), true));
      // Nothing is left to join with: its bootstrap token is not kept.
      assertThat(
              fx.count("SELECT count(*) FROM instances WHERE id = $1 AND secrets IS NULL", i.id()))
          .isOne();
    }

    @Test
    void onlyAMachinePreJoinedToTheSameClusterForTheSameProjectIsTaken() {
      String m = register(host(), true);
      preJoined(m);
      fx.sql("INSERT INTO projects (name) VALUES ('team-b')");

      for (LaunchSpecBuilder other :
          List.of(
              launch(CLIENT, SHAPE).joining(cluster("10.0.0.9:6443", HASH_A)).allowPreJoined(),
              launch(CLIENT, SHAPE).joining(cluster(SERVER_A, HASH_B)).allowPreJoined(),
              launch(caller("team-b"), SHAPE).joining(CLUSTER_A).allowPreJoined(),
              launch(CLIENT, SHAPE).joining(CLUSTER_A))) {
        assertThat(refusal(lifecycle.launch(other.build())))
            .as("%s", other.build())
            .isEqualTo(InsufficientCapacity);
      }
      assertThat(machine(m).state()).isEqualTo(PRE_JOINED);
      assertThat(takeOne().machineId()).isEqualTo(m);
    }

    @Test
    void aCordonedPreJoinedMachineOrOneWithoutTheMachineLabelsIsNotTaken() {
      String m = register(host(), true);
      preJoined(m);

      lifecycle.cordon(m, true).await();
      assertThat(refusal(lifecycle.launch(takeLaunch().build()))).isEqualTo(InsufficientCapacity);
      lifecycle.cordon(m, false).await();
      assertThat(
              refusal(
                  lifecycle.launch(
                      takeLaunch().onMachinesLabelled(new JsonObject().put("rack", "a")).build())))
          .isEqualTo(InsufficientCapacity);

      assertThat(takeOne().machineId()).isEqualTo(m);
    }

    @Test
    void minAndMaxCountMixPreJoinedAndWarmMachinesPreJoinedFirst() {
      String m = register(host(), true);
      preJoined(m);
      String warm = register(host(), true);

      List<Instance> got = lifecycle.launch(takeLaunch().count(2, 3).build()).await().instances();

      assertThat(got).extracting(Instance::machineId).containsExactly(m, warm);
      assertThat(got)
          .extracting(Instance::state)
          .containsExactly(InstanceState.RUNNING, InstanceState.PENDING);
      assertThat(open(m)).isEmpty();
      assertThat(open(warm)).containsExactly("join");
      assertThat(machine(warm).state()).isEqualTo(JOINING);
    }

    @Test
    void tooFewIsInsufficientCapacityCountingPreJoinedMachinesAndHandsNothingOver() {
      String m = register(host(), true);
      Instance standby = preJoined(m);
      mark();

      Refusal r = refused(lifecycle.launch(takeLaunch().count(2, 2).build()));

      assertThat(r.reason()).isEqualTo(InsufficientCapacity);
      assertThat(r.details().getBoolean("allowPreJoined")).isTrue();
      JsonObject available = r.details().getJsonObject("available").getJsonObject(SHAPE);
      assertThat(available.getInteger("preJoined")).isOne();
      assertThat(available.getInteger("warm")).isZero();
      assertThat(machine(m).state()).isEqualTo(PRE_JOINED);
      assertThat(machine(m).instanceId()).isEqualTo(standby.id());
      assertThat(instance(standby.id()).state()).isEqualTo(InstanceState.RUNNING);
      assertThat(recorded()).isEmpty();
      assertThat(fx.count("SELECT count(*) FROM launches")).isOne(); // the standby launch's only
    }

    @Test
    void aRetryWithTheSameClientTokenReplaysTheHandOverAndTakesNoSecondMachine() {
      preJoined(register(host(), true));
      preJoined(register(host(), true));
      LaunchSpec spec = takeLaunch().clientToken("claim-1").build();

      var first = lifecycle.launch(spec).await();
      var again = lifecycle.launch(spec).await();

      assertThat(again.replayed()).isTrue();
      assertThat(again.instances())
          .extracting(Instance::id)
          .containsExactly(first.instances().get(0).id());
      assertThat(again.instances().get(0).preJoined()).isTrue();
      assertThat(again.instances().get(0).state()).isEqualTo(InstanceState.RUNNING);
      assertThat(fx.count("SELECT count(*) FROM machines WHERE state = 'pre-joined'")).isOne();
      // standby and allowPreJoined are part of what the token stands for.
      assertThat(
              refusal(
                  lifecycle.launch(
                      launch(CLIENT, SHAPE).joining(CLUSTER_A).clientToken("claim-1").build())))
          .isEqualTo(IdempotentParameterMismatch);
    }

    @Test
    void takingItsOwnPreJoinedMachineNeedsNoRoomInTheProjectsQuota() {
      String m = register(host(), true);
      preJoined(m);
      register(host(), true);
      fx.sql(
          "INSERT INTO project_quotas (project, shape, max_instances) VALUES ('default', $1, 1)",
          SHAPE);

      assertThat(refusal(lifecycle.launch(launch(CLIENT, SHAPE).joining(CLUSTER_A).build())))
          .isEqualTo(QuotaExceeded);
      assertThat(takeOne().machineId()).isEqualTo(m);
    }

    @Test
    void terminatingAStandbyInstanceResetsItsPreJoinedMachine() {
      String m = register(host(), true);
      Instance standby = preJoined(m);

      terminatedIntoAReset(standby, m, PRE_JOINED);

      report(command(m, "reset"), true);
      assertThat(machine(m).state()).isEqualTo(PREPARING);
      assertThat(instance(standby.id()).state()).isEqualTo(InstanceState.TERMINATED);
    }

    @Test
    void terminatingTheInstanceThatTookAPreJoinedMachineResetsItAsAnyOther() {
      String m = register(host(), true);
      Instance standby = preJoined(m);
      Instance i = takeOne();

      terminatedIntoAReset(i, m, IN_USE);

      // The standby instance it replaced has ended: terminating it changes nothing.
      mark();
      assertThat(lifecycle.terminate(standby.id(), CLIENT).await().state())
          .isEqualTo(InstanceState.TERMINATED);
      assertThat(recorded()).isEmpty();
    }

    @Test
    void aPreJoinedMachineOutOfContactIsNotTakenAndComesBackPreJoined() {
      Agent agent = connected(host());
      lifecycle.launch(standbyLaunch().allowStandby().build()).await();
      report(command(agent.id(), "prepare"), true);
      report(command(agent.id(), "join"), true);
      assertThat(lifecycle.markSilentOffline(ZERO, HOUR).await()).isOne();
      assertThat(machine(agent.id()).state()).isEqualTo(OFFLINE);

      assertThat(refusal(lifecycle.launch(takeLaunch().build()))).isEqualTo(InsufficientCapacity);

      lifecycle.agentsHeard(Map.of(agent.id(), agent.serial())).await();
      assertThat(machine(agent.id()).state()).isEqualTo(PRE_JOINED);
      assertThat(takeOne().machineId()).isEqualTo(agent.id());
    }

    @Test
    void aStandbyInstanceTerminatedWhileItsMachineIsOfflineEndsAndTheMachineResetsWhenBack() {
      Agent agent = connected(host());
      Instance standby =
          lifecycle.launch(standbyLaunch().allowStandby().build()).await().instances().get(0);
      report(command(agent.id(), "prepare"), true);
      report(command(agent.id(), "join"), true);
      lifecycle.markSilentOffline(ZERO, HOUR).await();

      assertThat(lifecycle.terminate(standby.id(), CLIENT).await().state())
          .isEqualTo(InstanceState.TERMINATED);
      lifecycle.agentsHeard(Map.of(agent.id(), agent.serial())).await();

      assertThat(machine(agent.id()).state()).isEqualTo(RESETTING);
      assertThat(open(agent.id())).containsExactly("reset");
    }

    @Test
    void aPreJoinedMachineIsNeitherRetiredNorRebootedButMayBeCordoned() {
      String m = register(host(), true);
      preJoined(m);

      assertThat(refusal(lifecycle.retire(m))).isEqualTo(InvalidState);
      assertThat(refusal(lifecycle.reboot(m, "new kernel"))).isEqualTo(InvalidState);
      assertThat(lifecycle.cordon(m, true).await().cordoned()).isTrue();
      assertThat(machine(m).state()).isEqualTo(PRE_JOINED);
    }
  }

  @Nested
  class StateMachines {
    @Test
    void aMachineGoesAroundTheWholeCycleAndItsInstanceThroughItsLife() {
      Agent agent = connected(host());
      pool(1, 1);
      lifecycle.reconcilePools().await();
      report(command(agent.id(), "prepare"), true);
      Instance i = launchOne();
      report(command(agent.id(), "join"), true);
      lifecycle.terminate(i.id(), CLIENT).await();
      report(command(agent.id(), "reset"), true);
      report(command(agent.id(), "prepare"), true);

      assertThat(states("MachineState", agent.id()))
          .containsExactly(
              "enrolling",
              "enrolling → standby",
              "standby → preparing",
              "preparing → warm",
              "warm → joining",
              "joining → in-use",
              "in-use → resetting",
              "resetting → preparing",
              "preparing → warm");
      assertThat(states("InstanceState", i.id()))
          .containsExactly(
              "pending",
              "pending → running",
              "running → shutting-down",
              "shutting-down → terminated");
    }

    @Test
    void aStandbyMachineGoesPreJoinedIsTakenWithoutAJoinAndBackToWarm() {
      String m = register(host(), true);
      Instance standby = preJoined(m);
      Instance taker = takeOne();
      lifecycle.terminate(taker.id(), CLIENT).await();
      report(command(m, "reset"), true);
      report(command(m, "prepare"), true);

      assertThat(states("MachineState", m))
          .containsExactly(
              "warm",
              "warm → joining",
              "joining → pre-joined",
              "pre-joined → in-use",
              "in-use → resetting",
              "resetting → preparing",
              "preparing → warm");
      assertThat(states("InstanceState", standby.id()))
          .containsExactly("pending", "pending → running", "running → terminated");
      assertThat(states("InstanceState", taker.id()))
          .containsExactly("running", "running → shutting-down", "shutting-down → terminated");
    }
  }

  // --- The test's vocabulary ---

  /** An enrolled agent: its machine and the serial of the certificate it speaks with. */
  private record Agent(String id, String serial) {}

  private static JsonObject facts(int cpus, int memoryGiB) {
    return new JsonObject()
        .put("cpus", cpus)
        .put("memoryMiB", memoryGiB * 1024)
        .put("arch", "x86_64");
  }

  /** A new server of {@link #SHAPE}, with an identity of its own. */
  private Host host() {
    return host(facts(8, 32));
  }

  private Host host(JsonObject facts) {
    int n = ++hosts;
    return new Host(
        "node-" + n, "192.0.2." + n, facts, "uuid-" + n, String.format("02:00:00:00:00:%02x", n));
  }

  private String register(Host host, boolean prepared) {
    return lifecycle.register(new Registration(host, new JsonObject(), prepared)).await().id();
  }

  private static Caller caller(String project) {
    return new Caller("token-" + project, "client of " + project, project, false);
  }

  private void pool(int minWarm, int maxWarm) {
    fx.sql(
        "INSERT INTO pools (shape, min_warm, max_warm) VALUES ($1, $2, $3)",
        SHAPE,
        minWarm,
        maxWarm);
  }

  /** A registered machine its pool is preparing. */
  private String preparing() {
    String m = register(host(), false);
    pool(1, 5);
    lifecycle.reconcilePools().await();
    return m;
  }

  /** A registered machine whose join failed, its instance terminated: quarantined, and idle. */
  private String quarantined() {
    String m = register(host(), true);
    Instance i = launchOne();
    report(command(m, "join"), false);
    lifecycle.terminate(i.id(), CLIENT).await();
    return m;
  }

  /**
   * The agent goes silent (its machine offline), then is heard again: its machine is back in {@code
   * state}.
   */
  private void offlineAndBack(Agent agent, MachineState state) {
    assertThat(machine(agent.id()).state()).isEqualTo(state);
    assertThat(lifecycle.markSilentOffline(ZERO, HOUR).await()).isOne();
    assertThat(machine(agent.id()).state()).isEqualTo(OFFLINE);
    lifecycle.agentsHeard(Map.of(agent.id(), agent.serial())).await();
    assertThat(machine(agent.id()).state()).isEqualTo(state);
  }

  private EnrollmentRequest enrollment(Host host, Grant grant) {
    String token = "token-" + ++tokens;
    fx.grants.put(token, grant);
    return new EnrollmentRequest(token, csr, host);
  }

  private Agent enrolled(Host host, Grant grant) {
    AgentCertificate cert = lifecycle.enroll(enrollment(host, grant)).await();
    return new Agent(cert.machineId(), serial(cert));
  }

  /** An agent enrolled with an operator's token that said hello: its machine is in standby. */
  private Agent connected(Host host) {
    Agent agent = enrolled(host, ADMITS);
    lifecycle.agentConnected(agent.id(), agent.serial()).await();
    return agent;
  }

  /** New hardware from a network boot whose agent said hello: it waits in {@code new}. */
  private Agent newHardware() {
    Agent agent = enrolled(host(), BOOT);
    lifecycle.agentConnected(agent.id(), agent.serial()).await();
    return agent;
  }

  /** One machine of {@link #SHAPE} for {@link #CLIENT}. */
  private Instance launchOne() {
    return lifecycle.launch(launch(CLIENT, SHAPE).build()).await().instances().get(0);
  }

  /** An instance launched on warm machine {@code m} and joined. */
  private Instance running(String m) {
    Instance i = launchOne();
    report(command(m, "join"), true);
    return instance(i.id());
  }

  /**
   * An instance launched on warm machine {@code m}, joined and terminated: the machine is
   * resetting.
   */
  private Instance shuttingDown(String m) {
    Instance i = running(m);
    lifecycle.terminate(i.id(), CLIENT).await();
    return i;
  }

  /** An instance launched on the agent's standby machine, prepared and joined. */
  private Instance runningOn(Agent agent) {
    Instance i =
        lifecycle.launch(launch(CLIENT, SHAPE).allowStandby().build()).await().instances().get(0);
    report(command(agent.id(), "prepare"), true);
    report(command(agent.id(), "join"), true);
    return instance(i.id());
  }

  private static JsonObject cluster(String apiServer, String caCertHash) {
    return new JsonObject()
        .put("apiServer", apiServer)
        .put("caCertHash", caCertHash)
        .put("bootstrapToken", "abcdef.0123456789abcdef");
  }

  /** A standby launch of one machine of {@link #SHAPE} into {@link #CLUSTER_A}. */
  private static LaunchSpecBuilder standbyLaunch() {
    return launch(CLIENT, SHAPE).joining(CLUSTER_A).standby();
  }

  /** A launch of one machine of {@link #SHAPE} that takes one pre-joined to {@link #CLUSTER_A}. */
  private static LaunchSpecBuilder takeLaunch() {
    return launch(CLIENT, SHAPE).joining(CLUSTER_A).allowPreJoined();
  }

  /**
   * The standby instance of warm machine {@code m} (the only one), joined: {@code m} is pre-joined.
   */
  private Instance preJoined(String m) {
    Instance i = lifecycle.launch(standbyLaunch().build()).await().instances().get(0);
    assertThat(i.machineId()).isEqualTo(m);
    report(command(m, "join"), true);
    assertThat(machine(m).state()).isEqualTo(PRE_JOINED);
    return instance(i.id());
  }

  /** One machine taken by {@link #takeLaunch()}. */
  private Instance takeOne() {
    return lifecycle.launch(takeLaunch().build()).await().instances().get(0);
  }

  /**
   * Terminates running instance {@code i}: it shuts down, and its machine {@code m} goes from
   * {@code was} to resetting with a reset queued, as the events say.
   */
  private void terminatedIntoAReset(Instance i, String m, MachineState was) {
    mark();
    assertThat(lifecycle.terminate(i.id(), CLIENT).await().state())
        .isEqualTo(InstanceState.SHUTTING_DOWN);
    assertThat(machine(m).state()).isEqualTo(RESETTING);
    assertThat(open(m)).containsExactly("reset");
    assertThat(recorded())
        .containsExactly(
            "InstanceState running → shutting-down",
            "MachineState " + was.wire() + " → resetting",
            "CommandQueued reset");
  }

  private Command report(String commandId, boolean succeeded) {
    return lifecycle.reportCommandResult(commandId, succeeded, null).await();
  }

  /** As the agent channel marks a command it sent. */
  private void delivered(String commandId) {
    fx.sql(
        "UPDATE commands SET status = 'delivered', delivered_at = now() WHERE id = $1", commandId);
  }

  private Machine machine(String id) {
    return Lookups.machine(fx.db, id).await();
  }

  private Instance instance(String id) {
    return Lookups.instance(fx.db, id).await();
  }

  /** The types of the machine's open (queued or delivered) commands, in the order it runs them. */
  private List<String> open(String machineId) {
    List<String> types = new ArrayList<>();
    fx.db
        .preparedQuery(
            "SELECT type FROM commands WHERE machine_id = $1 AND status IN ('queued', 'delivered') "
                + "ORDER BY seq")
        .execute(Tuple.of(machineId))
        .await()
        .forEach(r -> types.add(r.getString("type")));
    return types;
  }

  /** The id of the machine's open command of a type. */
  private String command(String machineId, String type) {
    var rows =
        fx.db
            .preparedQuery(
                "SELECT id FROM commands WHERE machine_id = $1 AND type = $2 "
                    + "AND status IN ('queued', 'delivered')")
            .execute(Tuple.of(machineId, type))
            .await();
    assertThat(rows.size()).as("open %s commands of %s", type, machineId).isOne();
    return rows.iterator().next().getString("id");
  }

  /** From here on, {@link #recorded()} and the notices are one change's. */
  private void mark() {
    mark = fx.count("SELECT coalesce(max(seq), 0) FROM events");
    fx.notices.clear();
  }

  /**
   * The events recorded since {@link #mark()}, in order: {@code "MachineState warm → joining"} (or
   * {@code "MachineState warm"} for a first state), {@code "CommandQueued join"}, {@code
   * "CommandResult join succeeded"}, else the event's type.
   */
  private List<String> recorded() {
    List<String> events = new ArrayList<>();
    fx.db
        .preparedQuery(
            """
            SELECT e.type, e.from_state, e.to_state, c.type AS command
            FROM events e LEFT JOIN commands c ON c.id = e.subject
            WHERE e.seq > $1 ORDER BY e.seq""")
        .execute(Tuple.of(mark))
        .await()
        .forEach(
            r -> {
              String type = r.getString("type");
              events.add(
                  switch (type) {
                    case "MachineState", "InstanceState" ->
                        type + " " + change(r.getString("from_state"), r.getString("to_state"));
                    case "CommandQueued" -> type + " " + r.getString("command");
                    case "CommandResult" ->
                        type + " " + r.getString("command") + " " + r.getString("to_state");
                    default -> type;
                  });
            });
    return events;
  }

  /**
   * Every change of one kind ({@code MachineState}, {@code InstanceState}) its subject went
   * through.
   */
  private List<String> states(String type, String subject) {
    List<String> changes = new ArrayList<>();
    fx.db
        .preparedQuery(
            "SELECT from_state, to_state FROM events WHERE type = $1 AND subject = $2 ORDER BY seq")
        .execute(Tuple.of(type, subject))
        .await()
        .forEach(r -> changes.add(change(r.getString("from_state"), r.getString("to_state"))));
    return changes;
  }

  private static String change(String from, String to) {
    return from == null ? to : from + " → " + to;
  }

  /** The refusal a change ended in (failing the test if it succeeded or failed otherwise). */
  private static Refusal refused(Future<?> change) {
    Throwable cause = change.transform(ar -> Future.succeededFuture(ar.cause())).await();
    assertThat(cause).isInstanceOf(Refusal.class);
    return (Refusal) cause;
  }

  private static Reason refusal(Future<?> change) {
    return refused(change).reason();
  }

  private static X509Certificate certificate(AgentCertificate cert) throws Exception {
    return (X509Certificate)
        CertificateFactory.getInstance("X.509")
            .generateCertificate(
                new ByteArrayInputStream(
                    cert.certificatePem().getBytes(StandardCharsets.US_ASCII)));
  }

  private static String serial(AgentCertificate cert) {
    try {
      return certificate(cert).getSerialNumber().toString(16);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** An agent's certificate request (EC P-256), PEM; one serves every enrollment here. */
  private static String certificateRequest() throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"));
    KeyPair keys = generator.generateKeyPair();
    var request =
        new JcaPKCS10CertificationRequestBuilder(new X500Name("CN=agent"), keys.getPublic())
            .build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate()));
    return CertificateAuthority.pem(request);
  }
}
