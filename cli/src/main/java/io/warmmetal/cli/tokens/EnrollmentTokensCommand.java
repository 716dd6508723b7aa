package io.warmmetal.cli.tokens;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warmmetal.cli.output.Cells;
import io.warmmetal.cli.output.Column;
import io.warmmetal.cli.session.GroupCommand;
import io.warmmetal.cli.session.ListCommand;
import io.warmmetal.cli.session.SessionCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code warmmetal enrollment-tokens ls|create|revoke}: the tokens agents enroll with (admin). */
@Command(
    name = "enrollment-tokens",
    description = "List, mint and revoke the tokens agents enroll with.",
    subcommands = {
      EnrollmentTokensCommand.Ls.class,
      EnrollmentTokensCommand.Create.class,
      EnrollmentTokensCommand.Revoke.class
    })
public final class EnrollmentTokensCommand extends GroupCommand {
  static final List<Column> COLUMNS =
      List.of(
          Column.field("ID", "id"),
          Column.of("USES-LEFT", t -> t.path("usesLeft").asText() + "/" + t.path("uses").asText()),
          Column.field("EXPIRES", "expiresAt"),
          Column.of("LABELS", t -> Cells.pairs(t.get("labels"))),
          Column.of("REENROLL", t -> t.path("allowReenroll").asText("false")),
          Column.of("REVOKED", t -> Cells.text(t.get("revokedAt"))));

  @Command(
      name = "ls",
      aliases = "list",
      description = "List enrollment tokens (never their secrets).")
  static final class Ls extends ListCommand {
    Ls() {
      super("/v1/enrollment-tokens", COLUMNS);
    }
  }

  @Command(
      name = "create",
      description = "Mint an enrollment token; its secret is shown this once.")
  static final class Create extends SessionCommand {
    @Option(
        names = "--uses",
        defaultValue = "1",
        description = "how many machines may enroll with it (default 1)")
    int uses;

    @Option(
        names = "--expires-in",
        defaultValue = "3600",
        paramLabel = "SECONDS",
        description = "default 3600")
    int expiresIn;

    @Option(
        names = "--label",
        paramLabel = "KEY=VALUE",
        description = "a label for machines it enrolls (repeatable)")
    Map<String, String> labels;

    @Option(
        names = "--allow-reenroll",
        description = "hardware already enrolled may take its machine back")
    boolean allowReenroll;

    @Override
    public Integer call() {
      ObjectNode body =
          JsonNodeFactory.instance
              .objectNode()
              .put("uses", uses)
              .put("expiresInSeconds", expiresIn)
              .put("allowReenroll", allowReenroll);
      if (labels != null) {
        labels.forEach(body.putObject("labels")::put);
      }
      List<Column> withSecret = new ArrayList<>(COLUMNS.subList(0, 4));
      withSecret.add(Column.field("TOKEN", "token"));
      session().printer().print(api().post("/v1/enrollment-tokens", body), withSecret);
      session().err().println("The token is shown only now: store it (it is kept only hashed).");
      return 0;
    }
  }

  @Command(name = "revoke", description = "Revoke enrollment tokens (idempotent): their et-… ids.")
  static final class Revoke extends RevokeCommand {
    Revoke() {
      super("/v1/enrollment-tokens/");
    }
  }
}
