package io.warmmetal.e2e.cluster;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension giving tests a real {@link ControlPlane}: started on first use, shared by every
 * test class in the run (starting one takes seconds), stopped and removed when the run ends —
 * whether tests passed or failed; a JVM that dies instead leaves its sandbox to the next run's
 * clean-up. Tests declare a {@code ControlPlane} parameter:
 *
 * <pre>{@code
 * @ExtendWith(RealCluster.class)
 * class SomeTest {
 *   @Test void works(ControlPlane cluster) { cluster.admin().nodes().list(); }
 * }
 * }</pre>
 */
public final class RealCluster implements ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(RealCluster.class);

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == ControlPlane.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return context
        .getRoot()
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent(Shared.class, k -> Shared.start(), Shared.class)
        .controlPlane;
  }

  /** Held in the root context's store, which closes it when the run ends. */
  private static final class Shared
      implements ExtensionContext.Store.CloseableResource, AutoCloseable {
    final ControlPlane controlPlane;
    final Thread hook;

    private Shared(ControlPlane controlPlane) {
      this.controlPlane = controlPlane;
      // A run stopped by a signal still tears down (a SIGKILL leaves it to the next run's leftover
      // clean-up).
      this.hook = new Thread(controlPlane::close, "control-plane-teardown");
      Runtime.getRuntime().addShutdownHook(hook);
    }

    static Shared start() {
      try {
        return new Shared(ControlPlane.start());
      } catch (Exception e) {
        throw new IllegalStateException(
            "the real control plane did not start: " + e.getMessage(), e);
      }
    }

    @Override
    public void close() {
      controlPlane.close();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // the hook is running or ran
      }
    }
  }
}
