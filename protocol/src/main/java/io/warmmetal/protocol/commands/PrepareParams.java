package io.warmmetal.protocol.commands;

/**
 * A prepare takes nothing from the API: what a host is prepared with (Kubernetes version, images,
 * disks) is the host's own setting, in the agent's environment.
 */
public record PrepareParams() implements CommandParams {}
