package io.warmmetal.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.protocol.channel.Ack;
import io.warmmetal.protocol.channel.Command;
import io.warmmetal.protocol.channel.Frame;
import io.warmmetal.protocol.channel.Heartbeat;
import io.warmmetal.protocol.channel.Hello;
import io.warmmetal.protocol.channel.Progress;
import io.warmmetal.protocol.channel.Result;
import io.warmmetal.protocol.channel.Welcome;
import io.warmmetal.protocol.commands.CommandKind;
import io.warmmetal.protocol.commands.CommandParams;
import io.warmmetal.protocol.commands.JoinParams;
import io.warmmetal.protocol.commands.KubeletSettings;
import io.warmmetal.protocol.commands.KubernetesJoin;
import io.warmmetal.protocol.commands.Taint;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The protocol is written down three times — the contracts' schemas (agent-api.yaml, and
 * openapi.yaml for a launch's join), the records in {@code protocol/}, and what the shipped join
 * script reads — and they must say the same: every field in each is in the others, whichever side
 * gained or lost one.
 */
class ProtocolContractTest {
  private static final Path ROOT = Path.of("..");

  private static final JoinParams JOIN =
      new JoinParams(
          "warmmetal://m-1",
          "x86-16c-64g",
          Map.of("topology.kubernetes.io/zone", "rack-1"),
          new KubernetesJoin(
              "10.0.0.1:6443",
              "sha256:ab",
              "abcdef.0123456789abcdef",
              Map.of("team", "ml"),
              List.of(new Taint("gpu", "yes", "NoSchedule")),
              "v1.20.2",
              new KubeletSettings(58, Map.of("cpu", "100m"), Map.of("memory", "512Mi"))),
          "IyEvYmluL3NoCg==");

  @Test
  void theJoinScriptReadsExactlyWhatTheRecordsAndTheContractsDefine() throws IOException {
    String script = shippedJoinScript();
    Map<String, Object> agentSchemas = schemas("agent-api.yaml");
    Map<String, Object> publicSchemas = schemas("openapi.yaml");

    // The script names the parameters p, the join k and a taint t (join.sh says so where it reads
    // them).
    agree(JoinParams.class, properties(agentSchemas, "JoinParams"), keysRead(script, "p"));
    agree(KubernetesJoin.class, properties(publicSchemas, "KubernetesJoin"), keysRead(script, "k"));
    agree(Taint.class, properties(publicSchemas, "Taint"), keysRead(script, "t"));
    agree(
        KubeletSettings.class,
        properties(publicSchemas, "KubeletSettings"),
        keysRead(script, "kl"));
    // And the records write what they declare (no key spelled otherwise on the wire).
    assertThat(JOIN.toJson().fieldNames())
        .containsExactlyInAnyOrderElementsOf(components(JoinParams.class));
    assertThat(JOIN.kubernetes().toJson().fieldNames())
        .containsExactlyInAnyOrderElementsOf(components(KubernetesJoin.class));
    assertThat(JOIN.kubernetes().taints().get(0).toJson().fieldNames())
        .containsExactlyInAnyOrderElementsOf(components(Taint.class));
    assertThat(JOIN.kubernetes().kubelet().toJson().fieldNames())
        .containsExactlyInAnyOrderElementsOf(components(KubeletSettings.class));
    assertThat(KubeletSettings.RESERVABLE)
        .as("the resources a reservation names, in the record and the contract")
        .containsExactlyInAnyOrderElementsOf(
            properties(publicSchemas, "ReservedResources").keySet());
  }

