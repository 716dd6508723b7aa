package io.warmmetal.api.ec2;

import io.vertx.core.Future;
import io.vertx.sqlclient.SqlClient;
import io.warmmetal.api.db.Filter;
import io.warmmetal.api.db.Paging;
import io.warmmetal.api.db.Paging.Page;
import io.warmmetal.api.lifecycle.InstanceState;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The instances a Describe call asks for: by id, by EC2's filters (values with {@code *} and {@code
 * ?} wildcards, any value matching), a page at a time — only ever the caller's project's.
 */
final class InstanceSearch {
  static final Pattern INSTANCE_ID = Pattern.compile("i-[0-9a-f]{8,17}");

  private final Filter where = new Filter();
  private final String zoneLabel;
  private final List<String> ids;

  /**
   * @param project the caller's project, or null for an operator's every project
   */
  InstanceSearch(String project, String zoneLabel, List<String> ids) {
    this.zoneLabel = zoneLabel;
    this.ids = ids;
    where.param(zoneLabel); // $1: the SELECT's zone label
    where.where(Ec2Instance.STILL_VISIBLE);
    where.whereIfPresent("i.project = ?", project);
    for (String id : ids) {
      if (!INSTANCE_ID.matcher(id).matches()) {
        throw new Ec2Error(
            "InvalidInstanceID.Malformed", 400, "Invalid id: \"" + id + "\" (expecting \"i-...\")");
      }
    }
    if (!ids.isEmpty()) {
      where.where("i.id = ANY(?)", (Object) ids.toArray(String[]::new));
    }
  }

  /** Adds EC2's filters; a name this endpoint does not know is refused, naming it. */
  InstanceSearch filter(List<QueryRequest.Filter> filters) {
    for (QueryRequest.Filter f : filters) {
      if (f.values().isEmpty()) {
        throw Ec2Error.invalidValue(
            "Filter", "'" + f.name() + "' needs at least one Value (Filter.N.Value.M)");
      }
      String[] patterns = f.values().stream().map(Wildcards::like).toArray(String[]::new);
      String name = f.name();
      if (name.startsWith("tag:")) {
        where.where("(i.labels ->> ?) LIKE ANY(?)", name.substring(4), patterns);
        continue;
      }
      switch (name) {
        case "instance-id" -> where.where("i.id LIKE ANY(?)", (Object) patterns);
        case "instance-type" -> where.where("i.shape LIKE ANY(?)", (Object) patterns);
        case "reservation-id" -> where.where("i.launch_id LIKE ANY(?)", (Object) patterns);
        case "client-token" -> where.where("l.client_token LIKE ANY(?)", (Object) patterns);
        case "private-ip-address" -> where.where("m.address LIKE ANY(?)", (Object) patterns);
        case "availability-zone" ->
            where.where("(m.labels ->> ?) LIKE ANY(?)", zoneLabel, patterns);
        case "tag-key" ->
            where.where(
                "EXISTS (SELECT 1 FROM jsonb_object_keys(i.labels) k WHERE k LIKE ANY(?))",
                (Object) patterns);
        case "tag-value" ->
            where.where(
                "EXISTS (SELECT 1 FROM jsonb_each_text(i.labels) t WHERE t.value LIKE ANY(?))",
                (Object) patterns);
        case "instance-state-name" -> where.where("i.state = ANY(?)", (Object) states(f.values()));
        case "instance-state-code" ->
            where.where("i.state = ANY(?)", (Object) statesByCode(f.values()));
        default -> throw Ec2Error.invalidFilter(name);
      }
    }
    return this;
  }

  /** Only instances in these of WarmMetal's states. */
  InstanceSearch inStates(Set<InstanceState> states) {
    where.where(
        "i.state = ANY(?)",
        (Object) states.stream().map(InstanceState::wire).toArray(String[]::new));
    return this;
  }

  /**
   * A page of at most {@code limit}, after {@code nextToken}; named ids that are not there (or not
   * the caller's) are refused as EC2 refuses them.
   */
  Future<Page<Ec2Instance>> page(SqlClient db, String nextToken, int limit) {
    if (nextToken != null && !nextToken.matches("[0-9]{1,18}")) {
      throw Ec2Error.invalidValue("NextToken", "is not a token this endpoint gave");
    }
    return Paging.rows(db, Ec2Instance.SELECT, "i.seq", where, nextToken, limit, Ec2Instance::from)
        .map(
            page -> {
              Set<String> missing = new LinkedHashSet<>(ids);
              page.items().forEach(i -> missing.remove(i.instance().id()));
              if (!missing.isEmpty() && nextToken == null && page.nextCursor() == null) {
                throw new Ec2Error(
                    "InvalidInstanceID.NotFound",
                    400,
                    "The instance IDs '" + String.join(", ", missing) + "' do not exist");
              }
              return page;
            });
  }

  /** EC2's state names as WarmMetal's states (terminated includes failed; stopped matches none). */
  private static String[] states(List<String> names) {
    List<String> out = new ArrayList<>();
    for (String name : names) {
      switch (name.toLowerCase(Locale.ROOT)) {
        case "pending" -> out.add("pending");
        case "running" -> out.add("running");
        case "shutting-down" -> out.add("shutting-down");
        case "terminated" -> out.addAll(List.of("terminated", "failed"));
        case "stopping", "stopped" -> {} // owned servers are not stopped: nothing is
        default ->
            throw Ec2Error.invalidValue(
                "instance-state-name", "'" + name + "' is not an instance state");
      }
    }
    return out.toArray(String[]::new);
  }

  private static String[] statesByCode(List<String> codes) {
    List<String> names = new ArrayList<>();
    for (String code : codes) {
      String name =
          Arrays.stream(InstanceState.values())
              .filter(s -> String.valueOf(Ec2Instance.stateCode(s)).equals(code))
              .findFirst()
              .map(Ec2Instance::stateName)
              .orElse(code.matches("64|80") ? "stopped" : null);
      if (name == null) {
        throw Ec2Error.invalidValue(
            "instance-state-code", "'" + code + "' is not an instance state code");
      }
      names.add(name);
    }
    return states(names);
  }
}
