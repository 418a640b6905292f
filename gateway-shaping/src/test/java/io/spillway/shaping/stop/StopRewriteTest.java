package io.spillway.shaping.stop;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.ShapingConfig;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;

class StopRewriteTest {
  private static final ShapingConfig.StopConfig CONFIG = ShapingConfig.StopConfig.DEFAULTS;
  private static final StopRewrite REWRITE = new StopRewrite(CONFIG);

  @Test
  void riskyStopIsRemovedFromTheRequestAndTheOutputCapped() throws IOException {
    ObjectNode body = json("{\"model\":\"gpt-4o\",\"stop\":[\"\\n\\n\",\"END\"],\"max_tokens\":4000,\"messages\":[]}");

    List<String> removed = REWRITE.rewrite(Route.CHAT_COMPLETIONS, body);

    assertThat(removed).containsExactly("\n\n");
    assertThat(body.get("stop")).hasSize(1);
    assertThat(body.get("stop").get(0).asText()).isEqualTo("END");
    assertThat(body.get("max_tokens").asInt()).isEqualTo(CONFIG.maxTokens());
  }

  @Test
  void aSingleRiskyStopStringLeavesNoStopAndSetsTheCapWhenTheRequestHadNone() throws IOException {
    ObjectNode body = json("{\"model\":\"gpt-3.5-turbo-instruct\",\"prompt\":\"def f():\",\"stop\":\"\\n\\n\"}");

    assertThat(REWRITE.rewrite(Route.COMPLETIONS, body)).containsExactly("\n\n");

    assertThat(body.has("stop")).isFalse();
    assertThat(body.get("max_tokens").asInt()).isEqualTo(CONFIG.maxTokens());
  }

  @Test
  void aSmallerOutputLimitIsKeptAndMaxCompletionTokensIsCappedWhenThatIsWhatTheRequestUses() throws IOException {
    ObjectNode small = json("{\"stop\":\"\\n\\n\",\"max_tokens\":64,\"messages\":[]}");
    REWRITE.rewrite(Route.CHAT_COMPLETIONS, small);
    assertThat(small.get("max_tokens").asInt()).isEqualTo(64);

    ObjectNode modern = json("{\"stop\":\"\\n\\n\",\"max_completion_tokens\":9000,\"messages\":[]}");
    REWRITE.rewrite(Route.CHAT_COMPLETIONS, modern);
    assertThat(modern.get("max_completion_tokens").asInt()).isEqualTo(CONFIG.maxTokens());
    assertThat(modern.has("max_tokens")).isFalse();
  }

  @Test
  void harmlessStopsAndTheResponsesApiAreLeftAlone() throws IOException {
    assertThat(REWRITE.applies(Route.CHAT_COMPLETIONS, json("{\"stop\":[\"END\"],\"messages\":[]}"))).isFalse();
    assertThat(REWRITE.applies(Route.RESPONSES, json("{\"stop\":\"\\n\\n\",\"input\":\"x\"}"))).isFalse();
    assertThat(REWRITE.applies(Route.CHAT_COMPLETIONS, json("{\"messages\":[]}"))).isFalse();
  }

  @Test
  void bufferedChatAnswerIsCutAtTheFirstMatchWithFinishReasonStop() throws IOException {
    String upstream = """
        {"id":"chatcmpl-1","object":"chat.completion","choices":[
          {"index":0,"message":{"role":"assistant","content":"def add(a, b):\\n    return a + b\\n\\n\\ndef sub(a, b):"},"finish_reason":"length"},
          {"index":1,"message":{"role":"assistant","content":"no blank line here"},"finish_reason":"stop"}],
         "usage":{"prompt_tokens":5,"completion_tokens":20,"total_tokens":25}}
        """;
    GatewayResponse response = GatewayResponse.json(200, upstream.getBytes(StandardCharsets.UTF_8));

    JsonNode cut = Json.parse(StopRewrite.cut(response, Route.CHAT_COMPLETIONS, List.of("\n\n")).body());

    assertThat(cut.at("/choices/0/message/content").asText()).isEqualTo("def add(a, b):\n    return a + b");
    assertThat(cut.at("/choices/0/finish_reason").asText()).isEqualTo("stop");
    assertThat(cut.at("/choices/1/message/content").asText()).isEqualTo("no blank line here");
    assertThat(cut.at("/usage/completion_tokens").asInt()).isEqualTo(20);
  }

