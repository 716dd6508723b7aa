package io.warmmetal.cli.docs;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A simple command a shell block runs, with its arguments — among them this project's own ({@link
 * #ours}: the {@code warmmetal} CLI, {@code java -jar} of the API, fleet or agent jar) — found by a
 * small shell lexer: comments, quotes, line continuations, pipes, lists, redirections, {@code $(…)}
 * and {@code <(…)} (searched too), and leading variable assignments. Expansions ({@code $I}, {@code
 * "$(cat f)"}) become {@value #EXPANDED}, a value any option accepts as text or number.
 *
 * @param program the command's file name ({@code warmmetal}, {@code curl}), or for {@code java
 *     -jar} the jar's
 */
public record Invocation(String page, int line, String program, List<String> args) {
  static final String EXPANDED = "1";

  /** The jars whose command lines are checked, by file name. */
  static final Set<String> JARS =
      Set.of(
          "warmmetal-api.jar", "warmmetal-fleet.jar", "warmmetal-agent.jar", "warmmetal-cli.jar");

  private static final Set<String> PREFIXES =
      Set.of("exec", "time", "env", "nohup", "command", "sudo", "!");
  private static final Set<String> KEYWORDS =
      Set.of("do", "then", "else", "elif", "{", "(", "!", "if", "while", "until");
  private static final Map<String, String> ALIASES = Map.of("warmmetal-cli.jar", "warmmetal");

  /** How it reads in the page, for messages. */
  public String where() {
    return page + ":" + line + ": " + program + " " + String.join(" ", args);
  }

  public static List<Invocation> in(ShellBlock block) {
    List<Invocation> found = new ArrayList<>();
    StringBuilder logical = new StringBuilder();
    int start = -1;
    for (int i = 0; i < block.lines().size(); i++) {
      String line = block.lines().get(i);
      if (start < 0) {
        start = block.lineOf(i);
      }
      if (line.endsWith("\\") && !line.strip().startsWith("#")) {
        logical.append(line, 0, line.length() - 1).append(' ');
        continue;
      }
      logical.append(line);
      scan(block.page(), start, logical.toString(), found);
      logical.setLength(0);
      start = -1;
    }
    if (start >= 0) {
      scan(block.page(), start, logical.toString(), found);
    }
    return found;
  }

  /**
   * Splits a command line into simple commands (words between operators) and keeps those of this
   * project.
   */
  static void scan(String page, int line, String text, List<Invocation> found) {
    List<String> words = new ArrayList<>();
    int i = 0;
    int n = text.length();
    while (i <= n) {
      char c = i < n ? text.charAt(i) : ';';
      if (c == ' ' || c == '\t') {
        i++;
      } else if (c == '#') {
        i = n; // a comment: the rest of the line
      } else if (c == ';' || c == '|' || c == '&' || c == ')' || c == '(' || c == '\n') {
        command(page, line, words, found);
        words.clear();
        i++;
      } else if ((c == '<' || c == '>') && i + 1 < n && text.charAt(i + 1) == '(') {
        StringBuilder substituted = new StringBuilder();
        i =
            substitution(
                text,
                i + 1,
                substituted,
                page,
                line,
                found); // <(cmd): an argument naming its output
        words.add(substituted.toString());
      } else if (c == '<' || c == '>') {
        i = skipRedirection(text, i, page, line, found);
      } else {
        StringBuilder word = new StringBuilder();
        i = word(text, i, word, page, line, found);
        if (word.toString().matches("\\d+")
            && i < n
            && (text.charAt(i) == '>' || text.charAt(i) == '<')) {
          continue; // a file descriptor: 2>&1
        }
        words.add(word.toString());
      }
    }
  }

  private static void command(String page, int line, List<String> words, List<Invocation> found) {
    int k = 0;
    while (k < words.size()
        && (KEYWORDS.contains(words.get(k))
            || PREFIXES.contains(words.get(k))
            || words.get(k).matches("[A-Za-z_][A-Za-z0-9_]*=.*"))) {
      k++;
    }
    if (k >= words.size()) {
      return;
    }
    String first = words.get(k);
    String name = first.substring(first.lastIndexOf('/') + 1);
    if (name.equals("java")) {
      for (int j = k + 1; j + 1 < words.size(); j++) {
        if (words.get(j).equals("-jar")) {
          String jar = words.get(j + 1).substring(words.get(j + 1).lastIndexOf('/') + 1);
          found.add(
              new Invocation(
                  page,
                  line,
                  ALIASES.getOrDefault(jar, jar),
                  List.copyOf(words.subList(j + 2, words.size()))));
          return;
        }
      }
    }
    found.add(new Invocation(page, line, name, List.copyOf(words.subList(k + 1, words.size()))));
  }

