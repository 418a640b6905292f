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
 * An unknown key is a problem like any other: it is reported with the keys known at that place (sorted,
 * with the nearest one offered for a near miss) and skipped, so that binding goes on and {@code check-config} lists it beside the rest.
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
    // The key as written, below the record being bound: the parser has already stepped onto the
    // value, and for a list or mapping its position names the value's inside, not the key.
    ConfigProblems.Reporter here = ConfigProblems.at("");
    here.raw("unknown key '" + here.path(propertyName) + "'" + Suggestions.knownKeys(propertyName, known));
    p.skipChildren();
    return true;
  }
}
