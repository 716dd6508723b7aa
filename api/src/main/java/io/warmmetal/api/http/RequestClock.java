package io.warmmetal.api.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection's request clocks, in its Netty pipeline (Vert.x has no header timeout at all).
 * Every request's headers must be complete within the header timeout of its first byte — a new
 * connection's first request: of the connection — or the connection is closed; between requests
 * only the idle timeout runs. A WebSocket upgrade must also bring its (rare) body in time, which
 * Vert.x reads before any handler of ours sees the upgrade; every other request's body is timed by
 * the router, which answers 408.
 *
 * <p>After a WebSocket upgrade the connection is no longer HTTP: the clocks and Vert.x's idle
 * timeout leave its pipeline, and the channel's own liveness sweep (heartbeats) decides how long it
 * lives.
 *
 * <p>All on the connection's event loop.
 */
final class RequestClock {
  private static final Logger LOG = LoggerFactory.getLogger(RequestClock.class);

  /**
   * Lets the router's 408 go out before this clock closes an upgrade request whose body is late.
   */
  private static final long BODY_GRACE_MILLIS = 1000;

  private final Channel channel;
  private final long headerMillis;
  private final long bodyMillis;
  private final BytesIn bytesIn = new BytesIn();
  private final Messages messages = new Messages();

  /**
   * Requests whose headers came and whose response has not ended (more than one only if the client
   * pipelines).
   */
  private int inProgress;

  private boolean closeAfterResponse;

  /**
   * A request was refused for its version: what follows it is not read, as the decoder reads
   * nothing after a request it cannot parse.
   */
  private boolean refusedVersion;

  private ScheduledFuture<?> headerTimer;
  private ScheduledFuture<?> bodyTimer;

  private RequestClock(Channel channel, HttpLimits limits) {
    this.channel = channel;
    this.headerMillis = limits.headerTimeout().toMillis();
    this.bodyMillis = limits.bodyTimeout().toMillis() + BODY_GRACE_MILLIS;
  }

  /**
   * Starts the clocks of a new HTTP/1.1 connection: its first request's headers are due from now.
   */
  static RequestClock start(Channel channel, HttpLimits limits) {
    RequestClock clock = new RequestClock(channel, limits);
    ChannelPipeline pipeline = channel.pipeline();
    pipeline.addBefore(
        "httpDecoder", "warmmetal.bytesIn", clock.bytesIn); // Vert.x's names for its HTTP codec
    pipeline.addAfter("httpEncoder", "warmmetal.messages", clock.messages);
    clock.headerTimer = clock.closeAfter(clock.headerMillis, "no request headers in time");
    channel.closeFuture().addListener(f -> clock.stopTimers());
    return clock;
  }

  /**
   * The connection serves one request: its response says {@code Connection: close}, and the
   * connection closes.
   */
  void oneRequestOnly() {
    closeAfterResponse = true;
  }

  private ScheduledFuture<?> closeAfter(long millis, String why) {
    return channel
        .eventLoop()
        .schedule(
            () -> {
              LOG.debug("Closing the connection from {}: {}", channel.remoteAddress(), why);
              channel.close();
            },
            millis,
            TimeUnit.MILLISECONDS);
  }

  private void stopTimers() {
    headerTimer = cancel(headerTimer);
    bodyTimer = cancel(bodyTimer);
  }

  private static ScheduledFuture<?> cancel(ScheduledFuture<?> timer) {
    if (timer != null) {
      timer.cancel(false);
    }
    return null;
  }

  /** The connection became a WebSocket: nothing HTTP times it any longer. */
  private void upgraded(ChannelPipeline pipeline) {
    stopTimers();
    pipeline.remove(bytesIn);
    pipeline.remove(messages);
    IdleStateHandler idle = pipeline.get(IdleStateHandler.class);
    if (idle != null) {
      pipeline.remove(idle);
    }
  }

  /**
   * Bytes as they arrive (decrypted), before the HTTP decoder: the first byte of a request starts
   * its clock.
   */
  private final class BytesIn extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (inProgress == 0
          && headerTimer == null
          && msg instanceof ByteBuf bytes
          && bytes.isReadable()) {
        headerTimer = closeAfter(headerMillis, "the next request's headers did not come in time");
      }
      ctx.fireChannelRead(msg);
    }
  }

  /** Decoded requests in, responses out (before the encoder). */
  private final class Messages extends ChannelDuplexHandler {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (refusedVersion) {
        ReferenceCountUtil.release(msg);
        return;
      }
      if (msg instanceof HttpRequest request) {
        refuseUnknownVersion(request);
        inProgress++;
        headerTimer = cancel(headerTimer);
        if (request.headers().contains(HttpHeaderNames.UPGRADE)
            && !(msg instanceof LastHttpContent)) {
          bodyTimer = cancel(bodyTimer);
          bodyTimer = closeAfter(bodyMillis, "an upgrade request's body did not come in time");
        }
      }
      if (msg instanceof LastHttpContent) {
        bodyTimer = cancel(bodyTimer);
      }
      ctx.fireChannelRead(msg);
    }

    /**
     * A version other than HTTP/1.0 and 1.1 (HTTP/1.2, FOO/1.1, the HTTP/2 preface's HTTP/2.0) goes
     * to the port's invalid-request handler, as what the decoder could not parse does: Vert.x would
     * answer it a bare 501 itself, or route it on a port with WebSockets. Its answer says HTTP/1.1,
     * not the version the client made up.
     */
    private void refuseUnknownVersion(HttpRequest request) {
      HttpVersion version = request.protocolVersion();
      // Vert.x, too, knows the two by identity: the decoder uses the constants for exactly these.
      if (version != HttpVersion.HTTP_1_1 && version != HttpVersion.HTTP_1_0) {
        request.setProtocolVersion(HttpVersion.HTTP_1_1);
        if (request.decoderResult().isSuccess()) {
          request.setDecoderResult(DecoderResult.failure(new UnknownVersion(version.text())));
        }
        refusedVersion = true;
      }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
      if (msg instanceof HttpResponse response) {
        HttpResponseStatus status = response.status();
        if (status.equals(HttpResponseStatus.SWITCHING_PROTOCOLS)) {
          ctx.write(msg, promise);
          upgraded(ctx.pipeline());
          return;
        }
        if (status.codeClass()
            == HttpStatusClass.INFORMATIONAL) { // 100 Continue: the final response follows
          ctx.write(msg, promise);
          return;
        }
        if (closeAfterResponse) {
          response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
      }
      if (msg instanceof LastHttpContent) {
        inProgress = Math.max(0, inProgress - 1);
        if (closeAfterResponse) {
          ChannelPromise written = promise.unvoid();
          written.addListener(ChannelFutureListener.CLOSE);
          ctx.write(msg, written);
          return;
        }
      }
      ctx.write(msg, promise);
    }
  }

  /** A request's HTTP version is neither 1.0 nor 1.1. */
  static final class UnknownVersion extends Exception {
    UnknownVersion(String version) {
      super(version, null, false, false);
    }
  }
}
