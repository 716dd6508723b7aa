package io.warmmetal.cli.session;

import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * The filters machine and instance lists share, as a picocli mixin: state, shape, label selector.
 */
public final class Filters {
  @Option(names = "--state", description = "only those in this state")
  String state;

  @Option(names = "--shape", description = "only those of this shape")
  String shape;

  @Option(
      names = {"-l", "--selector"},
      description = "label selector, e.g. team=ml,env!=dev,!spot")
  String selector;

  /** The list's query parameters (null ones are left out of the URL). */
  public Map<String, Object> query() {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("state", state);
    q.put("shape", shape);
    q.put("labelSelector", selector);
    return q;
  }
}
