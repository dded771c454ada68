/**
 * SHA-256 in plain TypeScript, incremental and synchronous: for fingerprints
 * and versions, without loading the Node compatibility layer at start-up.
 *
 * @module
 */

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

const encoder = new TextEncoder();
/** The message schedule: one per module, as hashing is synchronous. */
const W = new Int32Array(64);
const IV = new Int32Array([
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
]);
const HEX = Array.from(
  { length: 256 },
  (_, i) => i.toString(16).padStart(2, "0"),
);

/** An incremental SHA-256. */
export class Sha256 {
  #h = IV.slice();
  #block = new Uint8Array(64);
  #used = 0;
  #bytes = 0;

  /**
   * Makes this hash a copy of `other` as it stands, so that one hash of a
   * common start goes on into many without hashing the start again.
   *
   * @param other The hash to copy.
   * @returns This hash, to chain.
   */
  copyFrom(other: Sha256): this {
    this.#h.set(other.#h);
    this.#block.set(other.#block);
    this.#used = other.#used;
    this.#bytes = other.#bytes;
    return this;
  }

  /**
   * Adds data.
   *
   * @param data Text (as UTF-8) or bytes.
   * @returns This hash, to chain.
   */
  update(data: string | Uint8Array): this {
    if (typeof data !== "string") return this.#updateBytes(data);
    // ASCII goes into the block as it is, without an encoder call: keys and
    // versions are short and mostly ASCII. The rest is encoded as UTF-8.
    const block = this.#block;
    const length = data.length;
    let used = this.#used;
    let i = 0;
    for (; i < length; i++) {
      const c = data.charCodeAt(i);
      if (c > 0x7f) break;
      block[used++] = c;
      if (used === 64) {
        this.#compress(block, 0);
        used = 0;
      }
    }
    this.#bytes += i;
    this.#used = used;
    return i < length ? this.#updateBytes(encoder.encode(data.slice(i))) : this;
  }

  #updateBytes(bytes: Uint8Array): this {
    this.#bytes += bytes.length;
    let i = 0;
    if (this.#used > 0) {
      const take = Math.min(64 - this.#used, bytes.length);
      this.#block.set(bytes.subarray(0, take), this.#used);
      this.#used += take;
      i = take;
      if (this.#used < 64) return this;
      this.#compress(this.#block, 0);
      this.#used = 0;
    }
    for (; i + 64 <= bytes.length; i += 64) this.#compress(bytes, i);
    if (i < bytes.length) {
      this.#block.set(bytes.subarray(i));
      this.#used = bytes.length - i;
    }
    return this;
  }

  /**
   * Finishes the hash.
   *
   * @returns The digest as 64 hex digits.
   */
  hex(): string {
    // Padding: 0x80, zeros, then the length in bits as 64-bit big-endian.
    const block = this.#block;
    const bits = this.#bytes * 8;
    let used = this.#used;
    block[used++] = 0x80;
    if (used > 56) {
      block.fill(0, used);
      this.#compress(block, 0);
      used = 0;
    }
    block.fill(0, used, 56);
    const high = Math.floor(bits / 2 ** 32);
    const low = bits >>> 0;
    for (let i = 0; i < 4; i++) {
      block[56 + i] = high >>> (24 - 8 * i);
      block[60 + i] = low >>> (24 - 8 * i);
    }
    this.#compress(block, 0);
    let out = "";
    for (const x of this.#h) {
      out += HEX[(x >>> 24) & 0xff]! + HEX[(x >>> 16) & 0xff]! +
        HEX[(x >>> 8) & 0xff]! + HEX[x & 0xff]!;
    }
    return out;
  }

  #compress(data: Uint8Array, at: number): void {
    const w = W;
    for (let t = 0; t < 16; t++) {
      const j = at + t * 4;
      w[t] = (data[j]! << 24) | (data[j + 1]! << 16) | (data[j + 2]! << 8) |
        data[j + 3]!;
    }
    for (let t = 16; t < 64; t++) {
      const a = w[t - 15]!;
      const b = w[t - 2]!;
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^
        (b >>> 10);
      w[t] = (w[t - 16]! + s0 + w[t - 7]! + s1) | 0;
    }
    const h = this.#h;
    let a = h[0]!,
      b = h[1]!,
      c = h[2]!,
      d = h[3]!,
      e = h[4]!,
      f = h[5]!,
      g = h[6]!,
      k = h[7]!;
    for (let t = 0; t < 64; t++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^
        ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (k + s1 + ch + K[t]! + w[t]!) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^
        ((a >>> 22) | (a << 10));
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (s0 + maj) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] = (h[0]! + a) | 0;
    h[1] = (h[1]! + b) | 0;
    h[2] = (h[2]! + c) | 0;
    h[3] = (h[3]! + d) | 0;
    h[4] = (h[4]! + e) | 0;
    h[5] = (h[5]! + f) | 0;
    h[6] = (h[6]! + g) | 0;
    h[7] = (h[7]! + k) | 0;
  }
}