  @Test
  void everyFrameIsTheRecordTheAgentContractDescribes() throws IOException {
    Map<String, Object> schemas = schemas("agent-api.yaml");
    List<Frame> frames =
        List.of(
            new Hello(3),
            new Heartbeat(),
            new Progress("cmd-1", "kubeadm-join", "started"),
            Result.failed("cmd-1", "exited 1"),
            new Welcome("m-1", 10),
            new Command("cmd-1", 4, CommandKind.JOIN, "i-1", JOIN),
            new Ack("cmd-1"));
    for (Frame frame : frames) {
      String name = frame.getClass().getSimpleName();
      Map<String, Object> properties = properties(schemas, name);
      assertThat(((Map<?, ?>) properties.get("type")).get("const"))
          .as(name)
          .isEqualTo(frame.type());
      Set<String> fields = new TreeSet<>(properties.keySet());
      fields.remove("type");
      assertThat(components(frame.getClass()))
          .as("%s: the record's components and the schema's properties", name)
          .containsExactlyInAnyOrderElementsOf(fields);
      assertThat(frame.toJson().fieldNames())
          .as("%s as written", name)
          .containsExactlyInAnyOrderElementsOf(properties.keySet());
      assertThat(Frame.parse(frame.encode())).as("%s read back", name).isEqualTo(frame);
    }
    assertThat(frames)
        .extracting(f -> f.getClass().getSimpleName())
        .containsExactlyInAnyOrderElementsOf(
            Arrays.stream(Frame.class.getPermittedSubclasses()).map(Class::getSimpleName).toList());
  }

  @Test
  void everyKindsParametersAreTheRecordTheAgentContractDescribes() throws IOException {
    Map<String, Object> schemas = schemas("agent-api.yaml");
    for (CommandKind kind : CommandKind.values()) {
      String name = kind.paramsType().getSimpleName();
      assertThat(components(kind.paramsType()))
          .as(name)
          .containsExactlyInAnyOrderElementsOf(properties(schemas, name).keySet());
      if (kind != CommandKind.JOIN) { // (the join's are checked with its script)
        assertThat(CommandParams.none(kind).toJson().fieldNames())
            .as(name + " as written")
            .containsExactlyInAnyOrderElementsOf(components(kind.paramsType()));
      }
    }
    assertThat(enumOf(schemas, "Command", "kind"))
        .containsExactlyInAnyOrderElementsOf(
            Arrays.stream(CommandKind.values()).map(CommandKind::wire).toList());
  }

  /**
   * The three sets are one: the schema's properties, the record's components, the keys the script
   * reads.
   */
  private static void agree(
      Class<? extends Record> record, Map<String, Object> schema, Set<String> read) {
    String name = record.getSimpleName();
    assertThat(components(record))
        .as("%s: the record's components and the contract's properties", name)
        .containsExactlyInAnyOrderElementsOf(schema.keySet());
    assertThat(read)
        .as("%s: what join.sh reads and the record's components", name)
        .containsExactlyInAnyOrderElementsOf(components(record));
  }

  private static List<String> components(Class<?> record) {
    return Arrays.stream(record.getRecordComponents()).map(c -> c.getName()).toList();
  }

  /**
   * The keys read from the Python dict named {@code var}: {@code var["k"]}, {@code var.get("k"…)},
   * {@code "k" in var}.
   */
  static Set<String> keysRead(String script, String var) {
    Set<String> keys = new TreeSet<>();
    Matcher m =
        Pattern.compile(
                "\\b"
                    + var
                    + "(?:\\[|\\.get\\()\\s*[\"'](\\w+)[\"']|[\"'](\\w+)[\"']\\s+in\\s+"
                    + var
                    + "\\b")
            .matcher(script);
    while (m.find()) {
      keys.add(m.group(1) != null ? m.group(1) : m.group(2));
    }
    return keys;
  }

  private static String shippedJoinScript() throws IOException {
    try (InputStream in = ProtocolContractTest.class.getResourceAsStream("/scripts/join.sh")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> schemas(String contract) throws IOException {
    Map<String, Object> doc =
        (Map<String, Object>)
            new Load(LoadSettings.builder().build())
                .loadFromString(Files.readString(ROOT.resolve(contract)));
    return (Map<String, Object>) ((Map<String, Object>) doc.get("components")).get("schemas");
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> properties(Map<String, Object> schemas, String name) {
    Map<String, Object> schema = (Map<String, Object>) schemas.get(name);
    assertThat(schema).as("the schema " + name).isNotNull();
    return (Map<String, Object>) schema.get("properties");
  }

  @SuppressWarnings("unchecked")
  private static List<String> enumOf(Map<String, Object> schemas, String name, String property) {
    return (List<String>)
        ((Map<String, Object>) properties(schemas, name).get(property)).get("enum");
  }
}
