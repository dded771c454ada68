// The limit row of the cached rerun (issue 17, goal 5): what a rerun whose
// every request hits cannot skip, and nothing of evalpipe's. `hit`: the
// dataset read and parsed, the pack read whole and indexed by key (a `Map`),
// then per case the request built and serialised, its SHA-256 key (a
// synchronous SHA-256 here, cheaper per key than `crypto.subtle` or
// `node:crypto` in Deno), the lookup and the entry parsed, and one
// Score-shaped NDJSON line (exact match) on stdout. `replay`: the same lines
// from the dataset's own outputs, no pack, no key: the same program's
// replay. `fill` writes the pack first (untimed), one line per case,
// `{"key": ..., "result": {"output": ..., "info": ...}}`, as evalpipe's are.
// Usage: deno run -A bench/_limit_cached.ts fill|hit|replay DATASET PACK
import { exactMatchLine } from "./_bare_parts.ts";

const [mode, dataset, pack] = Deno.args;
const URL = "http://127.0.0.1:1/v1/chat/completions";
/** Unit ids are the dataset's file name and line, as `run` makes them. */
const name = dataset!.slice(dataset!.lastIndexOf("/") + 1);
const cases: Array<{ input: string; expected?: string; output?: string }> =
  (await Deno.readTextFile(dataset!)).split("\n").filter((l) => l !== "")
    .map((l) => JSON.parse(l));

// SHA-256 (FIPS 180-4) of a string's UTF-8 bytes, as hex.
const K = new Int32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
]);
const W = new Int32Array(64);
const H = new Int32Array(8);
let bytes = new Uint8Array(1 << 12);
const enc = new TextEncoder();
const HEX = Array.from(
  { length: 256 },
  (_, i) => i.toString(16).padStart(2, "0"),
);
function sha256(text: string): string {
  if (bytes.length < text.length * 3 + 72) {
    bytes = new Uint8Array(text.length * 3 + 72);
  }
  const n = enc.encodeInto(text, bytes).written;
  const total = (n + 72) & ~63;
  bytes.fill(0, n, total);
  bytes[n] = 0x80;
  const bits = n * 8;
  bytes[total - 4] = bits >>> 24;
  bytes[total - 3] = bits >>> 16;
  bytes[total - 2] = bits >>> 8;
  bytes[total - 1] = bits;
  H.set([
    0x6a09e667,
    0xbb67ae85,
    0x3c6ef372,
    0xa54ff53a,
    0x510e527f,
    0x9b05688c,
    0x1f83d9ab,
    0x5be0cd19,
  ]);
  for (let off = 0; off < total; off += 64) {
    for (let t = 0; t < 16; t++) {
      const p = off + t * 4;
      W[t] = (bytes[p]! << 24) | (bytes[p + 1]! << 16) | (bytes[p + 2]! << 8) |
        bytes[p + 3]!;
    }
    for (let t = 16; t < 64; t++) {
      const w15 = W[t - 15]!, w2 = W[t - 2]!;
      const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^
        (w15 >>> 3);
      const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^
        (w2 >>> 10);
      W[t] = (W[t - 16]! + s0 + W[t - 7]! + s1) | 0;
    }
    let a = H[0]!, b = H[1]!, c = H[2]!, d = H[3]!;
    let e = H[4]!, f = H[5]!, g = H[6]!, h = H[7]!;
    for (let t = 0; t < 64; t++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^
        ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[t]! + W[t]!) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^
        ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    H[0] = (H[0]! + a) | 0;
    H[1] = (H[1]! + b) | 0;
    H[2] = (H[2]! + c) | 0;
    H[3] = (H[3]! + d) | 0;
    H[4] = (H[4]! + e) | 0;
    H[5] = (H[5]! + f) | 0;
    H[6] = (H[6]! + g) | 0;
    H[7] = (H[7]! + h) | 0;
  }
  let hex = "";
  for (let i = 0; i < 8; i++) {
    const v = H[i]!;
    hex += HEX[v >>> 24]! + HEX[(v >>> 16) & 255]! + HEX[(v >>> 8) & 255]! +
      HEX[v & 255]!;
  }
  return hex;
}

/** The key of a case's request: the URL, the body, the epoch. */
const keyOf = (input: string) =>
  sha256(
    `${URL}\0${
      JSON.stringify({
        model: "fake-model",
        messages: [{ role: "user", content: input }],
      })
    }\0${1}\0`,
  );

if (mode === "fill") {
  await Deno.writeTextFile(
    pack!,
    cases.map((c, i) =>
      JSON.stringify({
        key: keyOf(c.input),
        result: {
          output: `answer ${i}`,
          info: {
            model: "fake-model",
            usage: {
              prompt_tokens: 19,
              completion_tokens: 13,
              total_tokens: 32,
            },
            finish_reason: "stop",
            attempts: 1,
          },
        },
      }) + "\n"
    ).join(""),
  );
  Deno.exit(0);
}

// The pack, read whole and indexed by the key at its fixed place in a line.
const index = new Map<string, string>();
if (mode === "hit") {
  const text = await Deno.readTextFile(pack!);
  let start = 0;
  for (let end; (end = text.indexOf("\n", start)) !== -1; start = end + 1) {
    index.set(text.slice(start + 8, start + 72), text.slice(start, end));
  }
}
const stdout = Deno.stdout.writable.getWriter();
let out = "";
for (let i = 0; i < cases.length; i++) {
  const c = cases[i]!;
  let output = c.output;
  if (mode === "hit") {
    const line = index.get(keyOf(c.input));
    if (line === undefined) throw new Error(`No entry for case ${i + 1}`);
    const { result } = JSON.parse(line);
    result.info.cached = true;
    output = result.output;
  }
  const id = `${name}#${i + 1}`;
  const value = output === c.expected ? 1 : 0;
  out += exactMatchLine(id, value, c.expected) + "\n";
  if (out.length > 1 << 16) {
    await stdout.write(enc.encode(out));
    out = "";
  }
}
await stdout.write(enc.encode(out));
await stdout.close();
