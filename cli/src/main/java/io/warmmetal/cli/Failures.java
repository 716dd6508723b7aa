package io.warmmetal.cli;

import io.warmmetal.cli.http.ApiException;
import io.warmmetal.cli.http.ApiUnreachable;
import io.warmmetal.cli.http.ErrorHints;
import io.warmmetal.cli.session.ExitCode;
import io.warmmetal.cli.session.UsageProblem;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.ParseResult;

/**
 * Turns what a command threw into one {@code Error:} line, a hint, and the exit code scripts rely
 * on.
 */
final class Failures implements IExecutionExceptionHandler {
  @Override
  public int handleExecutionException(Exception e, CommandLine cmd, ParseResult parsed) {
    PrintWriter err = cmd.getErr();
    int code;
    if (e instanceof ApiException api) {
      err.println("Error: " + api.code() + ": " + api.getMessage());
      if (api.details() != null && !api.details().isEmpty()) {
        err.println("  details: " + api.details());
      }
      String hint = ErrorHints.hint(api);
      if (hint != null) {
        err.println(
            "  hint: " + hint.replace("\n", "\n        ")); // a hint of several lines, aligned
      }
      code = ExitCode.API_ERROR;
    } else if (e instanceof ApiUnreachable) {
      err.println("Error: " + e.getMessage());
      err.println(
          "  hint: is the API running? check --api, WARMMETAL_API or `warmmetal config set api`");
      code = ExitCode.UNREACHABLE;
    } else if (e instanceof UsageProblem || e instanceof IllegalArgumentException) {
      err.println("Error: " + e.getMessage());
      code = ExitCode.USAGE;
    } else {
      err.println("Error: " + e);
      code = ExitCode.API_ERROR;
    }
    err.flush();
    return code;
  }
}
