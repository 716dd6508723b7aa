package io.warmmetal.controller.cloudprovider;

import java.time.Duration;

/**
 * A Node condition the cloud provider calls unhealthy, as upstream's {@code
 * cloudprovider.RepairPolicy}: a Node showing {@code conditionType} at {@code conditionStatus} for
 * {@code tolerationDuration} (from the condition's {@code lastTransitionTime}) has its NodeClaim
 * deleted forcefully, when the {@code NodeRepair} feature gate is on.
 *
 * @param conditionType the Node condition's type ({@code Ready})
 * @param conditionStatus the status that is unhealthy ({@code False}, {@code Unknown})
 * @param tolerationDuration how long the Node may show it before it is repaired
 */
public record RepairPolicy(
    String conditionType, String conditionStatus, Duration tolerationDuration) {}
