package io.warmmetal.api.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Strings that match a regular expression of the kind the contract uses (anchors, literals,
 * escapes, classes with ranges, groups, and the quantifiers {@code ? * + {n} {n,m}}; no
 * alternation), for generating valid-ish input.
 */
final class Patterns {
  private Patterns() {}

  private interface Node {
    void emit(StringBuilder out, Random random);
  }

  /**
   * A string matching {@code pattern}, or null if the pattern uses something this does not read.
   */
  static String sample(String pattern, Random random) {
    try {
      String p = pattern;
      if (p.startsWith("^")) {
        p = p.substring(1);
      }
      if (p.endsWith("$")) {
        p = p.substring(0, p.length() - 1);
      }
      int[] at = {0};
      List<Node> seq = sequence(p, at);
      StringBuilder out = new StringBuilder();
      seq.forEach(n -> n.emit(out, random));
      String s = out.toString();
      return s.matches(pattern) ? s : null;
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static List<Node> sequence(String p, int[] at) {
    List<Node> seq = new ArrayList<>();
    while (at[0] < p.length() && p.charAt(at[0]) != ')') {
      if (p.charAt(at[0]) == '|') {
        throw new IllegalArgumentException("alternation");
      }
      Node atom = atom(p, at);
      seq.add(quantified(atom, p, at));
    }
    return seq;
  }

  private static Node atom(String p, int[] at) {
    char c = p.charAt(at[0]++);
    switch (c) {
      case '(' -> {
        if (p.startsWith("?:", at[0])) {
          at[0] += 2;
        }
        List<Node> inner = sequence(p, at);
        at[0]++; // ')'
        return (out, r) -> inner.forEach(n -> n.emit(out, r));
      }
      case '[' -> {
        String chars = charClass(p, at);
        return (out, r) -> out.append(chars.charAt(r.nextInt(chars.length())));
      }
      case '\\' -> {
        String chars = escape(p.charAt(at[0]++));
        return (out, r) -> out.append(chars.charAt(r.nextInt(chars.length())));
      }
      case '.' -> {
        return (out, r) -> out.append((char) ('a' + r.nextInt(26)));
      }
      default -> {
        return (out, r) -> out.append(c);
      }
    }
  }

  private static String escape(char c) {
    return switch (c) {
      case 'd' -> "0123456789";
      case 'w' -> "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
      case 's' -> " ";
      default -> String.valueOf(c);
    };
  }

  private static String charClass(String p, int[] at) {
    if (p.charAt(at[0]) == '^') {
      throw new IllegalArgumentException("negated class");
    }
    StringBuilder chars = new StringBuilder();
    while (p.charAt(at[0]) != ']') {
      char c = p.charAt(at[0]++);
      if (c == '\\') {
        chars.append(escape(p.charAt(at[0]++)));
      } else if (p.charAt(at[0]) == '-' && p.charAt(at[0] + 1) != ']') {
        char end = p.charAt(at[0] + 1);
        at[0] += 2;
        for (char x = c; x <= end; x++) {
          chars.append(x);
        }
      } else {
        chars.append(c);
      }
    }
    at[0]++;
    return chars.toString();
  }

  private static Node quantified(Node atom, String p, int[] at) {
    if (at[0] >= p.length()) {
      return atom;
    }
    int min;
    int max;
    char q = p.charAt(at[0]);
    if (q == '?') {
      min = 0;
      max = 1;
    } else if (q == '*') {
      min = 0;
      max = 4;
    } else if (q == '+') {
      min = 1;
      max = 5;
    } else if (q == '{') {
      int close = p.indexOf('}', at[0]);
      String[] bounds = p.substring(at[0] + 1, close).split(",", -1);
      min = Integer.parseInt(bounds[0]);
      max = bounds.length == 1 ? min : bounds[1].isEmpty() ? min + 4 : Integer.parseInt(bounds[1]);
      at[0] = close;
    } else {
      return atom;
    }
    at[0]++;
    int lo = min;
    int hi = Math.min(max, min + 10);
    return (out, r) -> {
      int n = lo + r.nextInt(hi - lo + 1);
      for (int i = 0; i < n; i++) {
        atom.emit(out, r);
      }
    };
  }
}
