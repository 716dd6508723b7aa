package io.warmmetal.api.ec2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.testing.ApiFixture;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.AvailabilityZone;
import software.amazon.awssdk.services.ec2.model.DescribeInstancesResponse;
import software.amazon.awssdk.services.ec2.model.Ec2Exception;
import software.amazon.awssdk.services.ec2.model.Filter;
import software.amazon.awssdk.services.ec2.model.Instance;
import software.amazon.awssdk.services.ec2.model.InstanceStateChange;
import software.amazon.awssdk.services.ec2.model.InstanceStatus;
import software.amazon.awssdk.services.ec2.model.InstanceTypeInfo;
import software.amazon.awssdk.services.ec2.model.Reservation;
import software.amazon.awssdk.services.ec2.model.ResourceType;
import software.amazon.awssdk.services.ec2.model.RunInstancesResponse;
import software.amazon.awssdk.services.ec2.model.Tag;
import software.amazon.awssdk.services.ec2.model.TagDescription;
import software.amazon.awssdk.services.ec2.model.TagSpecification;

/**
 * The AWS SDK for Java v2's own EC2 client, pointed at the API (endpoint override, a token's access
 * key), launches, describes, filters, tags, retries and terminates — and is refused as EC2 refuses.
 */
@ExtendWith(VertxExtension.class)
class Ec2ClientTest {
  static final String SHAPE = "x86-16c-64g";
  private static ApiFixture fx;

  @BeforeAll
  static void start(Vertx vertx) throws Exception {
    fx = ApiFixture.start(vertx);
  }

  @AfterAll
  static void stop() {
    fx.close();
  }

  @AfterEach
  void terminateEverything() {
    fx.db()
        .query(
            "UPDATE machines SET instance_id = NULL, state = 'retired' WHERE state <> 'retired';"
                + " UPDATE instances SET state = 'terminated', terminated_at = now() - interval '2 hours'")
        .execute()
        .await();
  }

  static AwsBasicCredentials accessKey(String role, String project) {
    return Ec2TestClients.accessKey(fx, role, project);
  }

  static Ec2Client ec2(AwsBasicCredentials key) {
    return ec2(key, c -> {});
  }

  static Ec2Client ec2(
      AwsBasicCredentials key, Consumer<ClientOverrideConfiguration.Builder> config) {
    return Ec2TestClients.client(fx, key, config);
  }

  private static List<String> warm(int n, String zone) {
    return fx.registerMachines(
        n,
        ApiFixture.facts(16, 64),
        true,
        new JsonObject().put("topology.kubernetes.io/zone", zone));
  }

  private static List<Instance> instances(DescribeInstancesResponse r) {
    return r.reservations().stream().flatMap(res -> res.instances().stream()).toList();
  }

