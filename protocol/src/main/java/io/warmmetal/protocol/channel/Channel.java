package io.warmmetal.protocol.channel;

/**
 * The agent channel: one WebSocket ({@code GET /v1/channel} on the agent port, mutual TLS) carrying
 * JSON text frames, each with a {@code type} ({@link Frame}; their schemas are in agent-api.yaml).
 *
 * <pre>
 * agent → API  hello      {lastSeq}             first frame: the highest command seq the agent has taken
 *              heartbeat  {}                    every heartbeat interval
 *              progress   {commandId, step, message}
 *              result     {commandId, status: succeeded|failed, message}
 * API → agent  welcome    {machineId, heartbeatSeconds}
 *              command    {id, seq, kind: prepare|join|reset|reboot, instanceId, params}
 *              ack        {commandId}           a result is recorded: the agent may forget it
 * </pre>
 *
 * Commands come in seq order and are redelivered after a reconnect until their result is
 * acknowledged; the agent runs each command id at most once and resends results it has not seen
 * acknowledged.
 */
public final class Channel {
  public static final String PATH = "/v1/channel";

  /**
   * Close codes: the agent's certificate is not (or no longer) the machine's; a frame broke the
   * protocol.
   */
  public static final short CLOSE_REFUSED = 4403;

  public static final short CLOSE_PROTOCOL = 4400;
  public static final short CLOSE_REPLACED = 4409;

  private Channel() {}
}
