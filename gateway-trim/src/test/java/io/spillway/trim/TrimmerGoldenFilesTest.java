package io.spillway.trim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * One real-looking source file per language, each with the error it produced pasted below it, trimmed
 * and compared with a reviewed expected file ({@code *.trimmed.txt} beside it). Run with
 * {@code -Dspillway.golden.update=true} to rewrite the expected files after a deliberate change, then
 * review the diff.
 */
class TrimmerGoldenFilesTest {
  /** Small limits so that files of a hundred lines show every kind of cut. */
  static final TrimSettings SETTINGS = new TrimSettings(20, 2, 3, 40, "... (context trimmed)");
  private static final ContextTrimmer TRIMMER = new ContextTrimmer(SETTINGS);

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      python.py.txt       | py     | PYTHON     | def total(self, order: Order) -> decimal.Decimal:
      javascript.ts.txt   | ts     | JAVASCRIPT | add(product: Product, quantity = 1): void {
      java.java.txt       | java   | JAVA       | private Line lineFor(Usage usage) {
      kotlin.kt.txt       | kotlin | KOTLIN     | fun record(id: String, position: Position) {
      go.go.txt           | go     | GO         | func (s *Server) handleEnqueue(w http.ResponseWriter, r *http.Request) {
      c.cpp.txt           | cpp    | C          | std::size_t drain(RingBuffer &ring, Frame *frame) {
      csharp.cs.txt       | cs     | CSHARP     | public async Task<bool> ReserveAsync(Reservation reservation)
      rust.rs.txt         | rust   | RUST       | fn factor(&mut self) -> f64 {
      sql.sql.txt         | sql    | SQL        | CREATE OR REPLACE FUNCTION transfer(p_from BIGINT, p_to BIGINT, p_amount NUMERIC)
      shell.sh.txt        | bash   | SHELL      | main() {
      """)
  void trimsEachLanguageToItsTailDefinitionsAndTrace(String file, String fenceInfo, Language language,
      String failingFunction) throws IOException {
    String source = resource(file);
    Language fromFence = Language.fromFenceInfo(fenceInfo);
    assertThat(fromFence).isEqualTo(language);

    String trimmed = TRIMMER.trimCode(source, fromFence);

    Path expectedFile = resourceDir().resolve(file.replace(".txt", ".trimmed.txt"));
    if (Boolean.getBoolean("spillway.golden.update")) {
      Files.writeString(expectedFile, trimmed);
    }
    assertThat(trimmed).isEqualTo(Files.readString(expectedFile));

    List<String> out = Arrays.asList(trimmed.split("\n"));
    assertThat(out).contains(SETTINGS.marker());
    assertThat(out).anyMatch(line -> line.strip().equals(failingFunction));
    assertThat(out.get(out.size() - 1)).isEqualTo(lastLine(source));
    assertThat(out).noneMatch(String::isBlank);
    assertThat(trimmed.length()).isLessThan(source.length());
    // The language is recognised without the fence's help as well.
    String[] lines = source.split("\n");
    assertThat(LanguageDetector.detect(lines, 0, lines.length)).isEqualTo(language);
    // Trimming again changes nothing.
    assertThat(TRIMMER.trimCode(trimmed, fromFence)).isSameAs(trimmed);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      python.py.txt       | 11
      javascript.ts.txt   | 5
      java.java.txt       | 4
      kotlin.kt.txt       | 6
      go.go.txt           | 11
      c.cpp.txt           | 3
      csharp.cs.txt       | 6
      rust.rs.txt         | 14
      sql.sql.txt         | 2
      shell.sh.txt        | 1
      """)
  void keepsEveryLineOfTheStackTrace(String file, int traceLines) throws IOException {
    String[] lines = resource(file).split("\n");
    StackTraces traces = StackTraces.find(lines);
    assertThat(traces.traceLines).as("trace lines found in " + file).isEqualTo(traceLines);
    String trimmed = TRIMMER.trimCode(resource(file), null);
    for (int i = 0; i < lines.length; i++) {
      if (traces.trace[i]) {
        assertThat(trimmed).contains(lines[i]);
      }
    }
  }

  static String lastLine(String text) {
    String[] lines = text.split("\n");
    return lines[lines.length - 1];
  }

  static String resource(String name) throws IOException {
    try (InputStream in = TrimmerGoldenFilesTest.class.getResourceAsStream("/trim/" + name)) {
      if (in == null) {
        throw new IOException("no test resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  static Path resourceDir() {
    return Path.of("src/test/resources/trim");
  }
}
