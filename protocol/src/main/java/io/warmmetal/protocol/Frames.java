package io.warmmetal.protocol;

/**
 * The agent channel: one WebSocket ({@code GET /v1/channel} on the agent port, mutual TLS), JSON text frames with a
 * {@code type}.
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
 * Commands come in seq order and are redelivered after a reconnect until their result is acknowledged; the agent
 * runs each command id at most once and resends results it has not seen acknowledged.
 */
public final class Frames {
  public static final String PATH = "/v1/channel";

  public static final String HELLO = "hello";
  public static final String HEARTBEAT = "heartbeat";
  public static final String PROGRESS = "progress";
  public static final String RESULT = "result";
  public static final String WELCOME = "welcome";
  public static final String COMMAND = "command";
  public static final String ACK = "ack";

  /** Close codes: the agent's certificate is not (or no longer) the machine's; a frame broke the protocol. */
  public static final short CLOSE_REFUSED = 4403;
  public static final short CLOSE_PROTOCOL = 4400;
  public static final short CLOSE_REPLACED = 4409;

  private Frames() {}
}
