package io.warmmetal.api.ec2;

import io.warmmetal.api.auth.Principal;
import io.warmmetal.api.auth.Scope;
import io.warmmetal.api.lifecycle.Caller;
import io.warmmetal.api.shapes.ShapeQueries.Topology;

/** An authenticated, permitted EC2 request: its parameters, who asks, and where it acts. */
record Ec2Call(
    String action, QueryRequest params, Principal principal, Scope scope, String requestId) {
  /** Zones and regions are the machines' well-known Kubernetes labels. */
  static final Topology TOPOLOGY = Topology.DEFAULT;

  Caller caller() {
    return scope.caller(principal);
  }

  Caller creator() {
    return scope.creator(principal);
  }

  Xml response() {
    return Xml.response(action, requestId);
  }

  /**
   * Where a page of an in-order answer starts: {@code NextToken} as the offset an earlier one gave.
   */
  int offset() {
    String token = params.string("NextToken");
    if (token != null && !token.matches("[0-9]{1,9}")) {
      throw Ec2Error.invalidValue("NextToken", "is not a token this endpoint gave");
    }
    return token == null ? 0 : Integer.parseInt(token);
  }

  /** {@code MaxResults} within EC2's bounds for the action, else {@code all}. */
  int maxResults(int min, int max, int all) {
    Integer n = params.integer("MaxResults", min, max);
    return n == null ? all : n;
  }
}
