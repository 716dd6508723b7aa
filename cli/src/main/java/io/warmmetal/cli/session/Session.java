package io.warmmetal.cli.session;

import io.warmmetal.cli.config.ConfigFile;
import io.warmmetal.cli.config.Settings;
import io.warmmetal.cli.http.ApiClient;
import io.warmmetal.cli.output.OutputFormat;
import io.warmmetal.cli.output.Printer;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;

/**
 * One run of the tool: its environment, its output streams and the global flags. Passed in rather
 * than read from {@code System}, so tests run the CLI in-process with their own.
 */
public final class Session {
  /** The root command, which owns the session; subcommands reach it through picocli's spec. */
  public interface Holder {
    Session session();
  }

  private final Map<String, String> env;
  private final PrintWriter out;
  private final PrintWriter err;
  private final InputStream in;
  private final Clock clock;
  private String api;
  private String token;
  private String project;
  private String caFile;
  private OutputFormat output = OutputFormat.TABLE;
  private ApiClient client;

  public Session(
      Map<String, String> env, InputStream in, PrintWriter out, PrintWriter err, Clock clock) {
    this.env = Map.copyOf(env);
    this.in = in;
    this.out = out;
    this.err = err;
    this.clock = clock;
  }

  public Map<String, String> env() {
    return env;
  }

  public InputStream in() {
    return in;
  }

  public PrintWriter out() {
    return out;
  }

  public PrintWriter err() {
    return err;
  }

  public Clock clock() {
    return clock;
  }

  public void api(String value) {
    api = value;
  }

  public void token(String value) {
    token = value;
  }

  public void project(String value) {
    project = value;
  }

  public void caFile(String value) {
    caFile = value;
  }

  public void output(OutputFormat value) {
    output = value;
  }

  public OutputFormat output() {
    return output;
  }

  public Printer printer() {
    return new Printer(out, output);
  }

  public ConfigFile configFile() {
    return ConfigFile.locate(env);
  }

  /**
   * Flags over environment over the config file. A config file holding a token that others may read
   * is refused, as ssh refuses a private key others can read: a secret on a shared machine is not
   * left there without a word.
   */
  public Settings settings() {
    ConfigFile file = configFile();
    String exposed = file.exposedToken();
    if (exposed != null) {
      throw new UsageProblem(
          file.path()
              + " holds a token and others may read it ("
              + exposed
              + "); run `chmod 600 "
              + file.path()
              + "` (and if someone may have read the token, revoke it and set a new one)");
    }
    return Settings.resolve(new Settings.Flags(api, token, project, caFile), env, file.read());
  }

  /** The API client for the resolved settings; a missing API URL is a usage error. */
  public ApiClient client() {
    if (client == null) {
      Settings s = settings();
      if (s.api() == null) {
        throw new UsageProblem(
            "no API URL: give --api, set WARMMETAL_API, or `warmmetal config set api URL`");
      }
      client =
          new ApiClient(
              s.api(), s.token(), s.project(), s.caFile() == null ? null : Path.of(s.caFile()));
    }
    return client;
  }
}
