package io.warmmetal.controller.testing;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.Store;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** An informer's store a test fills and empties by hand, keyed by name (cluster-scoped objects). */
public final class MapStore<T extends HasMetadata> implements Store<T> {
  private final Map<String, T> objects = new LinkedHashMap<>();

  public void put(T object) {
    objects.put(object.getMetadata().getName(), object);
  }

  public void remove(String name) {
    objects.remove(name);
  }

  @Override
  public List<T> list() {
    return new ArrayList<>(objects.values());
  }

  @Override
  public List<String> listKeys() {
    return new ArrayList<>(objects.keySet());
  }

  @Override
  public T get(T object) {
    return objects.get(object.getMetadata().getName());
  }

  @Override
  public T getByKey(String key) {
    return objects.get(key);
  }

  @Override
  public String getKey(T object) {
    return object.getMetadata().getName();
  }
}
