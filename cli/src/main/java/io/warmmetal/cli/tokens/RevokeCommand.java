package io.warmmetal.cli.tokens;

import io.warmmetal.cli.session.SessionCommand;
import java.util.List;
import picocli.CommandLine.Parameters;

/** Revokes tokens by id: {@code DELETE <collection>/<id>} for each, idempotent. */
abstract class RevokeCommand extends SessionCommand {
  private final String collection;

  @Parameters(paramLabel = "TOKEN-ID", arity = "1..*")
  List<String> ids;

  RevokeCommand(String collection) {
    this.collection = collection;
  }

  @Override
  public Integer call() {
    for (String id : ids) {
      api().delete(collection + id);
      session().out().println(id + " revoked");
    }
    return 0;
  }
}
