/**
 * The few distributions aggregation needs: Student's t quantiles and the
 * Wilson score interval.
 *
 * @module
 */

/** The standard normal quantile for a two-sided 95% interval. */
export const Z95 = 1.959963984540054;

const LANCZOS = [
  676.5203681218851,
  -1259.1392167224028,
  771.3234287776531,
  -176.6150291621406,
  12.507343278686905,
  -0.13857109526572012,
  9.984369578019572e-6,
  1.5056327351493116e-7,
];

function logGamma(x: number): number {
  if (x < 0.5) {
    return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  }
  x -= 1;
  let a = 0.9999999999998099;
  const t = x + 7.5;
  for (let i = 0; i < LANCZOS.length; i++) a += LANCZOS[i]! / (x + i + 1);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t +
    Math.log(a);
}

/** Continued fraction of the incomplete beta function (modified Lentz). */
function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return h;
}

/** The regularised incomplete beta function I_x(a, b). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(
    logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) +
      b * Math.log(1 - x),
  );
  if (x < (a + 1) / (a + b + 2)) return (front * betaFraction(x, a, b)) / a;
  return 1 - (front * betaFraction(1 - x, b, a)) / b;
}

/**
 * The upper-tail probability of Student's t with `df` degrees of freedom,
 * two-sided: P(|T| > t).
 */
function twoSidedTail(t: number, df: number): number {
  return incompleteBeta(df / (df + t * t), df / 2, 0.5);
}

const quantileCache = new Map<number, number>();

/**
 * The critical value t such that P(|T| > t) = 0.05 for Student's t with `df`
 * degrees of freedom (12.706 for df = 1, 2.262 for df = 9).
 *
 * @param df Degrees of freedom, at least 1.
 * @returns The two-sided 95% critical value.
 */
export function tCritical95(df: number): number {
  const cached = quantileCache.get(df);
  if (cached !== undefined) return cached;
  let lo = 0;
  let hi = 1000;
  for (let i = 0; i < 200 && hi - lo > 1e-13; i++) {
    const mid = (lo + hi) / 2;
    if (twoSidedTail(mid, df) > 0.05) lo = mid;
    else hi = mid;
  }
  const t = (lo + hi) / 2;
  if (quantileCache.size < 10_000) quantileCache.set(df, t);
  return t;
}

/**
 * The Wilson score interval for `k` successes in `n` trials at 95%, or for
 * the rate `k / n` seen on trials worth `effective` independent ones.
 *
 * @param k Successes.
 * @param n Trials, at least 1.
 * @param effective The trials' worth as independent ones (the design
 *   effect's n), above 0.
 * @returns `[low, high]`, both within 0..1.
 */
export function wilson95(
  k: number,
  n: number,
  effective: number = n,
): [number, number] {
  const z = Z95;
  const p = k / n;
  const [none, all] = [k === 0, k === n];
  n = effective;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = p + z2 / (2 * n);
  const margin = z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At k = 0 or n an end is 0 or 1 exactly, which rounding misses
  // (0.9999999999999999).
  return [
    none ? 0 : Math.max(0, (centre - margin) / denom),
    all ? 1 : Math.min(1, (centre + margin) / denom),
  ];
}

/** Below this many values a mean's interval is flagged as small-sample (evalglass's threshold). */
export const SMALL_N = 5;

/**
 * An interval clamped to a range: each end moved inside it when it lies
 * beyond.
 *
 * @param interval `[low, high]`.
 * @param range The range the quantity cannot leave.
 * @returns The clamped interval, a new array.
 */
export function clampInterval(
  interval: readonly [number, number],
  range: readonly [number, number],
): [number, number] {
  return [
    Math.min(Math.max(interval[0], range[0]), range[1]),
    Math.max(Math.min(interval[1], range[1]), range[0]),
  ];
}

/**
 * The rule of three's 95% interval for a proportion seen at 0 or at 1:
 * with no success in n independent trials the rate is still at most 3/n,
 * with no failure at least 1 − 3/n; each end is kept within 0..1. When the
 * trials come in clusters (the epochs of one example), `independent` is
 * how many of them are independent: the clusters, since a rate of 0 or 1
 * shows no spread to tell how far a cluster's trials agree.
 *
 * @param k Successes.
 * @param n Trials, at least 1.
 * @param independent The independent units among the trials (examples),
 *   from 1 to n.
 * @returns `[0, min(1, 3/independent)]` when k is 0,
 *   `[max(0, 1 − 3/independent), 1]` when k is n, `null` otherwise.
 */
export function ruleOfThree95(
  k: number,
  n: number,
  independent: number = n,
): [number, number] | null {
  if (k === 0) return [0, Math.min(1, 3 / independent)];
  if (k === n) return [Math.max(0, 1 - 3 / independent), 1];
  return null;
}

/** The log of n choose k. */
function logChoose(n: number, k: number): number {
  return logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1);
}

/**
 * Fisher's exact test, one-sided: the probability, were both pass rates
 * equal, of a first sample passing at least `k1` of `n1` times, given that
 * both samples passed `k1 + k2` times in all. A small value says the second
 * sample's rate (`k2 / n2`) is lower than the first's beyond chance.
 *
 * @param k1 Passes in the first sample (the baseline).
 * @param n1 Trials in the first sample.
 * @param k2 Passes in the second sample (now).
 * @param n2 Trials in the second sample.
 * @returns The one-sided p-value, within 0..1.
 */
export function fisherExactLower(
  k1: number,
  n1: number,
  k2: number,
  n2: number,
): number {
  const total = n1 + n2;
  const passes = k1 + k2;
  const denominator = logChoose(total, n1);
  let p = 0;
  for (let x = k1; x <= Math.min(passes, n1); x++) {
    if (passes - x > n2) continue;
    p += Math.exp(
      logChoose(passes, x) + logChoose(total - passes, n1 - x) - denominator,
    );
  }
  return Math.min(1, p);
}
