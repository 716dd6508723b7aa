package io.warmmetal.protocol.commands;

/**
 * A reset takes nothing from the API: its wipe policy and data disks are the host's own settings.
 */
public record ResetParams() implements CommandParams {}
