package io.warmmetal.api.ec2;

import io.vertx.core.Future;
import io.warmmetal.api.auth.Permission;
import java.util.List;

/**
 * One EC2 action: the permission it needs (the JSON API's for the same thing), the parameters it
 * takes (anything else is {@code UnknownParameter}), and what it does.
 *
 * @param parameters whole parameter names, {@code N} standing for a list index ({@code
 *     InstanceId.N}, {@code Filter.N.Value.N}); {@code DryRun} is every action's
 */
record Action(String name, Permission permission, List<String> parameters, Answer answer) {

  /** Answers the call: the response document, begun with {@link Xml#response}. */
  @FunctionalInterface
  interface Answer {
    Future<Xml> answer(Ec2Call call);
  }
}
