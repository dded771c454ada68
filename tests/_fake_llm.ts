/**
 * A fake chat completions server on loopback, for tests and benchmarks: it
 * speaks the OpenAI chat completions shape (and the embeddings API, with the
 * {@linkcode embeddings} handler), answers as each request's script
 * says (a good answer, 429 with `Retry-After`, 500, slowly, malformed JSON, a
 * dropped connection, any raw response), and records every request it gets.
 *
 * @example
 * ```ts
 * import { fakeLlm, reply } from "./_fake_llm.ts";
 * await using server = fakeLlm({ script: [reply.rateLimited("0.2"), reply.ok("hi")] });
 * // point a client at server.baseUrl (`http://127.0.0.1:PORT/v1`)
 * ```
 *
 * @module
 */

/** One request as the server received it. */
export interface RecordedRequest {
  /** Arrival order, from 0. */
  index: number;
  /** When the request's head arrived (`performance.now()` of this process, ms). */
  at: number;
  /** The method. */
  method: string;
  /** The path and query, e.g. `/v1/chat/completions`. */
  path: string;
  /** The headers, names in lower case. */
  headers: Record<string, string>;
  /** The body as text (`""` when none). */
  body: string;
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  json: unknown;
}

/** How the server answers one request. */
export type FakeReply =
  | {
    /** A chat completion whose `choices[0].message.content` is `content`. */
    kind: "ok";
    content: string;
    /** The `model` answered. @default {the request's model} */
    model?: string;
    /** The `usage` answered. @default {token counts of the texts} */
    usage?: Record<string, number>;
    /** `choices[0].finish_reason`. @default {"stop"} */
    finishReason?: string;
    /** Wait before answering, in ms. */
    delayMs?: number;
  }
  | {
    /** A response with any status, body and headers. */
    kind: "raw";
    status: number;
    body: string;
    headers?: Record<string, string>;
    delayMs?: number;
  }
  | {
    /**
     * The response head goes out, then the connection closes mid-body: in
     * Deno, `fetch` resolves and `response.text()` rejects with
     * `TypeError: error reading a body from connection`. (A server that
     * refuses connections, e.g. a closed one, makes `fetch` itself reject
     * with a `TypeError`.)
     */
    kind: "drop";
    delayMs?: number;
  };

/** Builders of {@linkcode FakeReply} values. */
export const reply = {
  /** A chat completion answering `content`. */
  ok(
    content: string,
    extra: Omit<Extract<FakeReply, { kind: "ok" }>, "kind" | "content"> = {},
  ): FakeReply {
    return { kind: "ok", content, ...extra };
  },
  /** 429 Too Many Requests, with `Retry-After` when given. */
  rateLimited(retryAfter?: string): FakeReply {
    return {
      kind: "raw",
      status: 429,
      body: '{"error":{"message":"Rate limit reached","type":"requests"}}',
      headers: {
        "content-type": "application/json",
        ...(retryAfter !== undefined ? { "retry-after": retryAfter } : {}),
      },
    };
  },
  /** An HTTP error status with a body (500 by default). */
  error(
    status = 500,
    body = '{"error":{"message":"The server had an error"}}',
  ): FakeReply {
    return {
      kind: "raw",
      status,
      body,
      headers: { "content-type": "application/json" },
    };
  },
  /** 200 with a body that is not JSON. */
  malformed(body = '{"choices": [{"message": {"content": "cut off'): FakeReply {
    return {
      kind: "raw",
      status: 200,
      body,
      headers: { "content-type": "application/json" },
    };
  },
  /** 200 with a JSON body. */
  json(value: unknown, status = 200): FakeReply {
    return {
      kind: "raw",
      status,
      body: JSON.stringify(value),
      headers: { "content-type": "application/json" },
    };
  },
  /** A dropped connection. */
  drop(): FakeReply {
    return { kind: "drop" };
  },
  /** Any reply, after `ms` milliseconds. */
  slow(ms: number, then: FakeReply): FakeReply {
    return { ...then, delayMs: ms };
  },
};

