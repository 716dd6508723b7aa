package io.warmmetal.protocol.channel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.json.JsonObject;
import io.warmmetal.protocol.MalformedFrame;
import io.warmmetal.protocol.commands.CommandKind;
import io.warmmetal.protocol.commands.JoinParams;
import io.warmmetal.protocol.commands.PrepareParams;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a peer may send is read into its record, or refused naming what is wrong. */
class FrameTest {

  @Test
  void aCommandIsReadWithTheParametersOfItsKind() {
    Frame frame =
        Frame.parse(
            """
        {"type": "command", "id": "cmd-1", "seq": 7, "kind": "join", "instanceId": "i-1",
         "params": {"providerId": "warmmetal://m-1", "shape": "x86-16c-64g", "userData": "IyEvYmluL3NoCg==",
                    "machineLabels": {"topology.kubernetes.io/zone": "rack-1"}}}""");
    assertThat(frame)
        .isEqualTo(
            new Command(
                "cmd-1",
                7,
                CommandKind.JOIN,
                "i-1",
                new JoinParams(
                    "warmmetal://m-1",
                    "x86-16c-64g",
                    Map.of("topology.kubernetes.io/zone", "rack-1"),
                    null,
                    "IyEvYmluL3NoCg==")));
    assertThat(frame.toString()).doesNotContain("IyEvYmluL3NoCg=="); // secrets stay out of logs
    assertThat(
            Frame.parse(
                "{\"type\": \"command\", \"id\": \"cmd-2\", \"seq\": 8, \"kind\": \"prepare\"}"))
        .isEqualTo(new Command("cmd-2", 8, CommandKind.PREPARE, null, new PrepareParams()));
  }

  @Test
  void aFrameThatBreaksTheProtocolIsRefusedNamingWhy() {
    assertThatThrownBy(() -> Frame.parse("{not json")).isInstanceOf(MalformedFrame.class);
    assertThatThrownBy(() -> Frame.parse("{\"type\": \"gossip\"}"))
        .hasMessageContaining("unknown frame type");
    assertThatThrownBy(() -> Frame.parse("{\"type\": \"hello\", \"lastSeq\": \"many\"}"))
        .hasMessage("lastSeq must be a number");
    assertThatThrownBy(
            () -> Frame.parse("{\"type\": \"result\", \"commandId\": \"c\", \"status\": \"done\"}"))
        .hasMessageContaining("succeeded or failed");
    assertThatThrownBy(() -> Frame.parse("{\"type\": \"progress\", \"commandId\": \"c\"}"))
        .hasMessage("step is required");
    assertThatThrownBy(
            () ->
                Frame.parse(
                    new JsonObject()
                        .put("type", "command")
                        .put("id", "c")
                        .put("seq", 1)
                        .put("kind", "format")
                        .encode()))
        .hasMessage("unknown command kind 'format'");
    assertThatThrownBy(
            () ->
                Frame.parse(
                    new JsonObject()
                        .put("type", "command")
                        .put("id", "c")
                        .put("seq", 1)
                        .put("kind", "join")
                        .put("params", new JsonObject().put("shape", "s"))
                        .encode()))
        .hasMessage("providerId is required");
    assertThatThrownBy(() -> new Command("c", 1, CommandKind.JOIN, "i-1", new PrepareParams()))
        .isInstanceOf(MalformedFrame.class);
  }
}
