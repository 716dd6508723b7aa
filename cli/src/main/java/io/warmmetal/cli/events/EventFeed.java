package io.warmmetal.cli.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.warmmetal.cli.http.ApiClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** Reads the event log page by page, keeping the since-cursor, so each event is seen once. */
public final class EventFeed {
  private final ApiClient api;
  private final Map<String, Object> query = new LinkedHashMap<>();

  public EventFeed(ApiClient api, String machine, String instance, String since) {
    this.api = api;
    query.put("machineId", machine);
    query.put("instanceId", instance);
    query.put("since", since);
    query.put("limit", 1000);
  }

  /** The events after the cursor (empty when none yet); the cursor moves past them. */
  public ArrayNode next() {
    ArrayNode all = JsonNodeFactory.instance.arrayNode();
    while (true) {
      JsonNode page = api.get(ApiClient.query("/v1/events", query));
      page.path("items").forEach(all::add);
      query.put("since", page.path("nextCursor").asText());
      if (page.path("items").size() < 1000) {
        return all;
      }
    }
  }

  /** Sleeps; false when interrupted (the interrupt stays set). */
  public static boolean pause(Duration d) {
    try {
      Thread.sleep(d.toMillis());
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
