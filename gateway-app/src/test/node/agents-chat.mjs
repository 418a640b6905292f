// A multi-turn conversation with the OpenAI Agents SDK, continued server-side: each turn sends only
// the new message and `previousResponseId` (the last turn's response id), as the SDK's guide shows.
//
//   OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=<gateway key> [STREAM=true] [MODEL=gpt-4.1] \
//     node agents-chat.mjs [turns]        (or type one message per line on stdin)
//
// The OpenAI client is the SDK's default one but for maxRetries: 0 (one failed call fails its turn)
// and a fetch that notes the x-spillway-backend header. Tracing is off: the SDK would export traces
// straight to https://api.openai.com/v1/traces/ingest with OPENAI_API_KEY, here a gateway key.
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled } from '@openai/agents';
import OpenAI from 'openai';
import { gateway, observingFetch, play } from './turns.mjs';

const { baseURL, apiKey, model, stream } = gateway();
const { fetch, seen } = observingFetch();
setDefaultOpenAIClient(new OpenAI({ baseURL, apiKey, fetch, maxRetries: 0 }));
setTracingDisabled(true);
const agent = new Agent({ name: 'Assistant', instructions: 'You are a helpful assistant.', model });
let previousResponseId;

await play(seen, async (prompt) => {
  let result;
  if (stream) {
    result = await run(agent, prompt, { previousResponseId, stream: true });
    for await (const _event of result) {
      // read the stream to its end, as a chat UI does
    }
    await result.completed;
    if (result.error) throw result.error;
  } else {
    result = await run(agent, prompt, { previousResponseId });
  }
  previousResponseId = result.lastResponseId;
  return { text: result.finalOutput, responseId: result.lastResponseId };
});
