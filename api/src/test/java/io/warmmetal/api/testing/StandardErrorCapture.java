package io.warmmetal.api.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Keeps a copy of what is printed to standard error while it is open (still printing it as before),
 * for a test to show that nothing was: a library's {@code printStackTrace} bypasses the log.
 */
public final class StandardErrorCapture implements AutoCloseable {
  private final PrintStream original = System.err;
  private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

  public StandardErrorCapture() {
    System.setErr(
        new PrintStream(
            new OutputStream() {
              @Override
              public void write(int b) throws IOException {
                synchronized (copy) {
                  original.write(b);
                  copy.write(b);
                }
              }

              @Override
              public void write(byte[] b, int off, int len) throws IOException {
                synchronized (copy) {
                  original.write(b, off, len);
                  copy.write(b, off, len);
                }
              }
            },
            true));
  }

  /** What was printed so far. */
  public String text() {
    synchronized (copy) {
      return copy.toString(StandardCharsets.UTF_8);
    }
  }

  @Override
  public void close() {
    System.setErr(original);
  }
}
