package io.spillway.core.pipeline;

/** The last stage of the pipeline: the one that answers (in Spillway, the router). */
@FunctionalInterface
public interface Terminal {
  GatewayResponse handle(GatewayRequest request);
}
