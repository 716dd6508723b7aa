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
  @TempDir Path dir;

  @Test
  void configSetWritesAPrivateFileAndViewNeverShowsTheToken() throws Exception {
    Map<String, String> env = Map.of("HOME", dir.toString());
    assertThat(CliFixture.run(env, "config", "set", "api", "http://127.0.0.1:1").code()).isZero();
    assertThat(CliFixture.run(env, "config", "set", "token", "s3cret-token-value").code()).isZero();
    assertThat(CliFixture.run(env, "config", "set", "colour", "blue").code()).isEqualTo(2);

    Path file = dir.resolve(".config/warmmetal/config.yaml");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
    assertThat(Files.readString(file)).contains("api: \"http://127.0.0.1:1\"", "token:");

    var view = CliFixture.run(env, "config", "view");
    assertThat(view.out())
        .contains("api:     http://127.0.0.1:1", "token:   (set)")
        .doesNotContain("s3cret");
    // The file is used: the API it names is unreachable, so exit 3 (not 2, "no API URL").
    assertThat(CliFixture.run(env, "shapes", "ls").code()).isEqualTo(3);
  }

  @Test
  void aConfigFileOthersMayReadIsRefusedWhileItHoldsAToken() throws Exception {
    Map<String, String> env = Map.of("HOME", dir.toString());
    Path file = dir.resolve(".config/warmmetal/config.yaml");
    assertThat(CliFixture.run(env, "config", "set", "api", "http://127.0.0.1:1").code()).isZero();
    // No token in it: nothing secret, so a readable file is fine (exit 3: the API it names is
    // unreachable).
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    assertThat(CliFixture.run(env, "shapes", "ls").code()).isEqualTo(3);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    assertThat(CliFixture.run(env, "config", "set", "token", "s3cret-token-value").code()).isZero();

    for (String mode : new String[] {"rw-r--r--", "rw-r-----", "rw----rw-"}) {
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
      for (String[] command :
          new String[][] {{"shapes", "ls"}, {"config", "view"}, {"--token", "t", "shapes", "ls"}}) {
        var refused = CliFixture.run(env, command);
        assertThat(refused.code()).as(mode + " " + String.join(" ", command)).isEqualTo(2);
        assertThat(refused.err())
            .contains(file.toString(), "(" + mode + ")", "chmod 600 " + file)
            .doesNotContain("s3cret");
        assertThat(refused.out()).isEmpty();
      }
    }

    // `config set` writes it 0600 again, and says the token it held was exposed.
    var set = CliFixture.run(env, "config", "set", "project", "team-a");
    assertThat(set.code()).isZero();
    assertThat(set.err()).contains("was rw----rw- with a token in it", "revoke it");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
    assertThat(CliFixture.run(env, "shapes", "ls").code()).isEqualTo(3);
  }

  @Test
  void flagsBeatEnvironmentBeatFile() {
    Map<String, String> file =
        Map.of("api", "http://file", "token", "file-token", "project", "file-p");
    Map<String, String> env = Map.of("WARMMETAL_API", "http://env", "WARMMETAL_PROJECT", "env-p");
    Settings s = Settings.resolve(new Settings.Flags(null, null, "flag-p", null), env, file);
    assertThat(s.api()).isEqualTo("http://env");
    assertThat(s.token()).isEqualTo("file-token");
    assertThat(s.project()).isEqualTo("flag-p");
    assertThat(s.toString()).doesNotContain("file-token");
  }
}
