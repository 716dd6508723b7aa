package io.warmmetal.cli.pools;

import io.warmmetal.cli.output.Column;
import io.warmmetal.cli.session.GroupCommand;
import io.warmmetal.cli.session.SessionCommand;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code warmmetal pools get|set|delete}: warm-pool targets beside the live counts. */
@Command(
    name = "pools",
    description = "Show or set warm-pool targets.",
    subcommands = {PoolsCommand.Get.class, PoolsCommand.Set.class, PoolsCommand.Delete.class})
public final class PoolsCommand extends GroupCommand {
  static final List<Column> COLUMNS =
      List.of(
          Column.field("SHAPE", "shape"),
          Column.field("MIN-WARM", "minWarm"),
          Column.field("MAX-WARM", "maxWarm"),
          Column.field("WARM", "warm"),
          Column.field("PREPARING", "preparing"),
          Column.field("STANDBY", "standby"),
          Column.field("IN-USE", "inUse"),
          Column.field("PRE-JOINED", "preJoined"),
          Column.field("DEFICIT", "deficit"));

  @Command(
      name = "get",
      aliases = {"ls", "list"},
      description = "Show every pool, or one shape's.")
  static final class Get extends SessionCommand {
    @Parameters(index = "0", arity = "0..1", paramLabel = "SHAPE")
    String shape;

    @Override
    public Integer call() {
      return print(
          shape == null ? api().get("/v1/pools").path("items") : api().get("/v1/pools/" + shape),
          COLUMNS);
    }
  }

  @Command(name = "set", description = "Set a shape's warm-pool target.")
  static final class Set extends SessionCommand {
    @Parameters(index = "0", paramLabel = "SHAPE")
    String shape;

    @Option(
        names = "--min-warm",
        required = true,
        paramLabel = "N",
        description = "keep at least N warm")
    int minWarm;

    @Option(
        names = "--max-warm",
        required = true,
        paramLabel = "N",
        description = "keep at most N warm")
    int maxWarm;

    @Override
    public Integer call() {
      return print(
          api().put("/v1/pools/" + shape, Map.of("minWarm", minWarm, "maxWarm", maxWarm)), COLUMNS);
    }
  }

  @Command(
      name = "delete",
      description = "Remove a shape's target (its machines stay as they are).")
  static final class Delete extends SessionCommand {
    @Parameters(index = "0", paramLabel = "SHAPE")
    String shape;

    @Override
    public Integer call() {
      api().delete("/v1/pools/" + shape);
      session().err().println("pool target for " + shape + " removed");
      return 0;
    }
  }
}
