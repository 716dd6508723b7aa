package io.warmmetal.api.http;

import java.time.Duration;

/**
 * One port's limits against slow and piled-up clients. Every request on a connection has its
 * clocks: its headers within {@code headerTimeout} of its first byte (a new connection's first
 * request: of the connection), its body within {@code bodyTimeout} of its headers; a connection
 * with nothing sent either way for {@code idleTimeout} is closed. At most {@code maxConnections}
 * are open, and at most {@code maxConnectionsPerAddress} from one client address (an IPv6 client:
 * its /64).
 */
public record HttpLimits(
    Duration idleTimeout,
    Duration headerTimeout,
    Duration bodyTimeout,
    int maxConnections,
    int maxConnectionsPerAddress) {}
