package io.spillway.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Tells {@link ConfigProblems} where in the file each config record is being bound, so that its
 * constructor reports problems under their key path ({@code cloud.routes[1].kind}).
 */
final class BindingPaths extends BeanDeserializerModifier {
  @Override
  public JsonDeserializer<?> modifyDeserializer(
      DeserializationConfig config, BeanDescription description, JsonDeserializer<?> deserializer) {
    Class<?> type = description.getBeanClass();
    if (type.isRecord() && type.getPackageName().equals(BindingPaths.class.getPackageName())) {
      return new AtPath(deserializer);
    }
    return deserializer;
  }

  @Override
  public JsonDeserializer<?> modifyEnumDeserializer(
      DeserializationConfig config, JavaType type, BeanDescription description, JsonDeserializer<?> deserializer) {
    if (Choice.class.isAssignableFrom(type.getRawClass())) {
      return new AtPath(deserializer);
    }
    return deserializer;
  }

  /** The key path of the value the parser is on, as the config's messages write it. */
  static String pathOf(JsonParser p) {
    JsonStreamContext context = p.getParsingContext();
    if (p.currentToken() == JsonToken.START_OBJECT && context.inObject() && context.getCurrentName() == null) {
      context = context.getParent(); // a streaming parser has already entered the object
    }
    Deque<String> parts = new ArrayDeque<>();
    for (JsonStreamContext c = context; c != null && !c.inRoot(); c = c.getParent()) {
      if (c.inObject() && c.getCurrentName() != null) {
        parts.push("." + c.getCurrentName());
      } else if (c.inArray()) {
        parts.push("[" + c.getCurrentIndex() + "]");
      }
    }
    String path = String.join("", parts);
    return path.startsWith(".") ? path.substring(1) : path;
  }

  private static final class AtPath extends DelegatingDeserializer {
    AtPath(JsonDeserializer<?> delegate) {
      super(delegate);
    }

    @Override
    protected JsonDeserializer<?> newDelegatingInstance(JsonDeserializer<?> delegate) {
      return new AtPath(delegate);
    }

    @Override
    public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      return ConfigProblems.within(pathOf(p), () -> _delegatee.deserialize(p, ctxt));
    }
  }
}
