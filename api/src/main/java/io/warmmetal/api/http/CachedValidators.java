package io.warmmetal.api.http;

import io.vertx.core.file.FileSystem;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.json.schema.Draft;
import io.vertx.json.schema.JsonSchema;
import io.vertx.json.schema.JsonSchemaOptions;
import io.vertx.json.schema.SchemaRepository;
import io.vertx.json.schema.Validator;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.contract.OpenAPIVersion;
import io.vertx.openapi.contract.Operation;
import io.vertx.openapi.contract.Path;
import io.vertx.openapi.contract.SecurityRequirement;
import io.vertx.openapi.contract.SecurityScheme;
import io.vertx.openapi.contract.Server;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A contract whose schema validators are built once per schema. vertx-openapi 5.0 asks the
 * contract's schema repository for a new validator for every body and parameter of every request,
 * and each one copies the whole contract's schema table: that was a third of the API's CPU under
 * load. A built validator only reads that table, so one per schema serves every request on every
 * event loop.
 */
final class CachedValidators {
  private CachedValidators() {}

  static OpenAPIContract wrap(OpenAPIContract contract) {
    return contract instanceof Contract ? contract : new Contract(contract);
  }

  /** A schema, by identity: the contract's schema objects live as long as the contract. */
  private record Key(JsonSchema schema) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && k.schema == schema;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(schema);
    }
  }

  private record Contract(OpenAPIContract delegate, SchemaRepository repository)
      implements OpenAPIContract {
    Contract(OpenAPIContract delegate) {
      this(delegate, new Repository(delegate.getSchemaRepository()));
    }

    @Override
    public Operation operation(String operationId) {
      return delegate.operation(operationId);
    }

    @Override
    public List<Operation> operations() {
      return delegate.operations();
    }

    @Override
    public List<Path> getPaths() {
      return delegate.getPaths();
    }

    @Override
    public JsonObject getRawContract() {
      return delegate.getRawContract();
    }

    @Override
    public OpenAPIVersion getVersion() {
      return delegate.getVersion();
    }

    @Override
    public SchemaRepository getSchemaRepository() {
      return repository;
    }

    @Override
    public List<Server> getServers() {
      return delegate.getServers();
    }

    @Override
    public Path findPath(String urlPath) {
      return delegate.findPath(urlPath);
    }

    @Override
    public Operation findOperation(String urlPath, HttpMethod method) {
      return delegate.findOperation(urlPath, method);
    }

    @Override
    public List<SecurityRequirement> getSecurityRequirements() {
      return delegate.getSecurityRequirements();
    }

    @Override
    public SecurityScheme securityScheme(String name) {
      return delegate.securityScheme(name);
    }
  }

  private record Repository(SchemaRepository delegate, Map<Key, Validator> validators)
      implements SchemaRepository {
    Repository(SchemaRepository delegate) {
      this(delegate, new ConcurrentHashMap<>());
    }

    @Override
    public Validator validator(JsonSchema schema) {
      return validators.computeIfAbsent(new Key(schema), k -> delegate.validator(k.schema()));
    }

    @Override
    public SchemaRepository dereference(JsonSchema schema) {
      delegate.dereference(schema);
      return this;
    }

    @Override
    public SchemaRepository dereference(String uri, JsonSchema schema) {
      delegate.dereference(uri, schema);
      return this;
    }

    @Override
    public SchemaRepository preloadMetaSchema(FileSystem fs) {
      delegate.preloadMetaSchema(fs);
      return this;
    }

    @Override
    public SchemaRepository preloadMetaSchema(FileSystem fs, Draft draft) {
      delegate.preloadMetaSchema(fs, draft);
      return this;
    }

    @Override
    public Validator validator(String ref) {
      return delegate.validator(ref);
    }

    @Override
    public Validator validator(String ref, JsonSchemaOptions options) {
      return delegate.validator(ref, options);
    }

    @Override
    public Validator validator(JsonSchema schema, JsonSchemaOptions options, boolean dereference) {
      return delegate.validator(schema, options, dereference);
    }

    @Override
    public JsonObject resolve(JsonObject schema) {
      return delegate.resolve(schema);
    }

    @Override
    public JsonSchema find(String pointer) {
      return delegate.find(pointer);
    }
  }
}