  @Test
  void launchDescribeFilterTagAndTerminateAsEc2Does() {
    warm(3, "rack-1");
    try (Ec2Client ec2 = ec2(accessKey("client", "default"))) {
      RunInstancesResponse run =
          ec2.runInstances(
              r ->
                  r.instanceType(SHAPE)
                      .imageId("ami-12345678")
                      .minCount(2)
                      .maxCount(2)
                      .placement(p -> p.availabilityZone("rack-1"))
                      .tagSpecifications(
                          TagSpecification.builder()
                              .resourceType(ResourceType.INSTANCE)
                              .tags(tag("Name", "web"), tag("team", "a"))
                              .build()));
      assertThat(run.reservationId()).startsWith("r-");
      assertThat(run.instances()).hasSize(2);
      for (Instance i : run.instances()) {
        assertThat(i.instanceId()).matches("i-[0-9a-f]{17}");
        assertThat(i.state().code()).isZero();
        assertThat(i.state().nameAsString()).isEqualTo("pending");
        assertThat(i.instanceTypeAsString()).isEqualTo(SHAPE);
        assertThat(i.placement().availabilityZone()).isEqualTo("rack-1");
        assertThat(i.tags()).containsExactlyInAnyOrder(tag("Name", "web"), tag("team", "a"));
        assertThat(i.launchTime()).isNotNull();
      }
      List<String> ids = run.instances().stream().map(Instance::instanceId).toList();

      assertThat(instances(ec2.describeInstances(r -> r.filters(filter("tag:team", "a")))))
          .extracting(Instance::instanceId)
          .containsExactlyInAnyOrderElementsOf(ids);
      assertThat(instances(ec2.describeInstances(r -> r.filters(filter("tag:team", "b")))))
          .isEmpty();
      assertThat(
              instances(
                  ec2.describeInstances(
                      r ->
                          r.filters(
                              filter("instance-type", "x86-16c-*"),
                              filter("instance-state-name", "pending", "running"),
                              filter("tag-key", "Name")))))
          .hasSize(2);
      assertThat(instances(ec2.describeInstances(r -> r.instanceIds(ids.get(0)))))
          .singleElement()
          .satisfies(i -> assertThat(i.privateIpAddress()).startsWith("192.0.2."));

      ec2.createTags(r -> r.resources(ids.get(0)).tags(tag("owner", "alice")));
      assertThat(
              ec2.describeTags(r -> r.filters(filter("resource-id", ids.get(0)))).tags().stream()
                  .map(TagDescription::key))
          .containsExactlyInAnyOrder("Name", "owner", "team");
      ec2.deleteTags(r -> r.resources(ids.get(0)).tags(Tag.builder().key("team").build()));
      assertThat(instances(ec2.describeInstances(r -> r.instanceIds(ids.get(0)))).get(0).tags())
          .containsExactlyInAnyOrder(tag("Name", "web"), tag("owner", "alice"));

      List<InstanceStateChange> changes =
          ec2.terminateInstances(r -> r.instanceIds(ids)).terminatingInstances();
      assertThat(changes).hasSize(2);
      for (InstanceStateChange c : changes) {
        assertThat(c.previousState().code()).isZero();
        assertThat(c.currentState().nameAsString()).isIn("shutting-down", "terminated");
      }
      // Terminating again is idempotent, as EC2's.
      assertThat(ec2.terminateInstances(r -> r.instanceIds(ids)).terminatingInstances())
          .allSatisfy(c -> assertThat(c.previousState().code()).isIn(32, 48));
      assertThat(
              instances(
                  ec2.describeInstances(
                      r -> r.filters(filter("instance-state-name", "pending", "running")))))
          .isEmpty();
    }
  }

  @Test
  void aClientTokenRetriedGetsTheSameReservationAndADifferentRequestIsRefused() {
    warm(2, "rack-1");
    try (Ec2Client ec2 = ec2(accessKey("client", "default"))) {
      RunInstancesResponse first =
          ec2.runInstances(r -> r.instanceType(SHAPE).minCount(1).maxCount(1).clientToken("ct-1"));
      // Another credential of the same project (a rotated one) retrying: the same launch.
      try (Ec2Client rotated = ec2(accessKey("client", "default"))) {
        RunInstancesResponse again =
            rotated.runInstances(
                r -> r.instanceType(SHAPE).minCount(1).maxCount(1).clientToken("ct-1"));
        assertThat(again.reservationId()).isEqualTo(first.reservationId());
        assertThat(again.instances().get(0).instanceId())
            .isEqualTo(first.instances().get(0).instanceId());
        assertThat(again.instances().get(0).clientToken()).isEqualTo("ct-1");
      }
      assertThatThrownBy(
              () ->
                  ec2.runInstances(
                      r -> r.instanceType(SHAPE).minCount(2).maxCount(2).clientToken("ct-1")))
          .isInstanceOfSatisfying(
              Ec2Exception.class,
              e ->
                  assertThat(e.awsErrorDetails().errorCode())
                      .isEqualTo("IdempotentParameterMismatch"));
      assertThat(fx.count("SELECT count(*) FROM instances WHERE state = 'pending'")).isEqualTo(1);
    }
  }

