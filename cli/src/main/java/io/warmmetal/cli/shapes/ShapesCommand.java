package io.warmmetal.cli.shapes;

import com.fasterxml.jackson.databind.JsonNode;
import io.warmmetal.cli.output.Cells;
import io.warmmetal.cli.output.Column;
import io.warmmetal.cli.session.GroupCommand;
import io.warmmetal.cli.session.ListCommand;
import io.warmmetal.cli.session.SessionCommand;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code warmmetal shapes ls|get}: hardware shapes and how many machines each has, by state. */
@Command(
    name = "shapes",
    description = "List hardware shapes and their machines by state.",
    subcommands = {ShapesCommand.Ls.class, ShapesCommand.Get.class})
public final class ShapesCommand extends GroupCommand {
  static final List<Column> COLUMNS =
      List.of(
          Column.field("NAME", "name"),
          Column.field("ALIAS", "alias"),
          Column.field("ARCH", "arch"),
          Column.field("CPUS", "cpus"),
          Column.field("MEMORY-GIB", "memoryGiB"),
          Column.of("GPUS", s -> gpus(s)),
          Column.of("WARM", s -> s.path("counts").path("warm").asText("0")),
          Column.field("TOTAL", "total"),
          Column.of(
              "QUOTA",
              s ->
                  s.has("quota")
                      ? s.get("quota").path("inUse").asText()
                          + "/"
                          + s.get("quota").path("maxInstances").asText()
                      : Cells.NONE),
          Column.wide("COUNTS", s -> Cells.pairs(s.get("counts"))),
          Column.wide("DISK-GIB", s -> Cells.text(s.get("diskGiB"))),
          Column.wide("PRICE/H", s -> Cells.text(s.get("pricePerHour"))));

  private static String gpus(JsonNode shape) {
    StringBuilder b = new StringBuilder();
    shape
        .path("gpus")
        .forEach(
            g ->
                b.append(b.length() == 0 ? "" : ",")
                    .append(g.path("count").asText())
                    .append("x")
                    .append(g.path("model").asText()));
    return b.length() == 0 ? Cells.NONE : b.toString();
  }

  @Command(name = "ls", aliases = "list", description = "List the shapes.")
  static final class Ls extends ListCommand {
    Ls() {
      super("/v1/shapes", COLUMNS);
    }
  }

  @Command(name = "get", description = "Show one shape.")
  static final class Get extends SessionCommand {
    @Parameters(index = "0", paramLabel = "SHAPE", description = "a shape name or alias")
    String shape;

    @Override
    public Integer call() {
      return print(api().get("/v1/shapes/" + shape), COLUMNS);
    }
  }
}
