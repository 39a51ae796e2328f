/**
 * Postgres' binary form of a one-dimensional `real[]` holding `vectors` one after another (each `dims`
 * long), for writing many vectors in one parameter: SQL slices each one out and casts it to `vector`.
 * Like `toVectorParam` (src/embedding/vector.ts), the database copies the floats instead of parsing
 * decimals (0.72-0.78 ms a vector on PGlite's thread as text, 0.07-0.13 binary), and stores their exact
 * float32 values. The indexer's chunk writes use it in embedded mode only (repositories/chunks.ts says why).
 */
export function toRealArrayParam(vectors: readonly Float32Array[], dims: number): Uint8Array {
  const n = vectors.length * dims;
  // Header: dimensions 1, no NULLs, element type float4 (oid 700), length, lower bound 1; then per
  // element its byte length (4) and its big-endian value.
  const out = new Uint8Array(20 + 8 * n);
  const view = new DataView(out.buffer);
  view.setInt32(0, 1);
  view.setInt32(4, 0);
  view.setInt32(8, 700);
  view.setInt32(12, n);
  view.setInt32(16, 1);
  let at = 20;
  for (const v of vectors) {
    if (v.length !== dims) throw new Error(`a vector has ${v.length} dimensions, expected ${dims}`);
    for (let i = 0; i < dims; i++) {
      view.setInt32(at, 4);
      view.setFloat32(at + 4, v[i]!);
      at += 8;
    }
  }
  return out;
}

/**
 * SQL for the `n`th (from 1) vector of a {@link toRealArrayParam} parameter: `param` and `n` are SQL
 * expressions (a `$k` reference, a row's ordinal). The slice and the layout above must agree, so both
 * live here.
 */
export function realArrayVectorSql(param: string, n: string, dims: number): string {
  const d = Math.trunc(dims);
  return `(${param}::real[])[(${n} - 1) * ${d} + 1 : ${n} * ${d}]::vector`;
}
