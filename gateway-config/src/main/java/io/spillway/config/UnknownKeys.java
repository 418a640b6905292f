package io.spillway.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.deser.DeserializationProblemHandler;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * An unknown key is a problem like any other: it is reported with the keys known at that place and
 * skipped, so that binding goes on and {@code check-config} lists it beside the rest.
 */
final class UnknownKeys extends DeserializationProblemHandler {
  @Override
  public boolean handleUnknownProperty(DeserializationContext ctxt, JsonParser p, JsonDeserializer<?> deserializer,
      Object beanOrClass, String propertyName) throws IOException {
    List<String> known = new ArrayList<>();
    Collection<Object> names = deserializer.getKnownPropertyNames();
    if (names != null) {
      names.forEach(name -> known.add(String.valueOf(name)));
    }
    ConfigProblems.at("").raw("unknown key '" + BindingPaths.pathOf(p) + "'"
        + (known.isEmpty() ? "" : " (known keys here: " + String.join(", ", known) + ")"));
    p.skipChildren();
    return true;
  }
}
