package io.spillway.app;

import io.spillway.app.admin.Dashboard;
import io.spillway.core.api.ModelsEndpoint;
import io.spillway.core.api.OpenAiEndpoint;
import io.spillway.core.api.anthropic.MessagesEndpoint;
import io.spillway.core.http.HttpService;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.redact.RedactingService;
import io.spillway.core.responses.StoredResponsesEndpoint;
import io.spillway.core.tokens.TokenCounter;
import io.spillway.server.ConnectionBudget;
import io.spillway.server.HttpRoutes;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The HTTP surface: which service answers each path. The OpenAI and Anthropic endpoints over the
 * model pipeline, the model list, stored responses and conversations, {@code /healthz},
 * {@code /readyz}, {@code /metrics}, the dashboard and the admin API; every answer passes the one
 * redactor on its way out.
 */
final class HttpSurface {
  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  private HttpSurface() {}

  /** Every route of a gateway, redacted; {@code budget} is the connection limit {@code /readyz} reports. */
  static HttpService routes(Foundation base, Backends backends, ModelPipeline models, AdminSurface admin,
      ConnectionBudget budget) {
    HttpRoutes.Builder routes = HttpRoutes.builder();
    for (Route route : Route.values()) {
      if (route.hasBody() && route.api() == Route.Api.OPENAI) {
        routes.route(route.method(), route.path(), new OpenAiEndpoint(route, models.modelCalls));
      }
    }
    routes.route(Route.MESSAGES.method(), Route.MESSAGES.path(), new MessagesEndpoint(Route.MESSAGES, models.modelCalls));
    routes.route(Route.MESSAGES_COUNT_TOKENS.method(), Route.MESSAGES_COUNT_TOKENS.path(),
        new MessagesEndpoint(Route.MESSAGES_COUNT_TOKENS, models.tokenCount));
    StoredResponsesEndpoint storedResponses = new StoredResponsesEndpoint(models.storedResponses);
    routes.prefix(StoredResponsesEndpoint.RESPONSES_PREFIX, storedResponses);
    routes.prefix(StoredResponsesEndpoint.CONVERSATIONS_PREFIX, storedResponses);
    for (String method : List.of("GET", "POST")) {
      routes.route(method, StoredResponsesEndpoint.CONVERSATIONS, storedResponses);
    }
    ModelsEndpoint modelsEndpoint = new ModelsEndpoint(models.modelList);
    routes.get(Route.MODELS.path(), modelsEndpoint);
    routes.prefix(ModelsEndpoint.PREFIX, modelsEndpoint);
    routes.get("/healthz", request -> GatewayResponse.json(200, "{\"status\":\"ok\"}".getBytes(StandardCharsets.UTF_8)));
    routes.get("/readyz", new ReadinessService(base.config.cloud(), base.config.local(), backends.local, budget,
        models.usageStore::status, base.config.quota(), backends.breaker(), models.risk::mode,
        TokenCounter::vocabularyLoaded));
    if (base.config.metrics().enabled()) {
      routes.get("/metrics", request -> GatewayResponse.text(200, PROMETHEUS_TEXT, base.metrics.scrape()));
    }
    Dashboard.register(routes, admin.api::enabled); // /dashboard and /dashboard/runbook, 404 while admin is off
    routes.prefix("/admin/", admin.api);
    return RedactingService.wrap(routes.build(), base.redactor);
  }
}