  @Test
  void bufferedCompletionIsCutAndAnErrorAnswerIsLeftAlone() throws IOException {
    String upstream = "{\"choices\":[{\"text\":\"x = 1\\n\\ny = 2\",\"index\":0,\"finish_reason\":\"length\"}]}";
    GatewayResponse ok = GatewayResponse.json(200, upstream.getBytes(StandardCharsets.UTF_8));
    assertThat(Json.parse(StopRewrite.cut(ok, Route.COMPLETIONS, List.of("\n\n")).body()).at("/choices/0/text").asText())
        .isEqualTo("x = 1");

    GatewayResponse error = GatewayResponse.json(503, "{\"error\":{\"message\":\"a\\n\\nb\"}}".getBytes(StandardCharsets.UTF_8));
    assertThat(StopRewrite.cut(error, Route.COMPLETIONS, List.of("\n\n"))).isSameAs(error);
  }

  @Test
  void streamIsCutAtTheFirstMatchWhereverTheChunksSplitIt() {
    String text = "first line\nsecond\n\nthird\n\nfourth";
    String expected = "first line\nsecond";
    for (Route route : List.of(Route.CHAT_COMPLETIONS, Route.COMPLETIONS)) {
      for (int i = 0; i <= text.length(); i++) {
        for (int j = i; j <= text.length(); j++) {
          List<String> pieces = List.of(text.substring(0, i), text.substring(i, j), text.substring(j));
          Result result = run(route, List.of("\n\n"), pieces, true);
          assertThat(result.text(0)).as("split at %d/%d", i, j).isEqualTo(expected);
          assertThat(result.finishReasons(0)).as("split at %d/%d", i, j).containsExactly("stop");
          assertThat(result.done()).isTrue();
          assertThat(result.usage()).isTrue();
        }
      }
    }
  }

  @Test
  void textThatOnlyStartsLikeAStopSequenceIsHeldBackThenReleased() {
    String text = "a\nb\n\n\n-c\n";
    for (int i = 0; i <= text.length(); i++) {
      List<String> pieces = List.of(text.substring(0, i), text.substring(i));
      Result result = run(Route.CHAT_COMPLETIONS, List.of("\n\n\n-x"), pieces, true);
      assertThat(result.text(0)).as("split at %d", i).isEqualTo(text);
      assertThat(result.finishReasons(0)).containsExactly("length");
    }
  }

  @Test
  void theEarliestOfSeveralStopSequencesWinsOneCharacterPerChunk() {
    String text = "print(x)\n```\nmore\n\nrest";
    List<String> pieces = new ArrayList<>();
    for (char c : text.toCharArray()) {
      pieces.add(String.valueOf(c));
    }
    Result result = run(Route.COMPLETIONS, List.of("\n\n", "\n```"), pieces, true);
    assertThat(result.text(0)).isEqualTo("print(x)");
    assertThat(result.finishReasons(0)).containsExactly("stop");
  }

  @Test
  void eachChoiceIsCutOnItsOwn() {
    List<SseEvent> events = new ArrayList<>();
    events.add(chatChunk(0, "one\n", null));
    events.add(chatChunk(1, "two ", null));
    events.add(chatChunk(0, "\nafter", null));
    events.add(chatChunk(1, "stays", null));
    events.add(chatChunk(0, "", "length"));
    events.add(chatChunk(1, "", "stop"));
    events.add(SseEvent.DONE);

    Result result = collect(new StopCuttingEventStream(new ListStream(events), Route.CHAT_COMPLETIONS, List.of("\n\n")),
        true);

    assertThat(result.text(0)).isEqualTo("one");
    assertThat(result.finishReasons(0)).containsExactly("stop");
    assertThat(result.text(1)).isEqualTo("two stays");
    assertThat(result.finishReasons(1)).containsExactly("stop");
  }

