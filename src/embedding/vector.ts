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

/**
 * pgvector's binary form of a vector (its `vector_recv`): the dimension count and a zero as big-endian
 * int16, then each element as a big-endian float4. Given as a query parameter, both adapters send it as a
 * binary parameter (PGlite and node-postgres bind byte arrays that way), so the database copies the floats
 * instead of parsing their decimal text: in PGlite's WASM that parse (musl's strtof, on software long
 * doubles) took about half a millisecond for 384 numbers, a tenth of a search at 100k chunks
 * (docs/benchmarks.md, bench/search-latency.ts). The floats are the query's exact float32 values.
 */
export function toVectorParam(v: Float32Array): Uint8Array {
  const out = new Uint8Array(4 + 4 * v.length);
  const view = new DataView(out.buffer);
  view.setInt16(0, v.length);
  view.setInt16(2, 0);
  for (let i = 0; i < v.length; i++) view.setFloat32(4 + 4 * i, v[i]!);
  return out;
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
