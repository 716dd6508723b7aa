package io.warmmetal.controller.buffers;

import io.fabric8.kubernetes.api.model.PodTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's CapacityBuffers and PodTemplates, informed — both listed before the first pass, so
 * no pass after a restart plans without the buffers (it would consolidate their room away). An API
 * server that does not serve the CapacityBuffer CRD has no buffers: none are watched until the
 * controller starts again.
 */
public final class BufferInformers implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BufferInformers.class);

  private final SharedIndexInformer<CapacityBuffer> buffers;
  private final SharedIndexInformer<PodTemplate> templates;

  private BufferInformers(
      SharedIndexInformer<CapacityBuffer> buffers, SharedIndexInformer<PodTemplate> templates) {
    this.buffers = buffers;
    this.templates = templates;
  }

  @SuppressWarnings("unchecked")
  public static BufferInformers inform(KubernetesClient kube, ResourceEventHandler<?> handler) {
    SharedIndexInformer<CapacityBuffer> buffers = null;
    if (kube.supports(CapacityBuffer.class)) {
      buffers =
          kube.resources(CapacityBuffer.class)
              .inAnyNamespace()
              .inform((ResourceEventHandler<CapacityBuffer>) handler);
    } else {
      LOG.info(
          "The API server serves no CapacityBuffers (autoscaling.x-k8s.io/v1beta1): apply"
              + " deploy/crds/autoscaling.x-k8s.io_capacitybuffers.yaml and restart the controller"
              + " to use them");
    }
    return new BufferInformers(
        buffers,
        kube.v1()
            .podTemplates()
            .inAnyNamespace()
            .inform((ResourceEventHandler<PodTemplate>) handler));
  }

  public List<CapacityBuffer> buffers() {
    return buffers == null ? List.of() : buffers.getStore().list();
  }

  /** The PodTemplate of that namespace and name, as last seen; null if there is none. */
  public PodTemplate template(String namespace, String name) {
    return templates.getStore().getByKey(namespace + "/" + name);
  }

  @Override
  public void close() {
    if (buffers != null) {
      buffers.close();
    }
    templates.close();
  }
}
