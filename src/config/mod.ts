/**
 * Suite configs: the YAML file naming a dataset, a target and scorers, checked
 * and built into parts.
 *
 * @module
 */

export * from "./config.ts";
export * from "./schema.ts";
export * from "./scorer_names.ts";
