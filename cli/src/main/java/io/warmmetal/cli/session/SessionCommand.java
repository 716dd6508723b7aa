package io.warmmetal.cli.session;

import com.fasterxml.jackson.databind.JsonNode;
import io.warmmetal.cli.http.ApiClient;
import io.warmmetal.cli.output.Column;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** A command that runs in the root command's {@link Session}. */
public abstract class SessionCommand implements Callable<Integer> {
  @Spec protected CommandSpec spec;

  protected Session session() {
    return ((Session.Holder) spec.root().userObject()).session();
  }

  protected ApiClient api() {
    return session().client();
  }

  /** Prints an answer (an object or an array of them) in the session's format; exit 0. */
  protected Integer print(JsonNode body, List<Column> columns) {
    session().printer().print(body, columns);
    return ExitCode.OK;
  }
}
