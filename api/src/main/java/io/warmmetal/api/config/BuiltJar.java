package io.warmmetal.api.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A jar another module of this build makes (the agent, the fleet simulator), found where a checkout
 * leaves it: so {@code java -jar api/target/warmmetal-api.jar} finds {@code
 * agent/target/warmmetal-agent.jar} without a setting.
 */
public final class BuiltJar {
  private BuiltJar() {}

  /**
   * The configured jar if it is a file (else empty); otherwise {@code <module>/target/<jar>} beside
   * the API jar's module, under the working directory or under its parent. Blocking (file lookups).
   */
  public static Optional<Path> locate(Optional<Path> configured, String module, String jar) {
    if (configured.isPresent()) {
      return configured.filter(Files::isRegularFile);
    }
    String built = module + "/target/" + jar;
    List<Path> candidates = new ArrayList<>();
    try {
      Path code =
          Path.of(BuiltJar.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      candidates.add(code.getParent().resolve("../../" + built));
    } catch (Exception unknown) {
      // no code source to look beside
    }
    candidates.add(Path.of(built));
    candidates.add(Path.of("../" + built));
    return candidates.stream()
        .map(p -> p.toAbsolutePath().normalize())
        .filter(Files::isRegularFile)
        .findFirst();
  }
}
