package io.warmmetal.controller.buffers;

import io.fabric8.kubernetes.api.model.PodTemplateSpec;

/**
 * What a buffer's spec resolved to: the pod template of one chunk, and where it came from — the
 * PodTemplate's name and generation (a {@code podTemplateRef}), or the scalable's replicas (a
 * {@code scalableRef}).
 */
record BufferResolution(
    PodTemplateSpec template,
    String podTemplateName,
    Long podTemplateGeneration,
    Integer scalableReplicas) {

  static BufferResolution ofPodTemplate(PodTemplateSpec template, String name, Long generation) {
    return new BufferResolution(template, name, generation == null ? 0L : generation, null);
  }

  static BufferResolution ofScalable(PodTemplateSpec template, int replicas) {
    return new BufferResolution(template, null, null, replicas);
  }
}