  /** The CLI or one of this project's jars. */
  public boolean ours() {
    return program.equals("warmmetal") || JARS.contains(program);
  }

  /** {@code >file}, {@code >>file}, {@code 2>&1}, {@code <file}, {@code <<EOF}: skipped whole. */
  private static int skipRedirection(
      String text, int i, String page, int line, List<Invocation> found) {
    int n = text.length();
    while (i < n && (text.charAt(i) == '<' || text.charAt(i) == '>' || text.charAt(i) == '&')) {
      i++;
    }
    while (i < n && (text.charAt(i) == ' ' || text.charAt(i) == '\t')) {
      i++;
    }
    StringBuilder target = new StringBuilder();
    return i < n ? word(text, i, target, page, line, found) : i;
  }

  /** Reads one word from {@code i}; returns the index after it. */
  private static int word(
      String text, int i, StringBuilder word, String page, int line, List<Invocation> found) {
    int n = text.length();
    while (i < n) {
      char c = text.charAt(i);
      if (c == ' ' || c == '\t' || c == ';' || c == '|' || c == '&' || c == '<' || c == '>'
          || c == ')' || c == '(') {
        return i;
      } else if (c == '\\' && i + 1 < n) {
        word.append(text.charAt(i + 1));
        i += 2;
      } else if (c == '\'') {
        int end = text.indexOf('\'', i + 1);
        end = end < 0 ? n : end;
        word.append(text, i + 1, end);
        i = end + 1;
      } else if (c == '"') {
        i++;
        while (i < n && text.charAt(i) != '"') {
          if (text.charAt(i) == '\\' && i + 1 < n) {
            word.append(text.charAt(i + 1));
            i += 2;
          } else if (text.charAt(i) == '$') {
            i = expansion(text, i, word, page, line, found);
          } else {
            word.append(text.charAt(i++));
          }
        }
        i++;
      } else if (c == '$') {
        i = expansion(text, i, word, page, line, found);
      } else if (c == '`') {
        int end = text.indexOf('`', i + 1);
        end = end < 0 ? n : end;
        scan(page, line, text.substring(i + 1, end), found);
        word.append(EXPANDED);
        i = end + 1;
      } else {
        word.append(c);
        i++;
      }
    }
    return i;
  }

  /** {@code $NAME}, {@code ${…}}, {@code $(…)}, {@code $((…))}: {@value #EXPANDED} in the word. */
  private static int expansion(
      String text, int i, StringBuilder word, String page, int line, List<Invocation> found) {
    int n = text.length();
    if (i + 1 < n && text.charAt(i + 1) == '(') {
      return substitution(text, i + 1, word, page, line, found);
    }
    if (i + 1 < n && text.charAt(i + 1) == '{') {
      int end = text.indexOf('}', i);
      word.append(EXPANDED);
      return end < 0 ? n : end + 1;
    }
    int j = i + 1;
    while (j < n && (Character.isLetterOrDigit(text.charAt(j)) || text.charAt(j) == '_')) {
      j++;
    }
    if (j == i + 1 && j < n && "?#@*$!-".indexOf(text.charAt(j)) >= 0) {
      j++;
    }
    if (j == i + 1) {
      word.append('$'); // a lone dollar is itself
      return j;
    }
    word.append(EXPANDED);
    return j;
  }

  /**
   * From the {@code (} at {@code open} to its match: the inside is searched as commands of its own.
   */
  private static int substitution(
      String text, int open, StringBuilder word, String page, int line, List<Invocation> found) {
    int depth = 0;
    int n = text.length();
    int j = open;
    char quote = 0;
    for (; j < n; j++) {
      char c = text.charAt(j);
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        }
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '(') {
        depth++;
      } else if (c == ')' && --depth == 0) {
        break;
      }
    }
    scan(page, line, text.substring(open + 1, Math.min(j, n)), found);
    word.append(EXPANDED);
    return Math.min(j + 1, n);
  }
}
