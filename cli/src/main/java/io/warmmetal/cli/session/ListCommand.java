package io.warmmetal.cli.session;

import io.warmmetal.cli.output.Column;
import java.util.List;

/** {@code … ls}: an unpaged list ({@code {"items": […]}}) printed with the resource's columns. */
public abstract class ListCommand extends SessionCommand {
  private final String path;
  private final List<Column> columns;

  protected ListCommand(String path, List<Column> columns) {
    this.path = path;
    this.columns = columns;
  }

  @Override
  public Integer call() {
    return print(api().get(path).path("items"), columns);
  }
}
