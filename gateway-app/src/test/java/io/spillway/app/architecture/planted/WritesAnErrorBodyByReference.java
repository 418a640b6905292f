package io.spillway.app.architecture.planted;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.OpenAiError;
import java.util.function.Function;

/** Planted for ArchitectureRulesTest: the same, hidden behind a method reference. */
public final class WritesAnErrorBodyByReference {
  public static final Function<OpenAiError, ObjectNode> BODY = OpenAiError::toJson;

  private WritesAnErrorBodyByReference() {}
}