  @Test
  void heldTextIsSentBeforeTheEndWhenTheStreamHasNoFinishChunk() {
    List<SseEvent> events = List.of(completionChunk("done\n", null), SseEvent.DONE);

    Result result = collect(new StopCuttingEventStream(new ListStream(events), Route.COMPLETIONS, List.of("\n\n")), false);

    assertThat(result.text(0)).isEqualTo("done\n");
    assertThat(result.done()).isTrue();
  }

  @Test
  void aPendingPollPassesThroughAndNothingHeldBackIsLostOrRepeated() {
    List<SseEvent> events = List.of(chatChunk(0, "one\n", null), chatChunk(1, "two\n", null),
        chatChunk(0, "\nafter", null), chatChunk(1, "stays", null), SseEvent.DONE);
    HesitantStream upstream = new HesitantStream(events);
    StopCuttingEventStream stream = new StopCuttingEventStream(upstream, Route.CHAT_COMPLETIONS, List.of("\n\n"));

    assertThat(stream.nonBlocking()).isTrue();
    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    Result result = collect(stream, true);

    assertThat(upstream.pendings).isGreaterThan(events.size());
    assertThat(result.text(0)).isEqualTo("one");
    assertThat(result.finishReasons(0)).containsExactly("stop");
    assertThat(result.text(1)).as("held-back text, released once before the end").isEqualTo("two\nstays");
    assertThat(result.done()).isTrue();
  }

  @Test
  void responsesApiEventsAndNonJsonDataPassThrough() {
    SseEvent typed = new SseEvent("response.output_text.delta", "{\"delta\":\"a\\n\\nb\"}");
    SseEvent odd = SseEvent.data("not json");
    StopCuttingEventStream stream =
        new StopCuttingEventStream(new ListStream(List.of(typed, odd, SseEvent.DONE)), Route.COMPLETIONS, List.of("\n\n"));
    assertThat(stream.next()).isSameAs(typed);
    assertThat(stream.next()).isSameAs(odd);
    assertThat(stream.next()).isEqualTo(SseEvent.DONE);
    assertThat(stream.next()).isNull();
  }

  @Test
  void streamedResponseIsWrappedByCut() {
    GatewayResponse streamed = GatewayResponse.streamed(200, Headers.EMPTY,
        new ListStream(List.of(completionChunk("a\n\nb", "length"), SseEvent.DONE)));
    GatewayResponse cut = StopRewrite.cut(streamed, Route.COMPLETIONS, List.of("\n\n"));
    assertThat(collect(cut.stream(), false).text(0)).isEqualTo("a");
  }

  // ---- helpers ----

  private static Result run(Route route, List<String> stops, List<String> pieces, boolean usage) {
    List<SseEvent> events = new ArrayList<>();
    if (route == Route.CHAT_COMPLETIONS) {
      events.add(SseEvent.data("{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
          + "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}],\"usage\":null}"));
    }
    for (String piece : pieces) {
      events.add(route == Route.CHAT_COMPLETIONS ? chatChunk(0, piece, null) : completionChunk(piece, null));
    }
    events.add(route == Route.CHAT_COMPLETIONS ? chatChunk(0, "", "length") : completionChunk("", "length"));
    if (usage) {
      events.add(SseEvent.data("{\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":9,"
          + "\"total_tokens\":12}}"));
    }
    events.add(SseEvent.DONE);
    return collect(new StopCuttingEventStream(new ListStream(events), route, stops), route == Route.CHAT_COMPLETIONS);
  }

