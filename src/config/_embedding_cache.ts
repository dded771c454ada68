// Embeddings kept in the target cache: each text is a call of a cacheable
// "target" whose identity is the embeddings client's (URL, model, headers as
// written) and whose request is `{model, input: [text]}`, so the cache key
// covers model, base URL and text, and the cache's own rules (what it keeps,
// how it is read) apply to embeddings as to answers.

import type { EmbeddingCache } from "../scorers/semantic_similarity.ts";
import type { EmbeddingsClient } from "../net/embeddings_client.ts";
import { cachedTarget, type TargetCache } from "../targets/cache.ts";
import type { CacheableTarget } from "../targets/openai_target.ts";
import type { Target } from "../targets/target.ts";

/** A stored vector read back; anything else is an answer to ask again for. */
function vectorOf(text: string): number[] | undefined {
  try {
    const v = JSON.parse(text);
    return Array.isArray(v) && v.length > 0 &&
        v.every((x) => typeof x === "number" && Number.isFinite(x))
      ? v
      : undefined;
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    return undefined;
  }
}

/**
 * An embedding cache over the target cache.
 *
 * @param cache The target cache (its folder, its counts).
 * @returns The embedding cache.
 */
export function targetEmbeddingCache(cache: TargetCache): EmbeddingCache {
  const targets = new WeakMap<EmbeddingsClient, Target>();
  const targetOf = (client: EmbeddingsClient): Target => {
    let target = targets.get(client);
    if (target === undefined) {
      const embeddings: CacheableTarget = {
        identity: client.identity,
        request: (c) => client.body([String(c.input)]),
        async call(c, context) {
          const { vectors, info } = await client.embed(
            [String(c.input)],
            context.signal,
          );
          return { output: JSON.stringify(vectors[0]), info };
        },
      };
      targets.set(client, target = cachedTarget(embeddings, cache));
    }
    return target;
  };
  return {
    async embed(client, text, signal) {
      const target = targetOf(client);
      const context = signal !== undefined ? { signal } : {};
      const result = await target.call({ input: text }, context);
      const vector = vectorOf(result.output ?? "");
      if (vector !== undefined) return vector;
      // A stored entry that is no vector (written by hand, torn in a way
      // that still parses) is not trusted: ask the endpoint itself.
      return (await client.embed([text], signal)).vectors[0]!;
    },
  };
}
