package io.warmmetal.api.ec2;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.warmmetal.api.auth.Permission;
import io.warmmetal.api.db.Filter;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * EC2's tags are an instance's labels: CreateTags, DeleteTags and DescribeTags. A label key's rules
 * hold (the JSON API's {@code LabelKey}), a value is at most 63 characters, an instance carries at
 * most 64; a call that cannot apply to every instance it names applies to none.
 */
final class Tags {
  static final int MAX_TAGS = 64;
  static final int MAX_VALUE = 63;
  private static final Pattern KEY =
      Pattern.compile("([a-z0-9.-]+/)?[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?");

  private Tags() {}

  /** Tags as labels, each checked against a label's rules. */
  static JsonObject asLabels(Map<String, String> tags) {
    JsonObject labels = new JsonObject();
    tags.forEach(
        (key, value) -> {
          checkKey(key);
          if (value.length() > MAX_VALUE) {
            throw Ec2Error.invalidValue(
                "Tag.Value", "of '" + key + "' is longer than " + MAX_VALUE + " characters");
          }
          labels.put(key, value);
        });
    if (labels.size() > MAX_TAGS) {
      throw new Ec2Error(
          "TagLimitExceeded", 400, "An instance carries at most " + MAX_TAGS + " tags");
    }
    return labels;
  }

  private static void checkKey(String key) {
    if (key.length() > 253 || !KEY.matcher(key).matches()) {
      throw Ec2Error.invalidValue(
          "Tag.Key",
          "'"
              + key
              + "' is not a label key (an optional DNS prefix and '/', then letters, digits, '-',"
              + " '_' or '.', beginning and ending alphanumeric)");
    }
  }

  static Action create(Pool db) {
    return new Action(
        "CreateTags",
        Permission.LAUNCH,
        List.of("ResourceId.N", "Tag.N.Key", "Tag.N.Value"),
        call -> {
          JsonObject added = asLabels(call.params().tags("Tag"));
          if (added.isEmpty()) {
            throw Ec2Error.missing("Tag.1.Key");
          }
          return change(db, call, labels -> labels.mergeIn(added));
        });
  }

  static Action delete(Pool db) {
    return new Action(
        "DeleteTags",
        Permission.LAUNCH,
        List.of("ResourceId.N", "Tag.N.Key", "Tag.N.Value"),
        call -> {
          QueryRequest p = call.params();
          Map<Integer, String> keys = p.indexed("Tag", ".Key");
          return change(
              db,
              call,
              labels ->
                  keys.forEach(
                      (n, key) -> {
                        // With a value, only a tag of that value goes (EC2's rule).
                        String value = p.string("Tag." + n + ".Value");
                        if (value == null || value.equals(labels.getString(key))) {
                          labels.remove(key);
                        }
                      }));
        });
  }

  /** Reads, changes and writes the named instances' labels in one transaction, or none. */
  private static Future<Xml> change(Pool db, Ec2Call call, Consumer<JsonObject> edit) {
    List<String> ids = call.params().list("ResourceId");
    if (ids.isEmpty()) {
      throw Ec2Error.missing("ResourceId.1");
    }
    for (String id : ids) {
      if (!InstanceSearch.INSTANCE_ID.matcher(id).matches()) {
        throw new Ec2Error(
            "InvalidID",
            400,
            "The ID '" + id + "' is not valid: only instances (i-…) carry tags here");
      }
    }
    String project = call.caller().project();
    return db.withTransaction(
            tx ->
                tx.preparedQuery(
                        "SELECT id, labels FROM instances WHERE id = ANY($1)"
                            + " AND ($2::text IS NULL OR project = $2) ORDER BY id FOR UPDATE")
                    .execute(Tuple.of(ids.toArray(String[]::new), project))
                    .compose(rows -> write(tx, ids, rows, edit)))
        .map(x -> call.response().text("return", true));
  }

  private static Future<Void> write(
      SqlConnection tx, List<String> ids, Iterable<Row> rows, Consumer<JsonObject> edit) {
    Set<String> missing = new LinkedHashSet<>(ids);
    List<Tuple> updates = new ArrayList<>();
    for (Row r : rows) {
      missing.remove(r.getString("id"));
      JsonObject labels = r.getJsonObject("labels").copy();
      edit.accept(labels);
      if (labels.size() > MAX_TAGS) {
        throw new Ec2Error(
            "TagLimitExceeded",
            400,
            "Instance " + r.getString("id") + " would carry more than " + MAX_TAGS + " tags");
      }
      updates.add(Tuple.of(r.getString("id"), labels));
    }
    if (!missing.isEmpty()) {
      throw new Ec2Error(
          "InvalidInstanceID.NotFound",
          400,
          "The instance IDs '" + String.join(", ", missing) + "' do not exist");
    }
    return tx.preparedQuery("UPDATE instances SET labels = $2 WHERE id = $1")
        .executeBatch(updates)
        .mapEmpty();
  }

  static Action describe(Pool db) {
    return new Action(
        "DescribeTags",
        Permission.READ,
        List.of("Filter.N.Name", "Filter.N.Value.N", "MaxResults", "NextToken"),
        call -> {
          int limit = call.maxResults(5, 1000, 1000);
          int offset = call.offset();
          Filter where = new Filter().where(Ec2Instance.STILL_VISIBLE);
          where.whereIfPresent("i.project = ?", call.caller().project());
          for (QueryRequest.Filter f : call.params().filters()) {
            Object patterns = f.values().stream().map(Wildcards::like).toArray(String[]::new);
            switch (f.name()) {
              case "resource-id" -> where.where("i.id LIKE ANY(?)", patterns);
              case "key" -> where.where("t.key LIKE ANY(?)", patterns);
              case "value" -> where.where("t.value LIKE ANY(?)", patterns);
              case "resource-type" ->
                  where.where("'instance' LIKE ANY(?)", patterns); // the only type tagged here
              default -> throw Ec2Error.invalidFilter(f.name());
            }
          }
          String sql =
              "SELECT i.id, t.key, t.value FROM instances i, jsonb_each_text(i.labels) t"
                  + where.sql()
                  + " ORDER BY i.seq, t.key LIMIT "
                  + where.param(limit + 1)
                  + " OFFSET "
                  + where.param(offset);
          return db.preparedQuery(sql)
              .execute(where.tuple())
              .map(
                  rows -> {
                    List<Row> tags = new ArrayList<>();
                    rows.forEach(tags::add);
                    Xml xml = call.response();
                    xml.set(
                        "tagSet",
                        tags.subList(0, Math.min(limit, tags.size())),
                        r ->
                            xml.text("resourceId", r.getString("id"))
                                .text("resourceType", "instance")
                                .text("key", r.getString("key"))
                                .text("value", r.getString("value")));
                    return xml.text(
                        "nextToken", tags.size() > limit ? String.valueOf(offset + limit) : null);
                  });
        });
  }
}
