package io.warmmetal.controller.state;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.NodeAffinity;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.warmmetal.controller.karpenter.WellKnown;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a pod's volumes let it run, as upstream's VolumeTopology: a claim bound to a volume pinned
 * to a zone (its node affinity) or one whose StorageClass allows only some topologies (its {@code
 * allowedTopologies}, as a WaitForFirstConsumer class provisions) adds those places to the pod's
 * required node affinity — in each of its terms, only the first of the volume's (terms are ORed;
 * upstream takes the first) — so the pod is planned where its volume can be attached. A local or
 * hostPath volume's hostname is left out: a new node is never that host. A pending pod whose claim
 * (or its volume, or its class) is not there yet is not planned until it is.
 */
public final class VolumeTopology {
  private static final Logger LOG = LoggerFactory.getLogger(VolumeTopology.class);
  private static final KubernetesSerialization COPIES = new KubernetesSerialization();

  /** The objects a pod's volumes name, as the informers have them (null: not there). */
  public interface Lookup {
    PersistentVolumeClaim claim(String namespace, String name);

    PersistentVolume volume(String name);

    StorageClass storageClass(String name);
  }

  private final Lookup lookup;

  public VolumeTopology(Lookup lookup) {
    this.lookup = lookup;
  }

  /** Thrown when a volume's place cannot be known yet. */
  static final class Unresolved extends Exception {
    Unresolved(String message) {
      super(message);
    }
  }

  /**
   * The pods as plans see them: those whose volumes pin them get a copy carrying that in their
   * required node affinity; a pending one whose volumes cannot be looked up yet is left out; the
   * rest are the pods themselves.
   */
  public List<Pod> inject(List<Pod> pods) {
    List<Pod> out = new ArrayList<>(pods.size());
    for (Pod pod : pods) {
      if (!hasClaims(pod)) {
        out.add(pod);
        continue;
      }
      List<NodeSelectorRequirement> requirements;
      try {
        requirements = requirements(pod);
      } catch (Unresolved e) {
        if (PodRequests.unschedulable(pod)) {
          LOG.debug(
              "Pod {}/{} not planned yet: {}",
              pod.getMetadata().getNamespace(),
              pod.getMetadata().getName(),
              e.getMessage());
        } else {
          out.add(pod); // bound, or not ours to plan: as it is
        }
        continue;
      }
      out.add(requirements.isEmpty() ? pod : withRequirements(pod, requirements));
    }
    return out;
  }

  private static boolean hasClaims(Pod pod) {
    return pod.getSpec() != null
        && pod.getSpec().getVolumes() != null
        && pod.getSpec().getVolumes().stream()
            .anyMatch(v -> v.getPersistentVolumeClaim() != null || v.getEphemeral() != null);
  }

  /** What the pod's volumes require of its node. */
  List<NodeSelectorRequirement> requirements(Pod pod) throws Unresolved {
    List<NodeSelectorRequirement> requirements = new ArrayList<>();
    for (Volume volume : pod.getSpec().getVolumes()) {
      String claimName = claimName(pod, volume);
      if (claimName == null) {
        continue;
      }
      String namespace = pod.getMetadata().getNamespace();
      PersistentVolumeClaim claim = lookup.claim(namespace, claimName);
      if (claim == null) {
        throw new Unresolved("PersistentVolumeClaim " + namespace + "/" + claimName + " not found");
      }
      String volumeName = claim.getSpec() == null ? null : claim.getSpec().getVolumeName();
      if (volumeName != null && !volumeName.isEmpty()) {
        requirements.addAll(ofVolume(volumeName));
      } else {
        requirements.addAll(ofStorageClass(claim));
      }
    }
    return requirements;
  }

  /** The claim the volume mounts; null for a volume that is not a claim. */
  static String claimName(Pod pod, Volume volume) {
    if (volume.getPersistentVolumeClaim() != null) {
      return volume.getPersistentVolumeClaim().getClaimName();
    }
    if (volume.getEphemeral() != null) {
      // A generic ephemeral volume's claim is named after the pod and the volume.
      return pod.getMetadata().getName() + "-" + volume.getName();
    }
    return null;
  }

  private List<NodeSelectorRequirement> ofVolume(String name) throws Unresolved {
    PersistentVolume volume = lookup.volume(name);
    if (volume == null) {
      throw new Unresolved("PersistentVolume " + name + " not found");
    }
    var spec = volume.getSpec();
    if (spec == null
        || spec.getNodeAffinity() == null
        || spec.getNodeAffinity().getRequired() == null
        || spec.getNodeAffinity().getRequired().getNodeSelectorTerms() == null
        || spec.getNodeAffinity().getRequired().getNodeSelectorTerms().isEmpty()) {
      return List.of();
    }
    List<NodeSelectorRequirement> first =
        spec.getNodeAffinity().getRequired().getNodeSelectorTerms().get(0).getMatchExpressions();
    if (first == null) {
      return List.of();
    }
    boolean onOneHost = spec.getLocal() != null || spec.getHostPath() != null;
    return first.stream()
        .filter(r -> !(onOneHost && WellKnown.HOSTNAME_LABEL.equals(r.getKey())))
        .toList();
  }

  private List<NodeSelectorRequirement> ofStorageClass(PersistentVolumeClaim claim)
      throws Unresolved {
    String name = claim.getSpec() == null ? null : claim.getSpec().getStorageClassName();
    if (name == null || name.isEmpty()) {
      return List.of();
    }
    StorageClass storageClass = lookup.storageClass(name);
    if (storageClass == null) {
      throw new Unresolved("StorageClass " + name + " not found");
    }
    if (storageClass.getAllowedTopologies() == null
        || storageClass.getAllowedTopologies().isEmpty()
        || storageClass.getAllowedTopologies().get(0).getMatchLabelExpressions() == null) {
      return List.of();
    }
    return storageClass.getAllowedTopologies().get(0).getMatchLabelExpressions().stream()
        .map(
            e ->
                new NodeSelectorRequirementBuilder()
                    .withKey(e.getKey())
                    .withOperator("In")
                    .withValues(e.getValues())
                    .build())
        .toList();
  }

  /** A copy of the pod with the requirements added to each term of its required node affinity. */
  static Pod withRequirements(Pod pod, List<NodeSelectorRequirement> requirements) {
    Pod copy = COPIES.clone(pod);
    var spec = copy.getSpec();
    if (spec.getAffinity() == null) {
      spec.setAffinity(new Affinity());
    }
    if (spec.getAffinity().getNodeAffinity() == null) {
      spec.getAffinity().setNodeAffinity(new NodeAffinity());
    }
    NodeAffinity affinity = spec.getAffinity().getNodeAffinity();
    if (affinity.getRequiredDuringSchedulingIgnoredDuringExecution() == null) {
      affinity.setRequiredDuringSchedulingIgnoredDuringExecution(new NodeSelector());
    }
    NodeSelector required = affinity.getRequiredDuringSchedulingIgnoredDuringExecution();
    if (required.getNodeSelectorTerms() == null || required.getNodeSelectorTerms().isEmpty()) {
      required.setNodeSelectorTerms(new ArrayList<>(List.of(new NodeSelectorTerm())));
    }
    for (NodeSelectorTerm term : required.getNodeSelectorTerms()) {
      List<NodeSelectorRequirement> all =
          new ArrayList<>(
              term.getMatchExpressions() == null ? List.of() : term.getMatchExpressions());
      all.addAll(requirements);
      term.setMatchExpressions(all);
    }
    return copy;
  }
}
