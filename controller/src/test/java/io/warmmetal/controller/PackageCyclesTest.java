package io.warmmetal.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The controller's packages depend on each other without cycles (provisioning and termination least of all). */
class PackageCyclesTest {
  private static final Path SOURCES = Path.of("src", "main", "java", "io", "warmmetal", "controller");
  private static final Pattern USE = Pattern.compile("io\\.warmmetal\\.controller\\.([a-z]+)\\.");

  @Test
  void noPackageDependsOnItselfThroughOthers() throws IOException {
    Map<String, Set<String>> uses = new HashMap<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      files.filter(f -> f.toString().endsWith(".java") && !f.getParent().equals(SOURCES)).forEach(f -> {
        String pkg = SOURCES.relativize(f.getParent()).toString();
        Matcher m = USE.matcher(read(f));
        while (m.find()) {
          if (!m.group(1).equals(pkg)) {
            uses.computeIfAbsent(pkg, k -> new HashSet<>()).add(m.group(1));
          }
        }
      });
    }
    assertThat(uses).containsKeys("provisioning", "termination", "state", "scheduling");
    List<String> cycles = new ArrayList<>();
    for (String pkg : uses.keySet()) {
      if (reaches(uses, pkg, pkg, new HashSet<>())) {
        cycles.add(pkg);
      }
    }
    assertThat(cycles).as("packages on a dependency cycle").isEmpty();
  }

  private static boolean reaches(Map<String, Set<String>> uses, String from, String target, Set<String> seen) {
    for (String next : uses.getOrDefault(from, Set.of())) {
      if (next.equals(target) || (seen.add(next) && reaches(uses, next, target, seen))) {
        return true;
      }
    }
    return false;
  }

  private static String read(Path f) {
    try {
      return Files.readString(f);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