  @Test
  void notEnoughMachinesIsInsufficientCapacityWhichTheSdkRetriesAndNothingLaunches() {
    warm(1, "rack-1");
    AtomicInteger attempts = new AtomicInteger();
    try (Ec2Client ec2 = Ec2TestClients.retrying(fx, accessKey("client", "default"), 3, attempts)) {
      assertThatThrownBy(() -> ec2.runInstances(r -> r.instanceType(SHAPE).minCount(2).maxCount(3)))
          .isInstanceOfSatisfying(
              Ec2Exception.class,
              e -> {
                assertThat(e.awsErrorDetails().errorCode())
                    .isEqualTo("InsufficientInstanceCapacity");
                assertThat(e.statusCode()).isEqualTo(503);
              });
      // The SDK's standard retry strategy tried it three times: a 503 is retried, never "done".
      assertThat(attempts.get()).isEqualTo(3);
      assertThat(fx.count("SELECT count(*) FROM instances WHERE state = 'pending'")).isZero();
    }
  }

  @Test
  void describeInstancesPagesWithNextTokenAndTheSdkPaginatorReadsThemAll() {
    warm(7, "rack-1");
    try (Ec2Client ec2 = ec2(accessKey("client", "default"))) {
      for (int i = 0; i < 7; i++) {
        ec2.runInstances(r -> r.instanceType(SHAPE).minCount(1).maxCount(1));
      }
      DescribeInstancesResponse first = ec2.describeInstances(r -> r.maxResults(5));
      assertThat(instances(first)).hasSize(5);
      assertThat(first.nextToken()).isNotNull();
      DescribeInstancesResponse second =
          ec2.describeInstances(r -> r.maxResults(5).nextToken(first.nextToken()));
      assertThat(instances(second)).hasSize(2);
      assertThat(second.nextToken()).isNull();
      assertThat(
              ec2.describeInstancesPaginator(r -> r.maxResults(5)).reservations().stream()
                  .map(Reservation::instances)
                  .mapToInt(List::size)
                  .sum())
          .isEqualTo(7);
    }
  }

  @Test
  void dryRunSaysWhetherItWouldHaveSucceededAndLaunchesNothing() {
    warm(1, "rack-1");
    try (Ec2Client client = ec2(accessKey("client", "default"));
        Ec2Client readOnly = ec2(accessKey("read-only", "default"))) {
      assertThatThrownBy(
              () ->
                  client.runInstances(
                      r -> r.instanceType(SHAPE).minCount(1).maxCount(1).dryRun(true)))
          .isInstanceOfSatisfying(
              Ec2Exception.class,
              e -> {
                assertThat(e.awsErrorDetails().errorCode()).isEqualTo("DryRunOperation");
                assertThat(e.statusCode()).isEqualTo(412);
              });
      assertThatThrownBy(
              () ->
                  readOnly.runInstances(
                      r -> r.instanceType(SHAPE).minCount(1).maxCount(1).dryRun(true)))
          .isInstanceOfSatisfying(
              Ec2Exception.class,
              e -> assertThat(e.awsErrorDetails().errorCode()).isEqualTo("UnauthorizedOperation"));
      assertThat(fx.count("SELECT count(*) FROM instances WHERE state = 'pending'")).isZero();
      // The read-only key reads.
      assertThat(readOnly.describeInstances().reservations()).isEmpty();
    }
  }

  @Test
  void anotherProjectsKeySeesNoneOfItsInstancesAndCannotTouchThem() {
    warm(1, "rack-1");
    fx.client.put("/v1/projects/team-b", ApiFixture.ADMIN, new JsonObject());
    try (Ec2Client a = ec2(accessKey("client", "default"));
        Ec2Client b = ec2(accessKey("client", "team-b"))) {
      String id =
          a.runInstances(r -> r.instanceType(SHAPE).minCount(1).maxCount(1))
              .instances()
              .get(0)
              .instanceId();
      assertThat(b.describeInstances().reservations()).isEmpty();
      for (Runnable touch :
          List.<Runnable>of(
              () -> b.describeInstances(r -> r.instanceIds(id)),
              () -> b.terminateInstances(r -> r.instanceIds(id)),
              () -> b.createTags(r -> r.resources(id).tags(tag("x", "y"))))) {
        assertThatThrownBy(touch::run)
            .isInstanceOfSatisfying(
                Ec2Exception.class,
                e ->
                    assertThat(e.awsErrorDetails().errorCode())
                        .isEqualTo("InvalidInstanceID.NotFound"));
      }
      assertThat(fx.count("SELECT count(*) FROM instances WHERE state = 'pending'")).isEqualTo(1);
    }
  }

