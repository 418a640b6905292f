package io.spillway.trim;

/**
 * What the trimmer keeps of each oversized code block.
 *
 * @param keepLastLines the last code lines
 * @param keepDefinitions the last function/method/class definitions
 * @param keepTraceDefinitions further definitions named by a stack trace's frames
 * @param maxDefinitionLines code lines kept of one definition
 * @param marker the one line that replaces each cut
 */
public record TrimSettings(
    int keepLastLines, int keepDefinitions, int keepTraceDefinitions, int maxDefinitionLines, String marker) {

  public static final TrimSettings DEFAULTS = new TrimSettings(50, 3, 3, 120, "... (context trimmed)");

  public TrimSettings {
    if (keepLastLines < 1 || keepDefinitions < 0 || keepTraceDefinitions < 0 || maxDefinitionLines < 1) {
      throw new IllegalArgumentException("trim settings out of range");
    }
    if (marker == null || marker.isBlank() || marker.indexOf('\n') >= 0) {
      throw new IllegalArgumentException("the trim marker must be one non-blank line");
    }
  }
}
