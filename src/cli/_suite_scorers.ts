// The scorers of a suite for `score --config`, loaded only with that flag:
// `score --scorer` loads no YAML and no config module.

import type { Scorer } from "../scorers/scorer.ts";
import type { SuiteConfig } from "../config/types.ts";
import type { Score } from "../score/mod.ts";

/**
 * The scorers of a suite, built as `run` builds them, its concurrency, its
 * config, and, when it sends secrets (a judge's key, a header's), the stage
 * that hides what its scorers echo of them, as `run` hides it.
 */
export async function suiteScorers(
  path: string,
  timeout: number | undefined,
): Promise<{
  scorers: Scorer[];
  concurrency: number;
  config: SuiteConfig;
  guard?: () => TransformStream<Score[], Score[]>;
}> {
  const [
    {
      buildScorers,
      folderOf,
      loadConfig,
      missingVariableError,
      namesSecrets,
    },
    { DEFAULTS },
  ] = await Promise.all([
    import("../config/config.ts"),
    import("../base/defaults.ts"),
  ]);
  const config = await loadConfig(path);
  try {
    const scorers = await buildScorers(config, path, {
      cwd: folderOf(path),
      ...(timeout !== undefined ? { timeout } : {}),
    });
    const guards = namesSecrets(config)
      ? await (await import("../run/_secrets.ts")).guardsFor(config)
      : undefined;
    return {
      scorers,
      concurrency: config.concurrency ?? DEFAULTS.concurrency,
      config,
      ...(guards !== undefined ? { guard: guards.scores } : {}),
    };
  } catch (error) {
    // A judge whose API key variable is not set cannot run: a config error.
    // (Only a judge, whose module loads the templates, can throw one.)
    const { TemplateError } = await import("../net/template.ts");
    if (!(error instanceof TemplateError)) throw error;
    throw await missingVariableError(error.message, path);
  }
}
