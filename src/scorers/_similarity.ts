// The arithmetic of the text-similarity scorers, each as its reference
// implementation computes it (named beside each function).

/** The edit distance of two sequences (insertions, deletions, substitutions). */
export function editDistance(
  a: ArrayLike<number | string>,
  b: ArrayLike<number | string>,
): number {
  if (a.length < b.length) [a, b] = [b, a];
  // Two rows of typed integers: a 2,000-character pair costs no garbage.
  let row = new Int32Array(b.length + 1);
  let next = new Int32Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) row[j] = j;
  for (let i = 1; i <= a.length; i++) {
    next[0] = i;
    const ai = a[i - 1];
    for (let j = 1; j <= b.length; j++) {
      const substitute = row[j - 1]! + (ai === b[j - 1] ? 0 : 1);
      const insert = next[j - 1]! + 1;
      const remove = row[j]! + 1;
      next[j] = substitute < insert
        ? (substitute < remove ? substitute : remove)
        : (insert < remove ? insert : remove);
    }
    [row, next] = [next, row];
  }
  return row[b.length]!;
}

/** A text's code points, as numbers. */
function codePoints(text: string): Int32Array {
  const out = new Int32Array(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.codePointAt(i)!;
    out[n++] = c;
    if (c > 0xffff) i++;
  }
  return out.subarray(0, n);
}

/** 1 − distance / the longer length, over code points; two empty texts are 1. */
export function levenshteinSimilarity(a: string, b: string): number {
  const x = codePoints(a);
  const y = codePoints(b);
  const longest = Math.max(x.length, y.length);
  return longest === 0 ? 1 : 1 - editDistance(x, y) / longest;
}

// Python's `string.punctuation`, which SQuAD's script removes.
const PUNCTUATION = new Set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");
// Python's `\b(a|an|the)\b` on `str`: its word characters are Unicode's.
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;

/**
 * The tokens of SQuAD v2.0's `normalize_answer`: lower case, punctuation
 * removed, articles removed, split on white space.
 */
export function squadTokens(text: string): string[] {
  let s = "";
  for (const ch of text.toLowerCase()) if (!PUNCTUATION.has(ch)) s += ch;
  s = s.replace(ARTICLES, " ");
  return s.split(/\s+/u).filter((t) => t !== "");
}

/**
 * SQuAD v2.0's `compute_f1`: the F1 of the token bags; when either side has
 * no tokens, 1 if both have none, else 0.
 */
export function tokenF1(prediction: string, truth: string): number {
  const pred = squadTokens(prediction);
  const gold = squadTokens(truth);
  if (pred.length === 0 || gold.length === 0) {
    return pred.length === gold.length ? 1 : 0;
  }
  const counts = new Map<string, number>();
  for (const t of gold) counts.set(t, (counts.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of pred) {
    const left = counts.get(t) ?? 0;
    if (left > 0) {
      same++;
      counts.set(t, left - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / pred.length;
  const recall = same / gold.length;
  return (2 * precision * recall) / (precision + recall);
}

/**
 * The tokens of `rouge-score`'s default tokenizer (no stemming): lower
 * case, every run of characters other than `a-z0-9` a separator.
 */
export function rougeTokens(text: string): string[] {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, " ").split(" ")
    .filter((t) => t !== "");
}

/** The length of the longest common subsequence of two sequences. */
function lcsLength(a: readonly string[], b: readonly string[]): number {
  let row = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const next = [0];
    for (let j = 1; j <= b.length; j++) {
      next[j] = a[i - 1] === b[j - 1]
        ? row[j - 1]! + 1
        : Math.max(row[j]!, next[j - 1]!);
    }
    row = next;
  }
  return row[b.length]!;
}

/**
 * `rouge-score`'s rougeL F-measure of a prediction against a target (its
 * `_score_lcs`): 0 when the prediction has no tokens.
 */
export function rougeL(
  target: readonly string[],
  prediction: readonly string[],
): number {
  if (target.length === 0 || prediction.length === 0) return 0;
  const lcs = lcsLength(target, prediction);
  const precision = lcs / prediction.length;
  const recall = lcs / target.length;
  return precision + recall > 0
    ? (2 * precision * recall) / (precision + recall)
    : 0;
}

/** The counts of a sequence's 1- to 4-grams, one pass, one map per order. */
function ngramCounts(tokens: readonly string[]): Map<string, number>[] {
  const counts = [new Map(), new Map(), new Map(), new Map()] as Map<
    string,
    number
  >[];
  for (let i = 0; i < tokens.length; i++) {
    let key = "";
    for (let n = 0; n < 4 && i + n < tokens.length; n++) {
      // A separator no token holds: tokens are split on white space.
      key = n === 0 ? tokens[i]! : `${key} ${tokens[i + n]}`;
      const table = counts[n]!;
      table.set(key, (table.get(key) ?? 0) + 1);
    }
  }
  return counts;
}

/**
 * NLTK's `sentence_bleu` with its default weights (0.25 for 1- to 4-grams)
 * and `SmoothingFunction().method1` (epsilon 0.1 added to each n-gram order
 * without a match): clipped n-gram precisions against several references,
 * the brevity penalty of the closest reference length (the shorter on a
 * tie), 0 when no unigram matches.
 */
export function sentenceBleu(
  refs: readonly (readonly string[])[],
  hyp: readonly string[],
): number {
  const logs: number[] = [];
  const hypCounts = ngramCounts(hyp);
  const refCounts = refs.map(ngramCounts);
  for (let n = 1; n <= 4; n++) {
    const counts = hypCounts[n - 1]!;
    const max = new Map<string, number>();
    for (const ref of refCounts) {
      for (const [gram, c] of ref[n - 1]!) {
        if (counts.has(gram)) max.set(gram, Math.max(max.get(gram) ?? 0, c));
      }
    }
    let matched = 0;
    let total = 0;
    for (const [gram, c] of counts) {
      matched += Math.min(c, max.get(gram) ?? 0);
      total += c;
    }
    if (n === 1 && matched === 0) return 0;
    const denominator = Math.max(1, total);
    logs.push(
      0.25 * Math.log((matched === 0 ? 0.1 : matched) / denominator),
    );
  }
  const h = hyp.length;
  let r = refs[0]!.length;
  for (const ref of refs) {
    const d = Math.abs(ref.length - h);
    const best = Math.abs(r - h);
    if (d < best || (d === best && ref.length < r)) r = ref.length;
  }
  const bp = h > r ? 1 : h === 0 ? 0 : Math.exp(1 - r / h);
  return bp * Math.exp(logs.reduce((a, b) => a + b, 0));
}
