package io.warmmetal.cli.projects;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.warmmetal.cli.output.Cells;
import io.warmmetal.cli.output.Column;
import io.warmmetal.cli.session.GroupCommand;
import io.warmmetal.cli.session.ListCommand;
import io.warmmetal.cli.session.SessionCommand;
import io.warmmetal.cli.session.UsageProblem;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code warmmetal projects ls|get|set}: projects and their quotas (live instances per shape). */
@Command(
    name = "projects",
    description = "List projects, show one, or create one and set its quotas.",
    subcommands = {ProjectsCommand.Ls.class, ProjectsCommand.Get.class, ProjectsCommand.Set.class})
public final class ProjectsCommand extends GroupCommand {
  static final List<Column> COLUMNS =
      List.of(
          Column.field("NAME", "name"),
          Column.of("QUOTAS (IN-USE/MAX)", p -> quotas(p.get("quotas"))),
          Column.field("CREATED", "createdAt"));

  private static String quotas(JsonNode quotas) {
    if (quotas == null || quotas.isEmpty()) {
      return Cells.NONE;
    }
    StringJoiner j = new StringJoiner(",");
    quotas
        .fields()
        .forEachRemaining(
            e ->
                j.add(
                    e.getKey()
                        + "="
                        + e.getValue().path("inUse").asText()
                        + "/"
                        + e.getValue().path("maxInstances").asText()));
    return j.toString();
  }

  @Command(name = "ls", aliases = "list", description = "List projects (admin).")
  static final class Ls extends ListCommand {
    Ls() {
      super("/v1/projects", COLUMNS);
    }
  }

  @Command(name = "get", description = "Show a project (default: the one configured).")
  static final class Get extends SessionCommand {
    @Parameters(index = "0", arity = "0..1", paramLabel = "PROJECT")
    String name;

    @Override
    public Integer call() {
      String project = name != null ? name : session().settings().project();
      if (project == null) {
        throw new UsageProblem("which project? name it, or set --project / WARMMETAL_PROJECT");
      }
      return print(api().get("/v1/projects/" + project), COLUMNS);
    }
  }

  @Command(
      name = "set",
      description =
          "Create a project, or replace all its quotas: name every one to keep (a shape not named has no limit).")
  static final class Set extends SessionCommand {
    @Parameters(index = "0", paramLabel = "PROJECT")
    String name;

    @Option(
        names = "--quota",
        paramLabel = "SHAPE=N",
        description = "at most N live instances of SHAPE (repeatable)")
    Map<String, Integer> quotas;

    @Override
    public Integer call() {
      ObjectNode body = JsonNodeFactory.instance.objectNode();
      if (quotas != null) {
        ObjectNode q = body.putObject("quotas");
        quotas.forEach((shape, max) -> q.putObject(shape).put("maxInstances", max));
      }
      return print(api().put("/v1/projects/" + name, body), COLUMNS);
    }
  }
}
