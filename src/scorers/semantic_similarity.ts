/**
 * The `semantic_similarity` scorer: the cosine similarity of the output's
 * and the expected text's embeddings, from an OpenAI-compatible
 * `/embeddings` endpoint.
 *
 * @module
 */

import { errored, type Score, scored } from "../score/mod.ts";
import type { Scorer, ScorerContext } from "./scorer.ts";
import type { Unit } from "../dataset/unit.ts";
import {
  EmbeddingAnswerError,
  EmbeddingsClient,
  type EmbeddingSettings,
} from "../net/embeddings_client.ts";
import { checkThreshold, noExpected, references } from "./_builtin.ts";
import { fingerprint } from "../fingerprint/fingerprint.ts";
import { apiHeadersProblem, refuseSettings } from "../net/_settings_checks.ts";

/**
 * Settings of the `semantic_similarity` scorer (config keys): the embeddings
 * endpoint's, its metric name and its pass mark.
 *
 * @example A stricter pass mark than the default 0.5
 * ```ts
 * import { semanticSimilarity, type SemanticSimilaritySettings } from "./mod.ts";
 * const settings: SemanticSimilaritySettings = { model: "text-embedding-3-small", threshold: 0.8, api_key_env: "OPENAI_API_KEY" };
 * const scorer = semanticSimilarity(settings, { env: () => "sk-test" });
 * if (scorer.range?.join() !== "-1,1") throw new Error("unexpected");
 * ```
 */
export interface SemanticSimilaritySettings extends EmbeddingSettings {
  /**
   * The metric name.
   * @default {"semantic_similarity"}
   */
  name?: string | undefined;
  /**
   * The least cosine similarity that passes, within 0..1. What counts as
   * similar depends on the model: set it from pairs you have judged.
   * @default {0.5}
   */
  threshold?: number | undefined;
}

/**
 * Where embeddings are kept between calls and runs: `run` passes one over
 * the target cache (`.evalpipe/cache`), so a text embedded once is never paid
 * for again.
 *
 * @example A cache in memory: the second unit asks for nothing
 * ```ts
 * import { type EmbeddingCache, semanticSimilarity } from "./mod.ts";
 * let requests = 0;
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
 *   const { input } = await request.json();
 *   requests++;
 *   return Response.json({ data: input.map((_: string, index: number) => ({ index, embedding: [1, 0] })) });
 * });
 * const memory = new Map<string, number[]>();
 * const cache: EmbeddingCache = {
 *   async embed(client, text, signal) {
 *     const hit = memory.get(text);
 *     if (hit !== undefined) return hit;
 *     const [vector] = (await client.embed([text], signal)).vectors;
 *     memory.set(text, vector!);
 *     return vector!;
 *   },
 * };
 * const scorer = semanticSimilarity({ base_url: `http://127.0.0.1:${server.addr.port}/v1`, model: "e" }, { cache });
 * const unit = { example_id: "d#1", unit_id: "d#1", input: "q", output: "yes", expected: "yes" };
 * await scorer.score(unit, {});
 * await scorer.score(unit, {});
 * if (requests !== 1) throw new Error(`${requests} requests`);
 * ```
 */
export interface EmbeddingCache {
  /**
   * The embedding of one text: kept, or asked of the client.
   *
   * @param client The client, whose `identity` and `body([text])` key the text.
   * @param text The text.
   * @param signal Aborting stops the call.
   * @returns Its vector.
   */
  embed(
    client: EmbeddingsClient,
    text: string,
    signal?: AbortSignal,
  ): Promise<number[]>;
}

/**
 * Options of {@linkcode semanticSimilarity}.
 *
 * @example Read the API key from a map instead of the environment
 * ```ts
 * import { semanticSimilarity, type SemanticSimilarityOptions } from "./mod.ts";
 * const options: SemanticSimilarityOptions = { env: (name) => ({ EMBED_KEY: "k" })[name] };
 * const scorer = semanticSimilarity({ model: "e", api_key_env: "EMBED_KEY" }, options);
 * if (!scorer.version.startsWith("semantic_similarity@")) throw new Error("unexpected");
 * ```
 */
export interface SemanticSimilarityOptions {
  /**
   * Reads an environment variable (the API key, `${NAME}` in headers).
   * @default {Deno.env.get}
   */
  env?: ((name: string) => string | undefined) | undefined;
  /**
   * Where embeddings are kept; without one, every text is asked for.
   * @default {undefined}
   */
  cache?: EmbeddingCache | undefined;
  /**
   * Whether a missing API key may wait for a call that needs it (a replay
   * run, whose embeddings come from the cache).
   * @default {false}
   */
  optionalKey?: boolean | undefined;
}

/** The default: every text asked of the client, in a request of its own. */
const UNCACHED: EmbeddingCache = {
  async embed(client, text, signal) {
    return (await client.embed([text], signal)).vectors[0]!;
  },
};

/** The cosine of two vectors of one length, within -1..1; `undefined` when one is zero. */
function cosine(
  a: readonly number[],
  b: readonly number[],
): number | undefined {
  let dot = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  if (aa === 0 || bb === 0) return undefined;
  // Rounding may carry a cosine a hair past ±1.
  return Math.max(-1, Math.min(1, dot / (Math.sqrt(aa) * Math.sqrt(bb))));
}

