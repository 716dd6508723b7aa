package io.warmmetal.agent.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import org.slf4j.Logger;

/**
 * The agent's logging, set up in code: one line per event on standard output (the journal, on a
 * node), Netty's at WARN, the rest at {@code WARMMETAL_LOG_LEVEL} (INFO). In code rather than in an
 * XML file because reading one loads logback's configuration machinery and the JDK's XML parser —
 * some 800 classes, seconds of every boot of a server under emulation. Only for the agent's own
 * process ({@link #PROPERTY}, which its {@code main} sets): anywhere else, and where {@code
 * -Dlogback.configurationFile} names a file, logback configures itself as usual.
 */
public final class AgentLogging extends ContextAwareBase implements Configurator {
  /** Set by the agent's {@code main} before the first logger is made. */
  public static final String PROPERTY = "warmmetal.agent.logging";

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    if (!Boolean.getBoolean(PROPERTY) || System.getProperty("logback.configurationFile") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern("%d{ISO8601} %-5level %logger{24} - %msg%n");
    encoder.start();
    ConsoleAppender<ILoggingEvent> out = new ConsoleAppender<>();
    out.setContext(context);
    out.setName("OUT");
    out.setEncoder(encoder);
    out.start();
    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(
        Level.toLevel(System.getenv().getOrDefault("WARMMETAL_LOG_LEVEL", "INFO"), Level.INFO));
    root.addAppender(out);
    context.getLogger("io.netty").setLevel(Level.WARN);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }
}
