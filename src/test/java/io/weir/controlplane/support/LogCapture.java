package io.weir.controlplane.support;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.LoggerFactory;

/**
 * Collects the log events of the whole application (the root logger) while open, so that a
 * test can assert what was, or was not, logged: for example that client mistakes are never
 * logged at ERROR.
 */
public final class LogCapture extends AppenderBase<ILoggingEvent> implements AutoCloseable {

    private final List<ILoggingEvent> events = new CopyOnWriteArrayList<>();
    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);

    private LogCapture() {
        setName("test-capture");
    }

    /** Starts capturing. */
    public static LogCapture open() {
        LogCapture capture = new LogCapture();
        capture.setContext(capture.root.getLoggerContext());
        capture.start();
        capture.root.addAppender(capture);
        return capture;
    }

    @Override
    protected void append(ILoggingEvent event) {
        event.prepareForDeferredProcessing();
        events.add(event);
    }

    /** The events at {@code level} or above, as "logger: message" lines. */
    public List<String> atLeast(Level level) {
        return events.stream()
                .filter(e -> e.getLevel().isGreaterOrEqual(level))
                .map(e -> e.getLoggerName() + ": " + e.getFormattedMessage()
                        + (e.getThrowableProxy() == null ? "" : " (" + e.getThrowableProxy().getClassName() + ")"))
                .toList();
    }

    @Override
    public void close() {
        root.detachAppender(this);
        stop();
    }
}
