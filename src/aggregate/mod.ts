/**
 * Aggregation: per metric, streaming, mergeable summaries of Scores, and the
 * gates checked on them.
 *
 * @example Errors stand beside the mean, never inside it
 * ```ts
 * import { Aggregator } from "./mod.ts";
 * import { errored, scored } from "../score/mod.ts";
 * const aggregator = new Aggregator();
 * aggregator.add(scored("m", 1, { example_id: "d#1", unit_id: "d#1" }));
 * aggregator.add(errored("m", "scorer error: boom", { example_id: "d#2", unit_id: "d#2" }));
 * const [m] = aggregator.results();
 * if (m?.mean !== 1 || m.errors !== 1) throw new Error("unexpected");
 * ```
 *
 * @module
 */

export type {
  Aggregate,
  AggregateSums,
  CaseRequirement,
  PartialAggregate,
  ValueRange,
} from "./types.ts";
export { Aggregator } from "./aggregator.ts";
export { looksLikeAggregate, parseAggregate } from "./wire.ts";
export type { AggregateOptions } from "./stage.ts";
export { aggregate, aggregateInto, ScoreOrderError } from "./stage.ts";
export type { AggregateLinesOptions } from "./lines.ts";
export { aggregateLines } from "./lines.ts";
export type {
  Classification,
  ClassificationCounts,
  LabelFigures,
  Prediction,
} from "./classification.ts";
export { ConfusionCounts, predictionOf } from "./classification.ts";
export type {
  CheckGatesOptions,
  Gate,
  GateFailure,
  Unmeasured,
} from "./gates.ts";
export { checkGates, nothingMeasured } from "./gates.ts";
export type {
  JudgeAgreement,
  KappaEstimate,
  LabelAgreement,
  LabelPair,
} from "./agreement.ts";
export { cohenKappa, judgeAgreement } from "./agreement.ts";
export type {
  CalibrationLine,
  Disagreement,
  HumanLabel,
} from "./calibration.ts";
export { Calibration, humanLabel, HumanLabelError } from "./calibration.ts";
export { valueRangeOption } from "./value_ranges.ts";
