package io.warmmetal.controller.buffers;

import io.fabric8.kubernetes.api.model.APIGroup;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GroupVersionForDiscovery;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplate;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.autoscaling.v1.Scale;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.BiFunction;

/**
 * Resolves a buffer's spec to the pod template of one chunk, as upstream's buffer controller does:
 * a {@code podTemplateRef}'s PodTemplate; a {@code scalableRef}'s workload template and replicas —
 * Deployments, StatefulSets and ReplicaSets as Karpenter reads them ({@code spec.template}, {@code
 * spec.replicas}, an empty group taken for {@code apps}), Jobs ({@code spec.parallelism}) and
 * ReplicationControllers as Cluster Autoscaler reads them, and any other kind with a scale
 * subresource as Cluster Autoscaler's scale resolver does: the scale's replicas, and the template
 * of its newest pod (such a buffer waits for one). Same namespace only.
 */
final class BufferResolver {
  static final String RESOLVED = "Resolved";
  static final String SCALABLE_REF_NOT_FOUND = "ScalableRefNotFound";
  static final String POD_TEMPLATE_NOT_FOUND = "PodTemplateNotFound";
  static final String RESOLUTION_FAILED = "ResolutionFailed";

  /** Why a buffer did not resolve: upstream's reason and a message. */
  static final class Failure extends Exception {
    final String reason;

    Failure(String reason, String message) {
      super(message);
      this.reason = reason;
    }
  }

  private final KubernetesClient kube;
  private final BiFunction<String, String, PodTemplate> templates;

  /**
   * @param templates the PodTemplate of a namespace and name (the informer's), null if none
   */
  BufferResolver(KubernetesClient kube, BiFunction<String, String, PodTemplate> templates) {
    this.kube = kube;
    this.templates = templates;
  }

  BufferResolution resolve(CapacityBuffer buffer) throws Failure {
    String namespace = buffer.getMetadata().getNamespace();
    CapacityBuffer.Spec spec = buffer.getSpec();
    try {
      if (spec.podTemplateRef != null) {
        PodTemplate template = templates.apply(namespace, spec.podTemplateRef.name);
        if (template == null) {
          throw notFound(POD_TEMPLATE_NOT_FOUND, "podtemplates", spec.podTemplateRef.name);
        }
        return BufferResolution.ofPodTemplate(
            template.getTemplate(),
            template.getMetadata().getName(),
            template.getMetadata().getGeneration());
      }
      return scalable(namespace, spec.scalableRef);
    } catch (KubernetesClientException e) {
      throw new Failure(RESOLUTION_FAILED, e.getMessage());
    }
  }

  private BufferResolution scalable(String namespace, CapacityBuffer.ScalableRef ref)
      throws Failure {
    String group = ref.apiGroup == null ? "" : ref.apiGroup;
    boolean apps = group.isEmpty() || group.equals("apps");
    boolean core = group.isEmpty() || group.equals("core");
    if (apps && ref.kind.equals("Deployment")) {
      var d = kube.apps().deployments().inNamespace(namespace).withName(ref.name).get();
      if (d == null) {
        throw notFound(SCALABLE_REF_NOT_FOUND, "deployments.apps", ref.name);
      }
      return BufferResolution.ofScalable(d.getSpec().getTemplate(), or1(d.getSpec().getReplicas()));
    }
    if (apps && ref.kind.equals("StatefulSet")) {
      var s = kube.apps().statefulSets().inNamespace(namespace).withName(ref.name).get();
      if (s == null) {
        throw notFound(SCALABLE_REF_NOT_FOUND, "statefulsets.apps", ref.name);
      }
      return BufferResolution.ofScalable(s.getSpec().getTemplate(), or1(s.getSpec().getReplicas()));
    }
    if (apps && ref.kind.equals("ReplicaSet")) {
      var r = kube.apps().replicaSets().inNamespace(namespace).withName(ref.name).get();
      if (r == null) {
        throw notFound(SCALABLE_REF_NOT_FOUND, "replicasets.apps", ref.name);
      }
      return BufferResolution.ofScalable(r.getSpec().getTemplate(), or1(r.getSpec().getReplicas()));
    }
    if (group.equals("batch") && ref.kind.equals("Job")) {
      var j = kube.batch().v1().jobs().inNamespace(namespace).withName(ref.name).get();
      if (j == null) {
        throw notFound(SCALABLE_REF_NOT_FOUND, "jobs.batch", ref.name);
      }
      return BufferResolution.ofScalable(
          j.getSpec().getTemplate(), or1(j.getSpec().getParallelism()));
    }
    if (core && ref.kind.equals("ReplicationController")) {
      var rc = kube.replicationControllers().inNamespace(namespace).withName(ref.name).get();
      if (rc == null) {
        throw notFound(SCALABLE_REF_NOT_FOUND, "replicationcontrollers", ref.name);
      }
      return BufferResolution.ofScalable(
          rc.getSpec().getTemplate(), or1(rc.getSpec().getReplicas()));
    }
    return byScale(namespace, group.equals("core") ? "" : group, ref);
  }

