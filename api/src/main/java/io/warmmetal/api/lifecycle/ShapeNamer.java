package io.warmmetal.api.lifecycle;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Locale;
import java.util.Set;
import java.util.TreeMap;

/**
 * Derives a shape's stable, readable name from a machine's facts: {@code <arch>-<cpus>c-<memory
 * GiB>g}, plus one {@code -<count>x<gpu>} per GPU model, e.g. {@code x86-64c-512g-4xh100}. Memory
 * is rounded to the nearest GiB, so firmware reserving a few MiB does not split a shape.
 */
public final class ShapeNamer {
  private static final Set<String> VENDOR_WORDS =
      Set.of(
          "nvidia",
          "amd",
          "intel",
          "tesla",
          "geforce",
          "radeon",
          "instinct",
          "quadro",
          "rtx",
          "corporation",
          "inc");

  private ShapeNamer() {}

  public static String name(JsonObject facts) {
    StringBuilder name =
        new StringBuilder()
            .append(arch(facts.getString("arch")))
            .append('-')
            .append(facts.getInteger("cpus"))
            .append('c')
            .append('-')
            .append(memoryGiB(facts))
            .append('g');
    gpuCounts(facts)
        .forEach((model, count) -> name.append('-').append(count).append('x').append(model));
    return name.toString();
  }

  /** {@code x86} or {@code arm}, whatever the kernel or the vendor calls it. */
  public static String arch(String arch) {
    return switch (arch) {
      case "x86_64", "amd64" -> "x86";
      case "aarch64", "arm64" -> "arm";
      default -> throw new IllegalArgumentException("unsupported arch " + arch);
    };
  }

  public static int memoryGiB(JsonObject facts) {
    return (int) Math.round(facts.getLong("memoryMiB") / 1024.0);
  }

  /** GPU short model names (sorted) and how many of each. */
  public static TreeMap<String, Integer> gpuCounts(JsonObject facts) {
    TreeMap<String, Integer> counts = new TreeMap<>();
    JsonArray gpus = facts.getJsonArray("gpus", new JsonArray());
    for (int i = 0; i < gpus.size(); i++) {
      counts.merge(gpuModel(gpus.getJsonObject(i).getString("model")), 1, Integer::sum);
    }
    return counts;
  }

  /**
   * The model's first word with a digit in it, which is what people call GPUs by: {@code "NVIDIA
   * H100 80GB HBM3"} → {@code h100}, {@code "AMD Instinct MI300X"} → {@code mi300x}, {@code
   * "Intel(R) Data Center GPU Max 1550"} → {@code 1550}; failing that, the first word that is not a
   * vendor's.
   */
  static String gpuModel(String model) {
    String[] words = model.toLowerCase(Locale.ROOT).split("[^a-z0-9]+");
    for (String word : words) {
      if (word.matches(".*[0-9].*") && !word.matches("[0-9]+gb")) {
        return word;
      }
    }
    for (String word : words) {
      if (word.length() > 2 && !VENDOR_WORDS.contains(word)) {
        return word;
      }
    }
    return "gpu";
  }

  /**
   * Shape names are DNS-label-like and at most this long (they appear in paths and Kubernetes
   * labels).
   */
  public static final int MAX_LENGTH = 63;
}