/**
 * `semantic_similarity`: the cosine similarity, within -1..1, of the
 * embeddings of the trimmed output and of the trimmed expected text (the
 * best of a list of texts), from an OpenAI-compatible `POST
 * {base_url}/embeddings`. It takes the `openai` target's settings and flow
 * control (rate limit, retries honouring `Retry-After`, timeouts), and hides
 * every secret. A case without `expected` is `non_evaluable`; an empty output
 * scores 0; a call that fails is an `error` Score
 * (`embedding.request_failed`, or `embedding.invalid_answer` for an answer
 * without usable vectors), never a 0.
 *
 * @param settings The endpoint, model, key variable, headers, threshold, flow control.
 * @param options The environment and a cache of embeddings.
 * @returns The scorer.
 *
 * @example Two texts whose vectors are known: cos = 24 / 25
 * ```ts
 * import { semanticSimilarity } from "./mod.ts";
 * const vectors: Record<string, number[]> = { "It is four.": [3, 4, 0], "Four.": [4, 3, 0] };
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
 *   const { input } = await request.json();
 *   return Response.json({ data: input.map((t: string, index: number) => ({ index, embedding: vectors[t] })) });
 * });
 * const scorer = semanticSimilarity({ base_url: `http://127.0.0.1:${server.addr.port}/v1`, model: "e", threshold: 0.9 });
 * const s = await scorer.score({ example_id: "d#1", unit_id: "d#1", input: "2+2?", output: "It is four.", expected: "Four." }, {});
 * if ("scores" in s || s.value !== 0.96 || s.passed !== true) throw new Error("unexpected");
 * ```
 */
export function semanticSimilarity(
  settings: SemanticSimilaritySettings,
  options: SemanticSimilarityOptions = {},
): Scorer {
  const { name: given, threshold: pass, ...endpoint } = settings;
  checkThreshold("semantic_similarity", pass);
  // A config is checked at its lines first; a script's settings here.
  refuseSettings("semanticSimilarity", apiHeadersProblem(settings, []));
  const name = given ?? "semantic_similarity";
  const threshold = pass ?? 0.5;
  const client = new EmbeddingsClient(endpoint, options.env, {
    optionalKey: options.optionalKey,
  });
  const cache = options.cache ?? UNCACHED;
  const version = `${name}@${
    fingerprint(JSON.stringify(client.identity), String(threshold)).slice(7, 15)
  }`;
  const provenance = {
    embedding_model: settings.model,
    embedding_url: client.shownUrl,
  };
  // One request per text in flight: epochs and cases sharing an expected
  // text wait for the same answer.
  const pending = new Map<string, Promise<number[]>>();
  const embed = (text: string, signal?: AbortSignal) => {
    let p = pending.get(text);
    if (p === undefined) {
      p = cache.embed(client, text, signal);
      pending.set(text, p);
      const forget = () => pending.delete(text);
      p.then(forget, forget);
    }
    return p;
  };
  const failure = (error: unknown): Score => {
    const message = error instanceof Error ? error.message : String(error);
    return errored(name, `scorer error: ${message}`, {
      evaluator_version: version,
      code: error instanceof EmbeddingAnswerError
        ? "embedding.invalid_answer"
        : "embedding.request_failed",
      provenance,
    });
  };
  return {
    name,
    version,
    range: [-1, 1],
    async score(unit: Unit, context: ScorerContext): Promise<Score> {
      const refs = references(unit)?.map((r) => r.trim()).filter((r) =>
        r !== ""
      );
      if (refs === undefined || refs.length === 0) {
        return noExpected(name, version, unit.expected);
      }
      const output = (unit.output ?? "").trim();
      if (output === "") {
        return scored(name, 0, {
          evaluator_version: version,
          passed: false,
          reason: "the output is empty",
          provenance,
        });
      }
      // Every call ends before the Score is made: none is left in flight.
      const settled = await Promise.allSettled(
        [output, ...refs].map((t) => embed(t, context.signal)),
      );
      const vectors: number[][] = [];
      for (const r of settled) {
        if (r.status === "fulfilled") {
          vectors.push(r.value);
          continue;
        }
        // A stopped run is not the endpoint's failure: the pipeline says so.
        if (context.signal?.aborted) throw r.reason;
        return failure(r.reason);
      }
      const [mine, ...theirs] = vectors as [number[], ...number[][]];
      let best = -Infinity;
      for (const [i, v] of theirs.entries()) {
        const c = v.length === mine.length ? cosine(mine, v) : undefined;
        if (c === undefined) {
          return failure(
            new EmbeddingAnswerError(
              v.length !== mine.length
                ? `the embeddings of the output and of expected ${
                  refs.length > 1 ? `text ${i + 1} ` : ""
                }have different lengths (${mine.length} and ${v.length})`
                : "an embedding is a zero vector: it has no direction to compare",
            ),
          );
        }
        best = Math.max(best, c);
      }
      return scored(name, best, {
        evaluator_version: version,
        passed: best >= threshold,
        reason: `cosine similarity ${best.toFixed(3)} (threshold ${threshold})`,
        provenance,
      });
    },
  };
}
