package io.warmmetal.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.testing.ApiFixture;
import io.warmmetal.cli.session.ExitCode;
import io.warmmetal.cli.testing.CliFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Tokens, projects, boot and completion: the operator's commands. */
class AdminCommandsTest {
  @RegisterExtension static final CliFixture fx = new CliFixture();

  @Test
  void tokensCreateShowsTheSecretOnceAndItWorks() {
    var created = fx.run("tokens", "create", "ci", "--role", "read-only");
    assertThat(created.code()).as(created.toString()).isZero();
    String[] row = created.out().split("\n")[1].split("\\s+");
    String id = row[0];
    String secret = row[row.length - 1];
    assertThat(created.out().split("\n")[0])
        .containsPattern("ACCESS-KEY-ID\\s+SECRET-ACCESS-KEY\\s+TOKEN$");
    String accessKeyId = row[row.length - 3];
    String secretAccessKey = row[row.length - 2];
    assertThat(accessKeyId).matches("AKWM[A-Z2-7]{16}");
    assertThat(secretAccessKey).matches("[A-Za-z0-9+/]{40}");
    assertThat(created.err()).contains("shown only now", "secret access key");

    Map<String, String> env = fx.env();
    env.put("WARMMETAL_TOKEN", secret);
    assertThat(CliFixture.run(env, "shapes", "ls").code()).isZero();

    var listed = fx.run("tokens", "ls", "-o", "json");
    assertThat(listed.out()).contains(id, accessKeyId).doesNotContain(secret, secretAccessKey);

    assertThat(fx.run("tokens", "revoke", id).out()).contains(id + " revoked");
    assertThat(CliFixture.run(env, "shapes", "ls").code()).isEqualTo(ExitCode.API_ERROR);
  }

  @Test
  void enrollmentTokensCreateAndRevoke() {
    var created = fx.run("enrollment-tokens", "create", "--uses", "3", "--label", "rack=r1");
    assertThat(created.code()).as(created.toString()).isZero();
    String id = created.out().split("\n")[1].split("\\s+")[0];
    assertThat(created.out()).contains("3/3", "rack=r1");
    assertThat(fx.run("enrollment-tokens", "revoke", id).code()).isZero();
    assertThat(fx.run("enrollment-tokens", "ls").out()).containsPattern(id + ".*\\d{4}-");
  }

  @Test
  void projectsSetAndGet() {
    fx.api.registerMachines(1, ApiFixture.facts(8, 32), true);
    var set = fx.run("projects", "set", "team-a", "--quota", "x86-8c-32g=4");
    assertThat(set.code()).as(set.toString()).isZero();
    assertThat(set.out()).contains("team-a", "x86-8c-32g=0/4");

    var get = fx.run("--project", "team-a", "projects", "get");
    assertThat(get.code()).as(get.toString()).isZero();
    assertThat(get.out().split("\n")[0]).startsWith("NAME");
    assertThat(get.out()).contains("x86-8c-32g=0/4");
    assertThat(fx.run("projects", "ls").out()).contains("default", "team-a");
  }

