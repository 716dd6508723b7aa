package io.warmmetal.api.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ShapeNamerTest {

  @ParameterizedTest
  @CsvSource({
    "x86_64, 32, 262144, '', x86-32c-256g",
    "amd64, 32, 261900, '', x86-32c-256g",
    "aarch64, 80, 524288, '', arm-80c-512g",
    "x86_64, 64, 524288, 'NVIDIA H100 80GB HBM3;NVIDIA H100 80GB HBM3;NVIDIA H100 80GB HBM3;NVIDIA H100 80GB HBM3',"
        + " x86-64c-512g-4xh100",
    "x86_64, 128, 1048576, 'AMD Instinct MI300X;AMD Instinct MI300X', x86-128c-1024g-2xmi300x",
    "x86_64, 16, 65536, 'NVIDIA GeForce RTX 4090;NVIDIA A100-SXM4-80GB', x86-16c-64g-1x4090-1xa100",
  })
  void namesAreStableAndReadable(
      String arch, int cpus, long memoryMiB, String gpus, String expected) {
    JsonArray list = new JsonArray();
    if (!gpus.isEmpty()) {
      for (String model : gpus.split(";")) {
        list.add(new JsonObject().put("model", model));
      }
    }
    JsonObject facts =
        new JsonObject()
            .put("arch", arch)
            .put("cpus", cpus)
            .put("memoryMiB", memoryMiB)
            .put("gpus", list);
    assertThat(ShapeNamer.name(facts)).isEqualTo(expected);
  }
}
