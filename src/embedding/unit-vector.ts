/**
 * Scales `values` to length 1 as a new Float32Array, or returns undefined when that is impossible
 * (a zero vector, or NaN/Infinity anywhere): callers turn that into an error that names the model.
 *
 * The norm is summed in float64 so that long vectors of small components keep their precision.
 */
export function toUnitVector(values: ArrayLike<number>): Float32Array | undefined {
  let sumOfSquares = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as number;
    sumOfSquares += value * value;
  }
  const norm = Math.sqrt(sumOfSquares);
  if (!Number.isFinite(norm) || norm === 0) return undefined;
  const unit = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) unit[i] = (values[i] as number) / norm;
  return unit;
}

/** Dot product; for two unit vectors this is their cosine similarity. */
export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError(`vector lengths differ: ${a.length} vs ${b.length}`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}
