package io.warmmetal.controller.buffers;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.APIGroupBuilder;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ReplicationControllerBuilder;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.autoscaling.v1.ScaleBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.warmmetal.controller.events.Recorder;
import io.warmmetal.controller.events.WrittenEvents;
import io.warmmetal.controller.karpenter.Conditions;
import io.warmmetal.controller.karpenter.VirtualPod;
import io.warmmetal.controller.karpenter.WellKnown;
import io.warmmetal.controller.scheduling.InstanceType;
import io.warmmetal.controller.scheduling.NodePoolView;
import io.warmmetal.controller.scheduling.PodRequest;
import io.warmmetal.controller.scheduling.Resources;
import io.warmmetal.controller.scheduling.Scheduler;
import io.warmmetal.controller.state.PodRequests;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The CapacityBuffer controller on fabric8's mock API server (the shipped CRD registered, so the
 * status subresource is one): each form of spec resolves to upstream's status and its virtual pods;
 * what the CRD's CEL or upstream's controller refuses is reported (condition and event) and plans
 * nothing; a strategy it does not know is left alone; the Provisioning condition follows where the
 * scheduler put the virtual pods. Karpenter's documented buffers are inputs, and resolve as
 * documented.
 */
@EnableKubernetesMockClient(crud = true)
class CapacityBuffersTest {
  private static final long GIB = 1L << 30;
  KubernetesClient kube;
  KubernetesMockServer server;
  private Recorder events;
  private CapacityBuffers buffers;

  @BeforeEach
  void setUp() throws Exception {
    kube.apiextensions()
        .v1()
        .customResourceDefinitions()
        .resource(BufferValidationTest.shippedCrd())
        .create();
    events = new Recorder(kube);
    buffers =
        new CapacityBuffers(
            kube,
            () -> kube.resources(CapacityBuffer.class).inAnyNamespace().list().getItems(),
            (namespace, name) ->
                kube.v1().podTemplates().inNamespace(namespace).withName(name).get(),
            events);
  }

  @AfterEach
  void tearDown() {
    events.close();
  }

  /** Applies YAML documents (a buffer of either served version is stored as v1beta1). */
  private void apply(String yaml) {
    for (String doc : yaml.split("(?m)^---$")) {
      if (!doc.contains("kind:")) {
        continue;
      }
      if (doc.contains("kind: CapacityBuffer")) {
        CapacityBuffer buffer = Serialization.unmarshal(doc, CapacityBuffer.class);
        buffer.setApiVersion("autoscaling.x-k8s.io/v1beta1"); // v1alpha1: the same schema
        kube.resources(CapacityBuffer.class).resource(buffer).create();
      } else {
        kube.resource(Serialization.<HasMetadata>unmarshal(doc)).create();
      }
    }
  }