  /**
   * Any other kind: its scale subresource (found by discovery, the group's preferred version first)
   * gives the replicas and the selector of its pods; the newest of them, the template.
   */
  private BufferResolution byScale(String namespace, String group, CapacityBuffer.ScalableRef ref)
      throws Failure {
    ResourceDefinitionContext context = scalableKind(group, ref.kind);
    String resource = group.isEmpty() ? context.getPlural() : context.getPlural() + "." + group;
    Scale scale;
    try {
      scale =
          kube.genericKubernetesResources(context)
              .inNamespace(namespace)
              .withName(ref.name)
              .scale();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        throw notFound(SCALABLE_REF_NOT_FOUND, resource, ref.name);
      }
      throw e;
    }
    if (scale == null) {
      throw notFound(SCALABLE_REF_NOT_FOUND, resource, ref.name);
    }
    String selector = scale.getStatus() == null ? null : scale.getStatus().getSelector();
    if (selector == null || selector.isEmpty()) {
      throw new Failure(
          RESOLUTION_FAILED, resource + " \"" + ref.name + "\" has no selector in its scale");
    }
    List<Pod> pods =
        kube.pods()
            .inNamespace(namespace)
            .list(new ListOptionsBuilder().withLabelSelector(selector).build())
            .getItems();
    Pod newest =
        pods.stream()
            .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
            .max(
                Comparator.comparing(
                        (Pod p) -> String.valueOf(p.getMetadata().getCreationTimestamp()))
                    .thenComparing(p -> p.getMetadata().getName()))
            .orElse(null);
    if (newest == null) {
      throw new Failure(
          RESOLUTION_FAILED,
          resource + " \"" + ref.name + "\" has no pod yet to take the pod template from");
    }
    PodTemplateSpec template = new PodTemplateSpec();
    template.setMetadata(
        new ObjectMetaBuilder()
            .withLabels(newest.getMetadata().getLabels())
            .withAnnotations(newest.getMetadata().getAnnotations())
            .build());
    template.setSpec(Serialization.clone(newest.getSpec()));
    int replicas = scale.getStatus().getReplicas() == null ? 0 : scale.getStatus().getReplicas();
    return BufferResolution.ofScalable(template, replicas);
  }

  /** The resource of the kind in the group that has a scale subresource, by discovery. */
  private ResourceDefinitionContext scalableKind(String group, String kind) throws Failure {
    List<String> versions = new ArrayList<>();
    if (group.isEmpty()) {
      versions.add("v1");
    } else {
      APIGroup served = kube.getApiGroup(group);
      if (served == null) {
        throw new Failure(
            RESOLUTION_FAILED, "the API server serves no API group \"" + group + "\"");
      }
      if (served.getPreferredVersion() != null) {
        versions.add(served.getPreferredVersion().getGroupVersion());
      }
      served.getVersions().stream()
          .map(GroupVersionForDiscovery::getGroupVersion)
          .filter(v -> !versions.contains(v))
          .forEach(versions::add);
    }
    for (String groupVersion : versions) {
      APIResourceList list = kube.getApiResources(groupVersion);
      if (list == null) {
        continue;
      }
      for (APIResource r : list.getResources()) {
        if (kind.equals(r.getKind())
            && !r.getName().contains("/")
            && list.getResources().stream()
                .anyMatch(s -> s.getName().equals(r.getName() + "/scale"))) {
          return new ResourceDefinitionContext.Builder()
              .withGroup(group)
              .withVersion(groupVersion.substring(groupVersion.indexOf('/') + 1))
              .withKind(kind)
              .withPlural(r.getName())
              .withNamespaced(Boolean.TRUE.equals(r.getNamespaced()))
              .build();
        }
      }
    }
    throw new Failure(
        RESOLUTION_FAILED,
        "no kind \""
            + kind
            + "\" with a scale subresource in API group \""
            + group
            + "\" (Deployment, StatefulSet, ReplicaSet, Job and ReplicationController are read"
            + " directly)");
  }

  /** As the API server words it: {@code deployments.apps "web" not found}. */
  private static Failure notFound(String reason, String resource, String name) {
    return new Failure(reason, resource + " \"" + name + "\" not found");
  }

  private static int or1(Integer replicas) {
    return replicas == null ? 1 : replicas;
  }
}