/** Decides the reply to one request. */
export type FakeHandler = (
  request: RecordedRequest,
) => FakeReply | Promise<FakeReply>;

/** Options of {@linkcode fakeLlm}. */
export interface FakeLlmOptions {
  /**
   * Replies taken in arrival order; when it runs out, `handler` answers.
   * @default {[]}
   */
  script?: FakeReply[];
  /**
   * Answers requests the script does not cover.
   * @default {echo: an `ok` reply of "echo: " and the last message's content}
   */
  handler?: FakeHandler;
  /**
   * A wait before every reply that sets no `delayMs` of its own, in ms.
   * @default {0}
   */
  delayMs?: number;
  /**
   * Keep request records (a benchmark sending thousands may not want them).
   * @default {true}
   */
  record?: boolean;
}

/** A running fake server. */
export interface FakeLlm extends AsyncDisposable {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** `http://127.0.0.1:PORT/v1`: the `base_url` of an OpenAI client. */
  readonly baseUrl: string;
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[];
  /** How many requests arrived (also when not recorded). */
  readonly count: number;
  /** Replies still queued. */
  readonly script: FakeReply[];
  /** Answers requests the script does not cover; may be replaced. */
  handler: FakeHandler;
  /** Cuts pending delays short and stops the server; waits until it has. */
  close(): Promise<void>;
}

/** The last message's content of a chat completions request, when there is one. */
export function lastMessage(request: RecordedRequest): string {
  const messages = (request.json as { messages?: unknown } | undefined)
    ?.messages;
  const last = Array.isArray(messages) ? messages.at(-1) : undefined;
  const content = (last as { content?: unknown } | undefined)?.content;
  return typeof content === "string" ? content : "";
}

/** The default handler: echoes the last message. */
export const echo: FakeHandler = (request) =>
  reply.ok(`echo: ${lastMessage(request)}`);

/** The texts of an embeddings request: its `input`, one text or a list. */
export function embeddingInputs(request: RecordedRequest): string[] {
  const input = (request.json as { input?: unknown } | undefined)?.input;
  if (typeof input === "string") return [input];
  return Array.isArray(input) ? input.map(String) : [];
}

/**
 * A handler that speaks the embeddings API too: a request to a path ending
 * `/embeddings` gets `vectorOf(text)` for each of its texts, in the
 * OpenAI shape (`data[].embedding`, `index`, `model`, `usage`); any other
 * request goes to `otherwise`.
 *
 * @param vectorOf The vector of a text, as the test chooses it.
 * @param otherwise The handler of other requests.
 * @returns The handler.
 */
