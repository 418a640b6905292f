// A multi-turn chat with the Vercel AI SDK's defaults on the Responses API: `openai.responses(model)`
// with `store` left on, the whole message history passed back each turn. From the second turn the
// SDK replaces each earlier assistant answer with {"type":"item_reference","id":"msg_…"}.
//
//   OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=<gateway key> [STREAM=true] [MODEL=gpt-4.1] \
//     node vercel-ai-chat.mjs [turns]        (or type one message per line on stdin)
//
// Retries are off (maxRetries: 0): one failed call fails its turn instead of being hidden by a retry.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import { gateway, observingFetch, play } from './turns.mjs';

const { baseURL, apiKey, model, stream } = gateway();
const { fetch, seen } = observingFetch();
const openai = createOpenAI({ baseURL, apiKey, fetch });
const messages = [];

await play(seen, async (prompt) => {
  messages.push({ role: 'user', content: prompt });
  const request = { model: openai.responses(model), messages, maxRetries: 0 };
  let text;
  let response;
  if (stream) {
    let streamError;
    const result = streamText({ ...request, onError: ({ error }) => { streamError = error; } });
    try {
      text = await result.text;
      response = await result.response;
    } catch (error) {
      throw streamError ?? error; // the gateway's error, not "No output generated"
    }
    if (streamError) throw streamError;
  } else {
    const result = await generateText(request);
    text = result.text;
    response = result.response;
  }
  messages.push(...response.messages);
  return { text, responseId: response.id };
});
