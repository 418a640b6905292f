package io.spillway.config;

import java.util.Collection;
import java.util.Map;

/** The type a config key expects, said as a person would ({@code a whole number}), not as Java spells it. */
final class ValueTypes {
  private ValueTypes() {}

  static String inPlainWords(Class<?> type) {
    if (type == Integer.class || type == int.class || type == Long.class || type == long.class
        || type == Short.class || type == short.class) {
      return "a whole number";
    }
    if (type == Double.class || type == double.class || type == Float.class || type == float.class) {
      return "a number";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "true or false";
    }
    if (type == String.class) {
      return "a single value (text)";
    }
    if (Collection.class.isAssignableFrom(type) || type.isArray()) {
      return "a list";
    }
    if (type.isEnum() && Choice.class.isAssignableFrom(type)) {
      return "one word";
    }
    if (Map.class.isAssignableFrom(type) || type.isRecord()) {
      return "a mapping (key: value lines)";
    }
    return "a " + type.getSimpleName();
  }
}
