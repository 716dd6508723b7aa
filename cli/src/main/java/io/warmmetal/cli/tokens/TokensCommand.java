package io.warmmetal.cli.tokens;

import io.warmmetal.cli.output.Cells;
import io.warmmetal.cli.output.Column;
import io.warmmetal.cli.session.GroupCommand;
import io.warmmetal.cli.session.ListCommand;
import io.warmmetal.cli.session.SessionCommand;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code warmmetal tokens ls|create|revoke}: API bearer tokens (admin). */
@Command(
    name = "tokens",
    description = "List, mint and revoke API tokens.",
    subcommands = {TokensCommand.Ls.class, TokensCommand.Create.class, TokensCommand.Revoke.class})
public final class TokensCommand extends GroupCommand {
  static final List<Column> COLUMNS =
      List.of(
          Column.field("ID", "id"),
          Column.field("NAME", "name"),
          Column.field("ROLE", "role"),
          Column.field("PROJECT", "project"),
          Column.wide(
              "MACHINE-LABELS",
              t -> t.has("machineLabels") ? Cells.pairs(t.get("machineLabels")) : Cells.NONE),
          Column.wide("ACCESS-KEY-ID", t -> Cells.text(t.get("accessKeyId"))),
          Column.field("CREATED", "createdAt"),
          Column.of("REVOKED", t -> Cells.text(t.get("revokedAt"))));

  @Command(name = "ls", aliases = "list", description = "List tokens (never their secrets).")
  static final class Ls extends ListCommand {
    Ls() {
      super("/v1/tokens", COLUMNS);
    }
  }

  @Command(
      name = "create",
      description =
          "Mint a token; its secret, and its access key's (every role but boot), are shown this once.")
  static final class Create extends SessionCommand {
    @Parameters(index = "0", paramLabel = "NAME")
    String name;

    @Option(
        names = "--role",
        required = true,
        description = "admin, fleet-reader, client, read-only or boot")
    String role;

    @Option(
        names = "--machine-label",
        paramLabel = "KEY=VALUE",
        description =
            "boot tokens: a label of the machines it boots (repeatable); a boot URL may narrow them, "
                + "never add one")
    Map<String, String> machineLabels;

    @Override
    public Integer call() {
      // The token's project is the one the request acts in: --project / WARMMETAL_PROJECT.
      Map<String, Object> body = new LinkedHashMap<>(Map.of("name", name, "role", role));
      if (machineLabels != null) {
        body.put("machineLabels", machineLabels);
      }
      var token = api().post("/v1/tokens", body);
      List<Column> withSecret = new ArrayList<>(COLUMNS.subList(0, 4));
      // The access key pair signs the EC2-compatible endpoint's requests (AWS SigV4); TOKEN stays
      // last, as scripts read it.
      withSecret.add(Column.field("ACCESS-KEY-ID", "accessKeyId"));
      withSecret.add(Column.field("SECRET-ACCESS-KEY", "secretAccessKey"));
      withSecret.add(Column.field("TOKEN", "token"));
      session().printer().print(token, withSecret);
      session()
          .err()
          .println(
              token.hasNonNull("secretAccessKey")
                  ? "The token and the secret access key are shown only now: store them (the token"
                      + " is kept only hashed, the secret access key only sealed)."
                  : "The token is shown only now: store it (it is kept only hashed).");
      return 0;
    }
  }

  @Command(
      name = "revoke",
      description = "Revoke tokens (idempotent): their tok-… ids, as `tokens ls` shows them.")
  static final class Revoke extends RevokeCommand {
    Revoke() {
      super("/v1/tokens/");
    }
  }
}
