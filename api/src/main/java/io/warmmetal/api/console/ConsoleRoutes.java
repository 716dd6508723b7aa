package io.warmmetal.api.console;

import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.StaticHandler;

/**
 * The fleet console: static files (HTML, one JS module, CSS) from the classpath under {@code
 * /console/}. They hold no data and need no token; the page reads everything through the API with
 * the token the user gives it, so the API's own authentication and roles decide what it shows. No
 * cookies are involved, so there is nothing to forge.
 */
public final class ConsoleRoutes {
  public static final String PATH = "/console/";

  /**
   * Only the console's own files and API calls: no inline scripts or styles, no framing, no other
   * origin.
   */
  static final String POLICY =
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
          + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

  /**
   * Short: a new build shows within minutes; Last-Modified lets the browser revalidate cheaply
   * meanwhile.
   */
  static final long MAX_AGE_SECONDS = 300;

  private ConsoleRoutes() {}

  public static void mount(Router router) {
    // A regex, matched whole: the plain path "/console" would also match "/console/" and redirect
    // it to itself.
    router.getWithRegex("/console").handler(ctx -> ctx.redirect(PATH));
    StaticHandler files =
        StaticHandler.create("console")
            .setCachingEnabled(true)
            .setMaxAgeSeconds(MAX_AGE_SECONDS)
            .setDirectoryListing(false)
            .setIncludeHidden(false)
            .setIndexPage("index.html")
            .setDefaultContentEncoding("UTF-8");
    router
        .route(PATH + "*")
        .method(HttpMethod.GET)
        .method(HttpMethod.HEAD)
        .handler(ConsoleRoutes::securityHeaders)
        .handler(files);
  }

  private static void securityHeaders(RoutingContext ctx) {
    ctx.response()
        .headers()
        .set("Content-Security-Policy", POLICY)
        .set("X-Content-Type-Options", "nosniff")
        .set("Referrer-Policy", "no-referrer")
        .set("X-Frame-Options", "DENY");
    ctx.next();
  }
}