  private static SseEvent chatChunk(int index, String content, String finish) {
    ObjectNode chunk = Json.object();
    chunk.put("id", "chatcmpl-s1");
    chunk.put("object", "chat.completion.chunk");
    ObjectNode choice = chunk.putArray("choices").addObject();
    choice.put("index", index);
    choice.putObject("delta").put("content", content);
    if (finish == null) {
      choice.putNull("finish_reason");
    } else {
      choice.put("finish_reason", finish);
    }
    chunk.putNull("usage");
    return SseEvent.data(Json.toString(chunk));
  }

  private static SseEvent completionChunk(String text, String finish) {
    ObjectNode chunk = Json.object();
    chunk.put("id", "cmpl-s1");
    chunk.put("object", "text_completion");
    ObjectNode choice = chunk.putArray("choices").addObject();
    choice.put("index", 0);
    choice.put("text", text);
    if (finish == null) {
      choice.putNull("finish_reason");
    } else {
      choice.put("finish_reason", finish);
    }
    return SseEvent.data(Json.toString(chunk));
  }

  private static ObjectNode json(String text) throws IOException {
    return (ObjectNode) Json.parse(text);
  }

  /** What a client would assemble from the stream. */
  record Result(List<StringBuilder> texts, List<List<String>> finishes, boolean done, boolean usage) {
    String text(int index) {
      return texts.get(index).toString();
    }

    List<String> finishReasons(int index) {
      return finishes.get(index);
    }
  }

  private static Result collect(EventStream stream, boolean chat) {
    List<StringBuilder> texts = new ArrayList<>();
    List<List<String>> finishes = new ArrayList<>();
    boolean done = false;
    boolean usage = false;
    SseEvent event;
    while ((event = stream.next()) != null) {
      assertThat(done).as("nothing after [DONE]").isFalse();
      if (event.isDone()) {
        done = true;
        continue;
      }
      JsonNode chunk;
      try {
        chunk = Json.parse(event.data());
      } catch (IOException e) {
        throw new AssertionError(e);
      }
      if (chunk.path("usage").isObject()) {
        usage = true;
      }
      for (JsonNode choice : chunk.path("choices")) {
        int index = choice.path("index").asInt();
        while (texts.size() <= index) {
          texts.add(new StringBuilder());
          finishes.add(new ArrayList<>());
        }
        assertThat(finishes.get(index)).as("no chunk after a choice finished").isEmpty();
        JsonNode text = chat ? choice.path("delta").path("content") : choice.path("text");
        if (text.isTextual()) {
          texts.get(index).append(text.asText());
        }
        if (choice.path("finish_reason").isTextual()) {
          finishes.get(index).add(choice.get("finish_reason").asText());
        }
      }
    }
    return new Result(texts, finishes, done, usage);
  }

  /** Given events, each answered PENDING first (its readiness callback runs at once). */
  static final class HesitantStream implements EventStream {
    private final List<SseEvent> events;
    private int next;
    private boolean hesitated;
    int pendings;

    HesitantStream(List<SseEvent> events) {
      this.events = events;
    }

    @Override
    public SseEvent poll() {
      if (!hesitated) {
        hesitated = true;
        pendings++;
        return SseEvent.PENDING;
      }
      hesitated = false;
      return next < events.size() ? events.get(next++) : null;
    }

    @Override
    public void onReady(Runnable action) {
      action.run();
    }

    @Override
    public boolean nonBlocking() {
      return true;
    }

    @Override
    public void close() {}

    @Override
    public boolean started() {
      return next > 0;
    }
  }

  /** A stream of given events. */
  static final class ListStream implements EventStream {
    private final Iterator<SseEvent> events;
    private boolean started;

    ListStream(List<SseEvent> events) {
      this.events = events.iterator();
    }

    @Override
    public SseEvent poll() {
      started = true;
      return events.hasNext() ? events.next() : null;
    }

    @Override
    public void close() {}

    @Override
    public boolean started() {
      return started;
    }
  }
}
