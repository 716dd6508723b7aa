package io.warmmetal.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.warmmetal.cli.config.Settings;
import io.warmmetal.cli.testing.CliFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The config file, and flags over environment over file. No API needed. */
class ConfigTest {
  @TempDir
  Path dir;

  @Test
  void configSetWritesAPrivateFileAndViewNeverShowsTheToken() throws Exception {
    Map<String, String> env = Map.of("HOME", dir.toString());
    assertThat(CliFixture.run(env, "config", "set", "api", "http://127.0.0.1:1").code()).isZero();
    assertThat(CliFixture.run(env, "config", "set", "token", "s3cret-token-value").code()).isZero();
    assertThat(CliFixture.run(env, "config", "set", "colour", "blue").code()).isEqualTo(2);

    Path file = dir.resolve(".config/warmmetal/config.yaml");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
    assertThat(Files.readString(file)).contains("api: \"http://127.0.0.1:1\"", "token:");

    var view = CliFixture.run(env, "config", "view");
    assertThat(view.out()).contains("api:     http://127.0.0.1:1", "token:   (set)").doesNotContain("s3cret");
    // The file is used: the API it names is unreachable, so exit 3 (not 2, "no API URL").
    assertThat(CliFixture.run(env, "shapes", "ls").code()).isEqualTo(3);
  }

  @Test
  void flagsBeatEnvironmentBeatFile() {
    Map<String, String> file = Map.of("api", "http://file", "token", "file-token", "project", "file-p");
    Map<String, String> env = Map.of("WARMMETAL_API", "http://env", "WARMMETAL_PROJECT", "env-p");
    Settings s = Settings.resolve(new Settings.Flags(null, null, "flag-p", null), env, file);
    assertThat(s.api()).isEqualTo("http://env");
    assertThat(s.token()).isEqualTo("file-token");
    assertThat(s.project()).isEqualTo("flag-p");
    assertThat(s.toString()).doesNotContain("file-token");
  }
}
