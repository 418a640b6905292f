package io.spillway.routing.cloud;

import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Route;
import io.spillway.routing.breaker.Breaker;
import java.util.Objects;
import java.util.Set;

/**
 * One cloud route as the router uses it: a name, the backend that calls it, and the breaker that
 * decides whether it takes traffic. Routes are tried in the configured order.
 *
 * @param deployments for an azure route, the requested models it has a deployment for (a request
 *     for any other model skips the route); null for an openai route, which takes every model
 * @param api the API the route's upstream speaks: OpenAI's (kinds {@code openai}, {@code azure}) or
 *     Anthropic's Messages API (kind {@code anthropic}); a request in the other API skips the route
 */
public record CloudRoute(String name, Backend backend, Breaker breaker, Set<String> deployments, Route.Api api) {
  public CloudRoute {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(backend, "backend");
    Objects.requireNonNull(breaker, "breaker");
    deployments = deployments != null ? Set.copyOf(deployments) : null;
    api = api != null ? api : Route.Api.OPENAI;
  }

  /** A route of OpenAI's API. */
  public CloudRoute(String name, Backend backend, Breaker breaker, Set<String> deployments) {
    this(name, backend, breaker, deployments, Route.Api.OPENAI);
  }

  /** An openai route, which takes every model. */
  public static CloudRoute openAi(String name, Backend backend, Breaker breaker) {
    return new CloudRoute(name, backend, breaker, null);
  }

  /**
   * Whether this route can take {@code request} at all: an azure route only for a model it has a
   * deployment for, and never the model list (Azure has no OpenAI-style one); a route only requests
   * of its own API (an Anthropic route never the model list, nor OpenAI's calls; an OpenAI route
   * never Anthropic's, which are served locally when no Anthropic route takes them).
   */
  public boolean serves(GatewayRequest request) {
    if (request.route().api() != api) {
      return false;
    }
    if (deployments == null) {
      return true;
    }
    return request.route() != Route.MODELS && request.model() != null && deployments.contains(request.model());
  }
}
