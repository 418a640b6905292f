// What the two conversation scripts share: where the prompts come from, a fetch that notes which
// backend answered, and the one JSON line printed per turn.
import { createInterface } from 'node:readline';

/** The gateway's base URL and key, from the variables the OpenAI SDKs read. */
export function gateway() {
  const baseURL = process.env.OPENAI_BASE_URL;
  const apiKey = process.env.OPENAI_API_KEY;
  if (!baseURL || !apiKey) {
    throw new Error('set OPENAI_BASE_URL (the gateway, ending in /v1) and OPENAI_API_KEY (a gateway key)');
  }
  return { baseURL, apiKey, model: process.env.MODEL ?? 'gpt-4.1', stream: process.env.STREAM === 'true' };
}

/**
 * The user's messages, one per turn: with a turn count (first argument, or TURNS) that many made-up
 * ones; otherwise the lines of stdin when it is not a terminal (a test types them one at a time and
 * reads each answer before the next); otherwise 3 made-up ones.
 */
export async function* prompts() {
  const count = process.argv[2] ?? process.env.TURNS;
  if (count === undefined && !process.stdin.isTTY) {
    for await (const line of createInterface({ input: process.stdin })) {
      if (line.trim() !== '') yield line;
    }
    return;
  }
  const turns = Number(count ?? 3);
  for (let i = 1; i <= turns; i++) yield `Turn ${i}: tell me one more thing about rivers.`;
}

/**
 * A fetch that passes every call through unchanged and remembers the status and the
 * x-spillway-backend header of the last answer: the SDKs do not show response headers for every call.
 */
export function observingFetch() {
  const seen = { status: null, backend: null };
  const wrapped = async (input, init) => {
    const response = await fetch(input, init);
    seen.status = response.status;
    seen.backend = response.headers.get('x-spillway-backend');
    return response;
  };
  return { fetch: wrapped, seen };
}

/** Plays every turn with `turn(prompt)`, one JSON line each; exits 1 if any turn failed. */
export async function play(seen, turn) {
  let failed = 0;
  let number = 0;
  for await (const prompt of prompts()) {
    number++;
    seen.status = null;
    seen.backend = null;
    try {
      const { text, responseId } = await turn(prompt);
      console.log(JSON.stringify({ turn: number, ok: true, status: seen.status, backend: seen.backend, responseId, text }));
    } catch (error) {
      failed++;
      const status = error?.statusCode ?? error?.status ?? seen.status;
      const body = error?.responseBody ?? error?.error ?? null;
      console.log(JSON.stringify({ turn: number, ok: false, status, backend: seen.backend, error: String(error?.message ?? error), body }));
    }
  }
  process.exitCode = failed === 0 ? 0 : 1;
}