  @Test
  void bootPrintsTheChainUrlAndAMintedTokenFetchesTheScript() throws Exception {
    var placeholder = fx.run("boot", "--label", "rack=r1");
    assertThat(placeholder.code()).isZero();
    assertThat(placeholder.out().trim())
        .isEqualTo(
            "http://boot:<boot token>@127.0.0.1:"
                + fx.api.api.port()
                + "/v1/boot/ipxe?mac=${netX/mac}&uuid=${uuid}&labels=rack%3Dr1");

    var minted = fx.run("boot", "--create-token", "pxe", "--dnsmasq");
    assertThat(minted.code()).as(minted.toString()).isZero();
    String line =
        minted
            .out()
            .lines()
            .filter(l -> l.startsWith("dhcp-boot=tag:ipxe,"))
            .findFirst()
            .orElseThrow();
    assertThat(minted.out()).contains("dhcp-option=tag:ipxe,encap:175,176,1");
    // iPXE fills in the server's identity.
    URI url =
        URI.create(
            line.substring("dhcp-boot=tag:ipxe,".length())
                .replace("${netX/mac}", "52:54:00:00:00:01")
                .replace("${uuid}", "00000000-0000-0000-0000-000000000001"));
    // As iPXE does: the URL's credentials as Basic authentication.
    String basic =
        Base64.getEncoder().encodeToString(url.getUserInfo().getBytes(StandardCharsets.UTF_8));
    var script =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create(
                            "http://127.0.0.1:"
                                + url.getPort()
                                + url.getRawPath()
                                + "?"
                                + url.getRawQuery()))
                    .header("Authorization", "Basic " + basic)
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(script.statusCode()).isEqualTo(200);
    assertThat(script.body()).startsWith("#!ipxe");
  }

  @Test
  void bootBindsLabelsToTheTokenItMintsAndPrintsAnHttpsUrlWhenAsked() throws Exception {
    var minted = fx.run("boot", "--create-token", "rack-2", "--label", "rack=r2");
    assertThat(minted.code()).as(minted.toString()).isZero();
    assertThat(minted.out().trim())
        .doesNotContain("labels=")
        .contains("/v1/boot/ipxe?mac=${netX/mac}&uuid=${uuid}");
    assertThat(minted.err()).contains("machines accept");
    var tokens = fx.run("tokens", "ls", "-o", "wide");
    assertThat(tokens.out()).containsPattern("rack-2\\s+boot\\s+default\\s+rack=r2");
    // A URL label the token does not allow is refused, naming it.
    String secret = minted.out().trim().replaceAll("^http://boot:([^@]+)@.*$", "$1");
    var refused =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create(
                            fx.url() + "/v1/boot/ipxe?mac=52:54:00:00:00:02&labels=rack%3Dr9"))
                    .header("Authorization", "Bearer " + secret)
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(refused.statusCode()).isEqualTo(403);
    assertThat(refused.body()).contains("rack=r9");

    var https = fx.run("boot", "--https-port", "8444");
    assertThat(https.out().trim())
        .isEqualTo(
            "https://boot:<boot token>@127.0.0.1:8444/v1/boot/ipxe?mac=${netX/mac}"
                + "&uuid=${uuid}");
    assertThat(https.err()).contains("TRUST=");

    var created =
        fx.run("tokens", "create", "rack-3", "--role", "boot", "--machine-label", "zone=z3");
    assertThat(created.code()).as(created.toString()).isZero();
    // A boot token travels in clear: it gets no access key.
    assertThat(created.out())
        .containsPattern("rack-3\\s+boot\\s+default\\s+<none>\\s+<none>\\s+wm_");
    assertThat(
            fx.run("tokens", "create", "c", "--role", "client", "--machine-label", "zone=z3")
                .code())
        .isEqualTo(ExitCode.API_ERROR);
  }

  @Test
  void hardwareRecordsAndAcceptingOrRejectingNewMachines() {
    var added =
        fx.run(
            "hardware",
            "add",
            "52-54-00-AA-00-01",
            "--uuid",
            "4c4c4544-0042-3510-8052-b4c04f4e5931",
            "--label",
            "unit=u7");
    assertThat(added.code()).as(added.toString()).isZero();
    assertThat(added.out())
        .contains("52:54:00:aa:00:01", "4c4c4544-0042-3510-8052-b4c04f4e5931", "unit=u7");
    assertThat(fx.run("hardware", "ls").out()).contains("52:54:00:aa:00:01");
    assertThat(fx.run("hardware", "get", "4c4c4544-0042-3510-8052-b4c04f4e5931").out())
        .contains("unit=u7");
    assertThat(fx.run("hardware", "delete", "52:54:00:aa:00:01").out()).contains("deleted");
    var missing = fx.run("hardware", "get", "52:54:00:aa:00:01");
    assertThat(missing.code()).isEqualTo(ExitCode.API_ERROR);
    assertThat(missing.err()).contains("no hardware record");

    // Two machines waiting as new hardware (set up in the database: how one gets there is the API's
    // tests' part).
    var ids = fx.api.registerMachines(2, ApiFixture.facts(4, 8), false);
    for (String id : ids) {
      fx.api
          .db()
          .preparedQuery("UPDATE machines SET state = 'new', admitted = false WHERE id = $1")
          .execute(Tuple.of(id))
          .await();
    }
    var waiting = fx.run("machines", "ls", "--state", "new", "-o", "wide");
    assertThat(waiting.out()).contains(ids.get(0), ids.get(1)).contains("false");
    var accepted = fx.run("machines", "accept", ids.get(0));
    assertThat(accepted.code()).as(accepted.toString()).isZero();
    assertThat(accepted.out()).contains(ids.get(0), "standby");
    var rejected = fx.run("machines", "reject", ids.get(1));
    assertThat(rejected.code()).as(rejected.toString()).isZero();
    assertThat(rejected.out()).contains(ids.get(1), "retired");
    assertThat(fx.run("machines", "reject", ids.get(0)).code()).isEqualTo(ExitCode.API_ERROR);
  }

  @Test
  void completionPrintsABashScript() {
    var run = fx.run("completion", "bash");
    assertThat(run.code()).isZero();
    assertThat(run.out())
        .startsWith("#!/usr/bin/env bash")
        .contains("complete -F", "enrollment-tokens", "launch");
    assertThat(fx.run("completion", "fish").code()).isEqualTo(ExitCode.USAGE);
  }
}
