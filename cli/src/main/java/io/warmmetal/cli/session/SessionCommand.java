package io.warmmetal.cli.session;

import io.warmmetal.cli.http.ApiClient;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** A command that runs in the root command's {@link Session}. */
public abstract class SessionCommand implements Callable<Integer> {
  @Spec
  protected CommandSpec spec;

  protected Session session() {
    return ((Session.Holder) spec.root().userObject()).session();
  }

  protected ApiClient api() {
    return session().client();
  }
}
