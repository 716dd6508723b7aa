package io.warmmetal.controller.metrics;

import io.prometheus.client.Collector;
import io.prometheus.client.Summary;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

/**
 * A Prometheus summary as upstream's Go client exposes one: quantiles 0, 0.5, 0.9, 0.99 and 1 (each
 * within 0.01) over the last ten minutes, written as Go writes them — {@code quantile="0"}, not
 * Java's {@code "0.0"} — so upstream's dashboards, which select {@code quantile="0"} and {@code
 * quantile="1"}, find them.
 */
final class GoSummary extends Collector {
  private static final double[] QUANTILES = {0, 0.5, 0.9, 0.99, 1};

  private final Summary summary;

  GoSummary(String name, String help, String... labelNames) {
    Summary.Builder builder = Summary.build().name(name).help(help).labelNames(labelNames);
    for (double q : QUANTILES) {
      builder.quantile(q, 0.01);
    }
    this.summary = builder.create();
  }

  void observe(double value, String... labelValues) {
    summary.labels(labelValues).observe(value);
  }

  @Override
  public List<MetricFamilySamples> collect() {
    List<MetricFamilySamples> families = new ArrayList<>();
    for (MetricFamilySamples family : summary.collect()) {
      List<MetricFamilySamples.Sample> samples = new ArrayList<>();
      for (MetricFamilySamples.Sample s : family.samples) {
        if (s.name.endsWith("_created")) {
          continue; // Java's client adds a creation time Go's does not
        }
        List<String> values = new ArrayList<>(s.labelValues);
        int q = s.labelNames.indexOf("quantile");
        if (q >= 0) {
          values.set(q, goFloat(Double.parseDouble(values.get(q))));
        }
        samples.add(new MetricFamilySamples.Sample(s.name, s.labelNames, values, s.value));
      }
      families.add(new MetricFamilySamples(family.name, family.type, family.help, samples));
    }
    return families;
  }

  /** A float as Go's strconv formats it for a label: 0, 0.5, 1. */
  static String goFloat(double value) {
    return BigDecimal.valueOf(value).stripTrailingZeros().toPlainString();
  }
}
