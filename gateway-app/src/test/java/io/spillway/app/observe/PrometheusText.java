package io.spillway.app.observe;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads samples out of Prometheus text exposition, for assertions. */
final class PrometheusText {
  private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s+(\\S+)$");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  record Sample(String name, Map<String, String> labels, double value) {}

  private final List<Sample> samples = new ArrayList<>();

  PrometheusText(String text) {
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher m = SAMPLE.matcher(line.trim());
      if (!m.matches()) {
        throw new IllegalArgumentException("not a sample line: " + line);
      }
      Map<String, String> labels = new LinkedHashMap<>();
      if (m.group(3) != null) {
        Matcher l = LABEL.matcher(m.group(3));
        while (l.find()) {
          labels.put(l.group(1), l.group(2));
        }
      }
      samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4))));
    }
  }

  /** The sum of every sample of {@code name} whose labels include all of {@code labels} (name/value pairs). */
  double sum(String name, String... labels) {
    double total = 0;
    for (Sample sample : matching(name, labels)) {
      total += sample.value();
    }
    return total;
  }

  List<Sample> matching(String name, String... labels) {
    List<Sample> out = new ArrayList<>();
    outer:
    for (Sample sample : samples) {
      if (!sample.name().equals(name)) {
        continue;
      }
      for (int i = 0; i < labels.length; i += 2) {
        if (!labels[i + 1].equals(sample.labels().get(labels[i]))) {
          continue outer;
        }
      }
      out.add(sample);
    }
    return out;
  }

  List<Sample> all() {
    return samples;
  }
}