  @Test
  void instanceStatusFollowsTheInstanceAndItsMachine() {
    List<String> machines = warm(1, "rack-1");
    try (Ec2Client ec2 = ec2(accessKey("client", "default"))) {
      String id =
          ec2.runInstances(r -> r.instanceType(SHAPE).minCount(1).maxCount(1))
              .instances()
              .get(0)
              .instanceId();
      assertThat(ec2.describeInstanceStatus().instanceStatuses()).isEmpty(); // running only
      InstanceStatus pending =
          ec2.describeInstanceStatus(r -> r.includeAllInstances(true)).instanceStatuses().get(0);
      assertThat(pending.instanceStatus().statusAsString()).isEqualTo("initializing");
      fx.report(fx.openCommands(machines.get(0), "join").get(0), true);
      InstanceStatus running = ec2.describeInstanceStatus().instanceStatuses().get(0);
      assertThat(running.instanceId()).isEqualTo(id);
      assertThat(running.instanceState().code()).isEqualTo(16);
      assertThat(running.availabilityZone()).isEqualTo("rack-1");
      assertThat(running.systemStatus().statusAsString()).isEqualTo("ok");
      fx.db()
          .preparedQuery("UPDATE machines SET state = 'offline' WHERE id = $1")
          .execute(Tuple.of(machines.get(0)))
          .await();
      assertThat(
              ec2.describeInstanceStatus()
                  .instanceStatuses()
                  .get(0)
                  .instanceStatus()
                  .statusAsString())
          .isEqualTo("impaired");
    }
  }

  @Test
  void instanceTypesAndZonesAreTheFleetsShapesAndRacks() {
    warm(1, "rack-1");
    warm(1, "rack-2");
    fx.registerMachines(1, ApiFixture.gpuFacts(64, 512, 4, "h100"), true);
    fx.client.call(
        HttpMethod.PATCH,
        "/v1/shapes/" + SHAPE,
        ApiFixture.ADMIN,
        new JsonObject().put("alias", "m5.4xlarge"));
    try (Ec2Client ec2 = ec2(accessKey("read-only", "default"))) {
      List<InstanceTypeInfo> types = ec2.describeInstanceTypes(r -> {}).instanceTypes();
      assertThat(types).extracting(InstanceTypeInfo::instanceTypeAsString).contains(SHAPE);
      InstanceTypeInfo gpu =
          types.stream()
              .filter(t -> t.instanceTypeAsString().equals("x86-64c-512g-4xh100"))
              .findFirst()
              .orElseThrow();
      assertThat(gpu.vCpuInfo().defaultVCpus()).isEqualTo(64);
      assertThat(gpu.memoryInfo().sizeInMiB()).isEqualTo(512L * 1024);
      assertThat(gpu.gpuInfo().gpus().get(0).count()).isEqualTo(4);
      assertThat(gpu.processorInfo().supportedArchitecturesAsStrings()).containsExactly("x86_64");
      // By its alias, answered under it.
      assertThat(
              ec2.describeInstanceTypes(r -> r.instanceTypesWithStrings("m5.4xlarge"))
                  .instanceTypes())
          .singleElement()
          .satisfies(t -> assertThat(t.vCpuInfo().defaultVCpus()).isEqualTo(16));
      assertThatThrownBy(
              () -> ec2.describeInstanceTypes(r -> r.instanceTypesWithStrings("t2.nano")))
          .isInstanceOfSatisfying(
              Ec2Exception.class,
              e -> assertThat(e.awsErrorDetails().errorCode()).isEqualTo("InvalidInstanceType"));

      assertThat(ec2.describeAvailabilityZones().availabilityZones())
          .extracting(AvailabilityZone::zoneName)
          .containsExactly("rack-1", "rack-2");
    }
  }

  static Tag tag(String key, String value) {
    return Tag.builder().key(key).value(value).build();
  }

  static Filter filter(String name, String... values) {
    return Filter.builder().name(name).values(values).build();
  }
}
