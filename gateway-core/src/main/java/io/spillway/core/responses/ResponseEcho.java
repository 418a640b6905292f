package io.spillway.core.responses;

import io.spillway.core.pipeline.Attribute;

/**
 * What a local answer to a Responses request says about stored state, as OpenAI's would: the
 * {@code previous_response_id} it continued (Spillway expanded it before the local server saw the
 * request) and whether it is stored. Set on the request by the response store's backend wrapper;
 * read by the local translations when they build the {@code response} object.
 */
public record ResponseEcho(String previousResponseId, boolean store) {
  public static final Attribute<ResponseEcho> KEY = Attribute.of("responseEcho");

  /** What an answer says when Spillway keeps nothing: no previous response, not stored. */
  public static final ResponseEcho NOT_STORED = new ResponseEcho(null, false);
}