  private static String resource(String name) throws Exception {
    try (InputStream in = CapacityBuffersTest.class.getClassLoader().getResourceAsStream(name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** A buffer {@code name} in {@code default} with this spec (YAML, indented two spaces). */
  private static String buffer(String name, String spec) {
    return """
        apiVersion: autoscaling.x-k8s.io/v1beta1
        kind: CapacityBuffer
        metadata:
          name: %s
          namespace: default
        spec:
        %s"""
        .formatted(name, spec.indent(2));
  }

  /** A PodTemplate {@code chunk}: one container asking for 1 CPU. */
  private static final String ONE_CPU_CHUNK =
      """
      apiVersion: v1
      kind: PodTemplate
      metadata: {name: chunk, namespace: default}
      template:
        spec:
          containers: [{name: app, image: app, resources: {requests: {cpu: "1"}}}]
      """;

  /** One pass of the buffer controller, no plan: its virtual pods. */
  private List<Pod> pass() {
    buffers.reconcile();
    List<Pod> pods = buffers.withVirtualPods(List.of());
    buffers.writeStatus();
    return pods;
  }

  private CapacityBuffer.Status status(String name) {
    return kube.resources(CapacityBuffer.class)
        .inNamespace("default")
        .withName(name)
        .get()
        .getStatus();
  }

  private static Condition condition(CapacityBuffer.Status status, String type) {
    return Conditions.get(status.conditions, type);
  }

  private static PodTemplateSpec template(String cpu, String memory) {
    return new PodTemplateSpecBuilder()
        .withNewMetadata()
        .withLabels(Map.of("app", "web"))
        .endMetadata()
        .withNewSpec()
        .addNewContainer()
        .withName("app")
        .withImage("web")
        .withNewResources()
        .addToRequests("cpu", new Quantity(cpu))
        .addToRequests("memory", new Quantity(memory))
        .endResources()
        .endContainer()
        .endSpec()
        .build();
  }

  /** A Deployment in {@code default}: {@code replicas} pods of 1 CPU and 1 GiB. */
  private void deployment(String name, int replicas) {
    kube.apps()
        .deployments()
        .inNamespace("default")
        .resource(
            new DeploymentBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .withReplicas(replicas)
                .withTemplate(template("1", "1Gi"))
                .endSpec()
                .build())
        .create();
  }

  // --- the scheduling the provisioner does, with one pool of one shape ---

  private static final InstanceType SHAPE =
      new InstanceType(
          "x86-16c-64g",
          Map.of(
              WellKnown.INSTANCE_TYPE_LABEL, "x86-16c-64g",
              WellKnown.CAPACITY_TYPE_LABEL, "on-demand"),
          Resources.of(16_000, 64 * GIB).with(PodRequests.PODS, 110),
          0.8,
          3);

  private static final NodePoolView POOL =
      new NodePoolView(
          "default",
          0,
          Map.of(),
          List.of(),
          List.of(
              new TaintBuilder()
                  .withKey("workload-type")
                  .withValue("web")
                  .withEffect("NoSchedule")
                  .build()),
          null);

  /**
   * Plans the pods as provisioning does (onto a node there with {@code free} left, else new nodes,
   * {@code shapes} of them to be had) and tells the buffers.
   */
  private Scheduler.Plan plan(List<Pod> pods, Resources free, List<InstanceType> shapes) {
    Map<PodRequest, Pod> pending = new IdentityHashMap<>();
    pods.stream()
        .filter(PodRequests::unschedulable)
        .forEach(p -> pending.put(PodRequests.of(p), p));
    List<Scheduler.PlannedNode> there =
        free == null ? List.of() : List.of(new Scheduler.PlannedNode(POOL, SHAPE, List.of(), free));
    Scheduler.Plan plan =
        new Scheduler(Resources.NONE)
            .schedule(List.copyOf(pending.keySet()), List.of(POOL), shapes, there);
    buffers.planned(pending, plan);
    return plan;
  }

  @Test
  void karpentersDocumentedBufferResolvesToItsDocumentedStatus() throws Exception {
    apply(resource("buffers/karpenter-docs.yaml"));
    buffers.reconcile();
    List<Pod> virtual = buffers.withVirtualPods(List.of());

    // Five virtual pods (replicas 5, under limits that would allow min(20/2, 40Gi/4Gi) = 10), the
    // template's: its requests, selector and tolerations; marked, Unschedulable, never created.
    assertThat(virtual)
        .extracting(p -> p.getMetadata().getName())
        .containsExactly(
            "capacity-buffer-web-app-buffer-1",
            "capacity-buffer-web-app-buffer-2",
            "capacity-buffer-web-app-buffer-3",
            "capacity-buffer-web-app-buffer-4",
            "capacity-buffer-web-app-buffer-5");
    assertThat(virtual)
        .allSatisfy(
            p -> {
              assertThat(VirtualPod.is(p)).isTrue();
              assertThat(VirtualPod.buffer(p)).isEqualTo("default/web-app-buffer");
              assertThat(PodRequests.unschedulable(p)).isTrue();
              assertThat(PodRequests.of(p).requests().cpuMilli()).isEqualTo(2000);
              assertThat(PodRequests.of(p).requests().memoryBytes()).isEqualTo(4 * GIB);
              assertThat(p.getSpec().getNodeSelector())
                  .containsEntry("karpenter.sh/capacity-type", "on-demand");
              assertThat(p.getSpec().getTolerations()).hasSize(1);
              assertThat(p.getSpec().getPriority()).isEqualTo(Integer.MIN_VALUE);
            });
    assertThat(kube.pods().inAnyNamespace().list().getItems()).isEmpty();

    // They fit on a node there (its taint tolerated, its label selected): the documented status.
    Scheduler.Plan plan =
        plan(virtual, Resources.of(15_000, 60 * GIB).with("pods", 100), List.of());
    assertThat(plan.nodes()).isEmpty();
    buffers.writeStatus();
    CapacityBuffer.Status status = status("web-app-buffer");
    assertThat(status.replicas).isEqualTo(5);
    assertThat(status.podTemplateRef.name).isEqualTo("web-buffer-template");
    assertThat(status.podTemplateGeneration)
        .isEqualTo(
            kube.v1()
                .podTemplates()
                .inNamespace("default")
                .withName("web-buffer-template")
                .get()
                .getMetadata()
                .getGeneration());
    assertThat(status.provisioningStrategy).isEqualTo("buffer.x-k8s.io/active-capacity");
    assertThat(condition(status, "ReadyForProvisioning"))
        .satisfies(
            c -> {
              assertThat(c.getStatus()).isEqualTo("True");
              assertThat(c.getReason()).isEqualTo("Resolved");
              assertThat(c.getMessage()).isEqualTo("Pod template resolved successfully");
              assertThat(c.getObservedGeneration()).isNotNull();
            });
    assertThat(condition(status, "Provisioning"))
        .satisfies(
            c -> {
              assertThat(c.getStatus()).isEqualTo("True");
              assertThat(c.getReason()).isEqualTo("FitsExistingCapacity");
              assertThat(c.getMessage()).isEqualTo("All 5 virtual pods fit on existing capacity");
            });
  }

  @Test
  void theProvisioningConditionFollowsWhereTheVirtualPodsWent() {
    apply(
        """
        apiVersion: v1
        kind: PodTemplate
        metadata: {name: chunk, namespace: default}
        template:
          spec:
            containers:
              - name: app
                image: app
                resources: {requests: {cpu: "4", memory: 8Gi}}
            tolerations: [{key: workload-type, value: web, effect: NoSchedule}]
        """);
    apply(buffer("two", "podTemplateRef: {name: chunk}\nreplicas: 2"));
    buffers.reconcile();
    List<Pod> virtual = buffers.withVirtualPods(List.of());

    // No room anywhere but on a new node: one NodeClaim for both.
    Scheduler.Plan plan = plan(virtual, null, List.of(SHAPE));
    assertThat(plan.nodes()).hasSize(1);
    buffers.writeStatus();
    assertThat(condition(status("two"), "Provisioning"))
        .extracting(Condition::getStatus, Condition::getReason, Condition::getMessage)
        .containsExactly(
            "False", "RequiresNewCapacity", "2/2 virtual pods required new capacity, 0 failed");

    // Room for one on the node there (a real pod took the rest): the other needs a new node.
    buffers.reconcile();
    plan(
        buffers.withVirtualPods(List.of()),
        Resources.of(5000, 20 * GIB).with("pods", 100),
        List.of(SHAPE));
    buffers.writeStatus();
    assertThat(condition(status("two"), "Provisioning").getMessage())
        .isEqualTo("1/2 virtual pods required new capacity, 0 failed");

    // No shape to be had: they fit nowhere.
    buffers.reconcile();
    plan(buffers.withVirtualPods(List.of()), null, List.of());
    buffers.writeStatus();
    assertThat(condition(status("two"), "Provisioning").getMessage())
        .isEqualTo("0/2 virtual pods required new capacity, 2 failed");

    // Room for both there: provisioned.
    buffers.reconcile();
    plan(
        buffers.withVirtualPods(List.of()),
        Resources.of(8000, 16 * GIB).with("pods", 100),
        List.of(SHAPE));
    buffers.writeStatus();
    assertThat(condition(status("two"), "Provisioning"))
        .extracting(Condition::getStatus, Condition::getReason)
        .containsExactly("True", "FitsExistingCapacity");

    // Zero replicas: nothing to plan, upstream's BufferEmpty.
    kube.resources(CapacityBuffer.class)
        .inNamespace("default")
        .withName("two")
        .edit(
            b -> {
              b.getSpec().replicas = 0;
              return b;
            });
    assertThat(pass()).isEmpty();
    assertThat(condition(status("two"), "Provisioning"))
        .extracting(Condition::getStatus, Condition::getReason, Condition::getMessage)
        .containsExactly("False", "BufferEmpty", "Buffer has zero desired replicas");
  }

  @Test
  void everyKindOfScalableRefResolvesToItsTemplateAndReplicas() {
    deployment("api-service", 10);
    kube.apps()
        .statefulSets()
        .inNamespace("default")
        .resource(
            new StatefulSetBuilder()
                .withNewMetadata()
                .withName("db")
                .endMetadata()
                .withNewSpec()
                .withTemplate(template("2", "4Gi"))
                .endSpec() // replicas unset: 1
                .build())
        .create();
    kube.apps()
        .replicaSets()
        .inNamespace("default")
        .resource(
            new ReplicaSetBuilder()
                .withNewMetadata()
                .withName("rs")
                .endMetadata()
                .withNewSpec()
                .withReplicas(4)
                .withTemplate(template("1", "1Gi"))
                .endSpec()
                .build())
        .create();
    kube.batch()
        .v1()
        .jobs()
        .inNamespace("default")
        .resource(
            new JobBuilder()
                .withNewMetadata()
                .withName("batch")
                .endMetadata()
                .withNewSpec()
                .withParallelism(3)
                .withTemplate(template("1", "1Gi"))
                .endSpec()
                .build())
        .create();
    kube.replicationControllers()
        .inNamespace("default")
        .resource(
            new ReplicationControllerBuilder()
                .withNewMetadata()
                .withName("legacy")
                .endMetadata()
                .withNewSpec()
                .withReplicas(6)
                .withTemplate(template("1", "1Gi"))
                .endSpec()
                .build())
        .create();
    // Karpenter's documented scalableRef, verbatim: 20 % of a 10-replica Deployment is 2 chunks.
    apply(
        buffer(
            "api-service-buffer",
            """
            scalableRef:
              apiGroup: apps
              kind: Deployment
              name: api-service
            percentage: 20"""));
    apply(
        buffer(
            "db", "scalableRef: {apiGroup: apps, kind: StatefulSet, name: db}\npercentage: 100"));
    // An empty group is read as apps, as Karpenter reads it.
    apply(buffer("rs", "scalableRef: {kind: ReplicaSet, name: rs}\npercentage: 50\nreplicas: 1"));
    apply(
        buffer("batch", "scalableRef: {apiGroup: batch, kind: Job, name: batch}\npercentage: 50"));
    apply(
        buffer(
            "legacy",
            "scalableRef: {apiGroup: '', kind: ReplicationController, name: legacy}\n"
                + "replicas: 2"));

    List<Pod> virtual = pass();
    assertThat(status("api-service-buffer").replicas).isEqualTo(2);
    assertThat(status("db").replicas).isEqualTo(1);
    assertThat(status("rs").replicas).isEqualTo(2);
    assertThat(status("batch").replicas).isEqualTo(2); // ceil(3 × 50 %)
    assertThat(status("legacy").replicas).isEqualTo(2);
    for (String name : List.of("api-service-buffer", "db", "rs", "batch", "legacy")) {
      CapacityBuffer.Status status = status(name);
      assertThat(status.podTemplateRef).as(name).isNull(); // upstream's, for a scalableRef
      assertThat(status.podTemplateGeneration).as(name).isNull();
      assertThat(condition(status, "ReadyForProvisioning").getReason())
          .as(name)
          .isEqualTo("Resolved");
    }
    assertThat(virtual).hasSize(9);
    assertThat(virtual)
        .filteredOn(p -> "default/db".equals(VirtualPod.buffer(p)))
        .singleElement()
        .satisfies(
            p -> {
              assertThat(PodRequests.of(p).requests().cpuMilli()).isEqualTo(2000);
              assertThat(p.getMetadata().getLabels()).containsEntry("app", "web");
            });
  }

  @Test
  void anyOtherKindIsReadThroughItsScaleSubresourceAndItsPods() {
    server
        .expect()
        .get()
        .withPath("/apis/argoproj.io")
        .andReturn(
            200,
            new APIGroupBuilder()
                .withName("argoproj.io")
                .addNewVersion()
                .withGroupVersion("argoproj.io/v1alpha1")
                .withVersion("v1alpha1")
                .endVersion()
                .withNewPreferredVersion()
                .withGroupVersion("argoproj.io/v1alpha1")
                .withVersion("v1alpha1")
                .endPreferredVersion()
                .build())
        .always();
    server
        .expect()
        .get()
        .withPath("/apis/argoproj.io/v1alpha1")
        .andReturn(
            200,
            new APIResourceListBuilder()
                .withGroupVersion("argoproj.io/v1alpha1")
                .addNewResource()
                .withName("rollouts")
                .withKind("Rollout")
                .withNamespaced(true)
                .withVerbs("get")
                .endResource()
                .addNewResource()
                .withName("rollouts/scale")
                .withKind("Scale")
                .withNamespaced(true)
                .withVerbs("get")
                .endResource()
                .build())
        .always();
    server
        .expect()
        .get()
        .withPath("/apis/argoproj.io/v1alpha1/namespaces/default/rollouts/web/scale")
        .andReturn(
            200,
            new ScaleBuilder()
                .withNewSpec()
                .withReplicas(4)
                .endSpec()
                .withNewStatus()
                .withReplicas(4)
                .withSelector("app=web")
                .endStatus()
                .build())
        .always();
    apply(
        buffer(
            "rollout",
            "scalableRef: {apiGroup: argoproj.io, kind: Rollout, name: web}\n" + "percentage: 50"));

    // No pod of it yet: nothing to take the template from (upstream's scale resolver waits too).
    assertThat(pass()).isEmpty();
    assertThat(condition(status("rollout"), "ReadyForProvisioning"))
        .extracting(Condition::getStatus, Condition::getReason, Condition::getMessage)
        .containsExactly(
            "False",
            "ResolutionFailed",
            "rollouts.argoproj.io \"web\" has no pod yet to take the pod template from");

    kube.pods()
        .inNamespace("default")
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName("web-7f9c")
                .withLabels(Map.of("app", "web"))
                .endMetadata()
                .withSpec(template("3", "1Gi").getSpec())
                .build())
        .create();
    // A changed buffer is read again at once.
    kube.resources(CapacityBuffer.class)
        .inNamespace("default")
        .withName("rollout")
        .edit(
            b -> {
              b.getSpec().percentage = 75;
              return b;
            });
    List<Pod> virtual = pass();
    assertThat(status("rollout").replicas).isEqualTo(3); // ceil(4 × 75 %)
    assertThat(virtual).hasSize(3);
    assertThat(virtual)
        .allSatisfy(p -> assertThat(PodRequests.of(p).requests().cpuMilli()).isEqualTo(3000));
  }

  @Test
  void whatIsNotThereIsSaidWithUpstreamsReasonAndPlansNothing() throws Exception {
    apply(buffer("by-template", "podTemplateRef: {name: missing}\nreplicas: 1"));
    apply(
        buffer(
            "by-deployment",
            "scalableRef: {apiGroup: apps, kind: Deployment, name: gone}\n" + "replicas: 1"));
    assertThat(pass()).isEmpty();
    assertThat(condition(status("by-template"), "ReadyForProvisioning"))
        .extracting(Condition::getStatus, Condition::getReason, Condition::getMessage)
        .containsExactly("False", "PodTemplateNotFound", "podtemplates \"missing\" not found");
    assertThat(condition(status("by-deployment"), "ReadyForProvisioning"))
        .extracting(Condition::getStatus, Condition::getReason, Condition::getMessage)
        .containsExactly("False", "ScalableRefNotFound", "deployments.apps \"gone\" not found");
    assertThat(condition(status("by-template"), "Provisioning"))
        .extracting(Condition::getStatus, Condition::getReason, Condition::getMessage)
        .containsExactly("False", "NotReadyForProvisioning", "Buffer is not ReadyForProvisioning");
    assertThat(WrittenEvents.in(kube, events, "default"))
        .extracting(
            e ->
                e.getType()
                    + " "
                    + e.getReason()
                    + " "
                    + e.getInvolvedObject().getKind()
                    + "/"
                    + e.getInvolvedObject().getName()
                    + ": "
                    + e.getMessage())
        .containsExactlyInAnyOrder(
            "Warning PodTemplateNotFound CapacityBuffer/by-template: podtemplates \"missing\" not"
                + " found",
            "Warning ScalableRefNotFound CapacityBuffer/by-deployment: deployments.apps \"gone\" not"
                + " found");

    // The template appears: ready at the next pass.
    kube.v1()
        .podTemplates()
        .inNamespace("default")
        .resource(
            new PodTemplateBuilder()
                .withNewMetadata()
                .withName("missing")
                .endMetadata()
                .withTemplate(template("1", "1Gi"))
                .build())
        .create();
    assertThat(pass()).hasSize(1);
    assertThat(condition(status("by-template"), "ReadyForProvisioning").getStatus())
        .isEqualTo("True");
  }

  @Test
  void aBufferOnlyCelWouldRefuseIsNotReadyAndPlansNothingWhileTheOthersCarryOn() throws Exception {
    apply(ONE_CPU_CHUNK);
    apply(buffer("no-size", "podTemplateRef: {name: chunk}\npercentage: 20"));
    apply(
        buffer(
            "both",
            "podTemplateRef: {name: chunk}\n"
                + "scalableRef: {apiGroup: apps, kind: Deployment, name: web}\nreplicas: 1"));
    apply(buffer("neither", "replicas: 3"));
    apply(buffer("fine", "podTemplateRef: {name: chunk}\nreplicas: 2"));

    List<Pod> virtual = pass();
    assertThat(virtual).extracting(VirtualPod::buffer).containsOnly("default/fine").hasSize(2);
    Map<String, String> why =
        Map.of(
            "no-size", "If X is set, replicas or limits must also be set",
            "both", "You must define either PodTemplateRef or ScalableRef, but not both",
            "neither", "Neither podTemplateRef nor scalableRef is set");
    why.forEach(
        (name, message) ->
            assertThat(condition(status(name), "ReadyForProvisioning"))
                .as(name)
                .extracting(Condition::getStatus, Condition::getReason, Condition::getMessage)
                .containsExactly("False", "ResolutionFailed", message));
    assertThat(WrittenEvents.in(kube, events, "default"))
        .extracting(e -> e.getInvolvedObject().getName() + ": " + e.getMessage())
        .containsExactlyInAnyOrderElementsOf(
            why.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue()).toList());
  }

  @Test
  void aBufferOfAStrategyItDoesNotKnowIsLeftAlone() throws Exception {
    apply(ONE_CPU_CHUNK);
    apply(
        buffer(
            "gke-standby",
            "provisioningStrategy: buffer.gke.io/standby-capacity\n"
                + "podTemplateRef: {name: chunk}\nreplicas: 2"));
    apply(
        buffer(
            "broken-standby",
            "provisioningStrategy: buffer.gke.io/standby-capacity\n"
                + "replicas: 2")); // invalid too: still not ours to judge

    assertThat(pass()).isEmpty();
    for (String name : List.of("gke-standby", "broken-standby")) {
      CapacityBuffer.Status status = status(name);
      assertThat(status == null || status.conditions.isEmpty()).as(name).isTrue();
    }
    assertThat(WrittenEvents.in(kube, events, "default")).isEmpty();
  }

  @Test
  void aPreJoinedBufferIsResolvedButItsVirtualPodsGoToTheStandbyNotToProvisioning() {
    apply(ONE_CPU_CHUNK);
    apply(
        buffer(
            "pre-joined",
            "provisioningStrategy: warmmetal.io/pre-joined\n"
                + "podTemplateRef: {name: chunk}\nreplicas: 2"));

    assertThat(pass()).as("nothing for provisioning to launch").isEmpty();
    assertThat(buffers.preJoinedPods())
        .hasSize(2)
        .allMatch(p -> "default/pre-joined".equals(VirtualPod.buffer(p)));
    CapacityBuffer.Status status = status("pre-joined");
    assertThat(status.replicas).isEqualTo(2);
    assertThat(status.provisioningStrategy).isEqualTo(CapacityBuffer.PRE_JOINED);
    assertThat(condition(status, "ReadyForProvisioning").getStatus()).isEqualTo("True");
  }

  @Test
  void aTemplatesLimitsAreItsRequestsAndAChangedTemplateOrADeletedBufferIsSeenAtOnce() {
    apply(
        """
        apiVersion: v1
        kind: PodTemplate
        metadata: {name: worker-template, namespace: default}
        template:
          metadata: {labels: {app: worker}}
          spec:
            containers:
              - name: worker
                image: worker:latest
                resources: {limits: {cpu: "2", memory: 4Gi}}
        """);
    // Karpenter's documented limits-only buffer: 2 CPU and 4Gi a chunk in cpu 20, memory 40Gi.
    apply(
        buffer(
            "worker-buffer",
            """
            podTemplateRef:
              name: worker-template
            limits:
              cpu: "20"
              memory: "40Gi\""""));
    List<Pod> virtual = pass();
    assertThat(virtual).hasSize(10);
    assertThat(PodRequests.of(virtual.get(0)).requests().cpuMilli()).isEqualTo(2000);
    assertThat(virtual.get(0).getMetadata().getLabels()).containsEntry("app", "worker");

    kube.v1()
        .podTemplates()
        .inNamespace("default")
        .withName("worker-template")
        .edit(
            t -> {
              t.getTemplate()
                  .getSpec()
                  .getContainers()
                  .get(0)
                  .getResources()
                  .setLimits(Map.of("cpu", new Quantity("4"), "memory", new Quantity("4Gi")));
              return t;
            });
    assertThat(pass()).hasSize(5); // 20 / 4
    assertThat(status("worker-buffer").replicas).isEqualTo(5);

    kube.resources(CapacityBuffer.class).inNamespace("default").withName("worker-buffer").delete();
    assertThat(pass()).isEmpty();
  }

  @Test
  void aBufferSwitchedFromATemplateToAWorkloadLosesWhatOnlyTheTemplateGave() {
    apply(ONE_CPU_CHUNK);
    deployment("web", 3);
    apply(buffer("switch", "podTemplateRef: {name: chunk}\nreplicas: 1"));
    pass();
    assertThat(status("switch").podTemplateRef.name).isEqualTo("chunk");
    assertThat(status("switch").podTemplateGeneration).isNotNull();

    kube.resources(CapacityBuffer.class)
        .inNamespace("default")
        .withName("switch")
        .edit(
            b -> {
              b.getSpec().podTemplateRef = null;
              b.getSpec().scalableRef = new CapacityBuffer.ScalableRef();
              b.getSpec().scalableRef.apiGroup = "apps";
              b.getSpec().scalableRef.kind = "Deployment";
              b.getSpec().scalableRef.name = "web";
              b.getSpec().replicas = 2;
              return b;
            });
    pass();
    CapacityBuffer.Status status = status("switch");
    assertThat(status.replicas).isEqualTo(2);
    assertThat(status.podTemplateRef).isNull(); // removed, as upstream's status has none for it
    assertThat(status.podTemplateGeneration).isNull();
  }

  @Test
  void statusIsWrittenOnlyWhenItChanges() {
    apply(ONE_CPU_CHUNK);
    apply(buffer("steady", "podTemplateRef: {name: chunk}\nreplicas: 1"));
    pass();
    String written =
        kube.resources(CapacityBuffer.class)
            .inNamespace("default")
            .withName("steady")
            .get()
            .getMetadata()
            .getResourceVersion();
    pass();
    pass();
    assertThat(
            kube.resources(CapacityBuffer.class)
                .inNamespace("default")
                .withName("steady")
                .get()
                .getMetadata()
                .getResourceVersion())
        .isEqualTo(written);
  }
}