export function embeddings(
  vectorOf: (text: string) => number[],
  otherwise: FakeHandler = echo,
): FakeHandler {
  return (request) => {
    if (!request.path.split("?")[0]!.endsWith("/embeddings")) {
      return otherwise(request);
    }
    const texts = embeddingInputs(request);
    const model = (request.json as { model?: unknown } | undefined)?.model;
    const tokens = texts.reduce((n, t) => n + Math.ceil(t.length / 4), 0);
    return reply.json({
      object: "list",
      data: texts.map((text, index) => ({
        object: "embedding",
        index,
        embedding: vectorOf(text),
      })),
      model: typeof model === "string" ? model : "fake-embedding",
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  };
}

const encoder = new TextEncoder();

function completion(
  request: RecordedRequest,
  r: Extract<FakeReply, { kind: "ok" }>,
) {
  const model = (request.json as { model?: unknown } | undefined)?.model;
  return {
    id: `chatcmpl-fake-${request.index}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model: r.model ?? (typeof model === "string" ? model : "fake-model"),
    choices: [{
      index: 0,
      message: { role: "assistant", content: r.content },
      finish_reason: r.finishReason ?? "stop",
    }],
    usage: r.usage ?? {
      prompt_tokens: Math.ceil(request.body.length / 4),
      completion_tokens: Math.ceil(r.content.length / 4),
      total_tokens: Math.ceil(request.body.length / 4) +
        Math.ceil(r.content.length / 4),
    },
  };
}

/**
 * Starts a fake chat completions server on 127.0.0.1, on a free port.
 *
 * @param options The script, the fallback handler, a delay for every reply.
 * @returns The server: its URL, its recorded requests and `close()`.
 */
export function fakeLlm(options: FakeLlmOptions = {}): FakeLlm {
  const script = [...(options.script ?? [])];
  const requests: RecordedRequest[] = [];
  const keep = options.record ?? true;
  const defaultDelay = options.delayMs ?? 0;
  // Pending delays, so that close() can cut them short: a test must not wait
  // for a slow answer its client has already given up on.
  const waits = new Set<() => void>();
  let closing = false;
  let count = 0;

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      if (ms <= 0 || closing) return resolve();
      const done = () => {
        clearTimeout(timer);
        waits.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waits.add(done);
    });

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const at = performance.now();
      const index = count++;
      // Taken at arrival, so that the script follows arrival order.
      const scripted = script.shift();
      const url = new URL(req.url);
      const body = await req.text();
      let json: unknown;
      try {
        json = body === "" ? undefined : JSON.parse(body);
      } catch (error) {
        // A body that is not JSON is recorded as text only.
        if (!(error instanceof SyntaxError)) throw error;
      }
      const recorded: RecordedRequest = {
        index,
        at,
        method: req.method,
        path: url.pathname + url.search,
        headers: Object.fromEntries(req.headers),
        body,
        json,
      };
      if (keep) requests.push(recorded);
      const r = scripted ?? await fake.handler(recorded);
      await wait(r.delayMs ?? defaultDelay);
      switch (r.kind) {
        case "ok":
          return Response.json(completion(recorded, r));
        case "raw":
          return new Response(r.body, {
            status: r.status,
            ...(r.headers !== undefined ? { headers: r.headers } : {}),
          });
        case "drop":
          // A streamed body shorter than its content-length: the server
          // closes the connection mid-body. (A body stream that errors does
          // the same, but Deno.serve logs its stack trace on every drop.)
          return new Response(
            ReadableStream.from([encoder.encode('{"choices": [')]),
            { headers: { "content-length": "4096" } },
          );
      }
    },
  );

  const url = `http://127.0.0.1:${server.addr.port}`;
  const fake: FakeLlm = {
    url,
    baseUrl: `${url}/v1`,
    requests,
    get count() {
      return count;
    },
    script,
    handler: options.handler ?? echo,
    async close() {
      if (closing) return await server.finished;
      closing = true;
      for (const done of [...waits]) done();
      await server.shutdown();
    },
    [Symbol.asyncDispose]() {
      return fake.close();
    },
  };
  return fake;
}

/**
 * The gaps between consecutive request arrivals, in ms.
 *
 * @param requests Recorded requests.
 * @returns One gap fewer than requests.
 */
export function arrivalGaps(requests: readonly RecordedRequest[]): number[] {
  const times = requests.map((r) => r.at).sort((a, b) => a - b);
  return times.slice(1).map((t, i) => t - times[i]!);
}

/**
 * Whether requests through a rate limit of one per `interval` ms, started at
 * `start` (`performance.now()`), kept to it as the server saw them: the k-th
 * arrival (from 0) came no sooner than `start + k·interval`. A loaded machine
 * only makes arrivals later, so this cannot fail for lateness; a burst (two
 * let through at once) fails. `early` allows the timers' rounding.
 *
 * @param requests Recorded requests.
 * @param start When the first request could have been let through.
 * @param interval The limit's spacing, in ms.
 * @param early How much sooner than its slot an arrival may be, in ms.
 * @returns Each arrival's lead over its slot that broke it (none when kept).
 */
export function slotsBroken(
  requests: readonly RecordedRequest[],
  start: number,
  interval: number,
  early = 2,
): string[] {
  const times = requests.map((r) => r.at - start).sort((a, b) => a - b);
  return times.flatMap((t, k) =>
    t < k * interval - early
      ? [
        `request ${k + 1} came ${Math.round(t)} ms after the start, before ${
          k * interval
        } ms`,
      ]
      : []
  );
}
