package io.warmmetal.protocol.commands;

/** A reboot takes nothing. */
public record RebootParams() implements CommandParams {}
