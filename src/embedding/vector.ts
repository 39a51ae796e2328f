/** Scales `vec` in place to unit length (a zero vector stays zero) and returns it. */
export function l2Normalize(vec: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vec.length; i++) sum += vec[i]! * vec[i]!;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vec.length; i++) vec[i] = vec[i]! / norm;
  return vec;
}

/** Dot product; for normalized vectors this is the cosine similarity. */
export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`vector lengths differ: ${a.length} vs ${b.length}`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** Text form pgvector reads (`[0.1,0.2,...]`). */
export function toVectorLiteral(v: ArrayLike<number>): string {
  let out = '[';
  for (let i = 0; i < v.length; i++) {
    if (i > 0) out += ',';
    out += (v[i] as number).toPrecision(7);
  }
  return `${out}]`;
}
