package io.spillway.local;

import java.util.concurrent.ThreadLocalRandom;

/** Ids in the shapes OpenAI uses ({@code chatcmpl-…}, {@code call_…}, {@code resp_…}). */
public final class Ids {
  private static final char[] ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

  private Ids() {}

  public static String next(String prefix) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    StringBuilder out = new StringBuilder(prefix.length() + 24).append(prefix);
    for (int i = 0; i < 24; i++) {
      out.append(ALPHABET[random.nextInt(ALPHABET.length)]);
    }
    return out.toString();
  }
}
