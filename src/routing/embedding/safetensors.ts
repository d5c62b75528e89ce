import { readFileSync } from "node:fs";

/** One tensor of a safetensors file, widened to float32. */
export interface Float32Tensor {
  readonly shape: readonly number[];
  readonly values: Float32Array;
}

/**
 * Reads the floating-point tensors of a `.safetensors` file (an 8-byte little-endian header length,
 * a JSON header of `{name: {dtype, shape, data_offsets}}`, then the raw data), widening F16 to F32.
 * Tensors of other types (the int64 `position_ids` buffer of a BERT checkpoint) are skipped.
 */
export function readSafetensors(file: string): Map<string, Float32Tensor> {
  const buffer = readFileSync(file);
  const headerLength = Number(buffer.readBigUInt64LE(0));
  const header = JSON.parse(buffer.subarray(8, 8 + headerLength).toString("utf8")) as Record<
    string,
    { dtype?: string; shape?: number[]; data_offsets?: [number, number] }
  >;
  const dataStart = 8 + headerLength;
  const tensors = new Map<string, Float32Tensor>();
  for (const [name, entry] of Object.entries(header)) {
    if (name === "__metadata__" || entry.shape === undefined || entry.data_offsets === undefined) continue;
    const [begin, end] = entry.data_offsets;
    const bytes = buffer.subarray(dataStart + begin, dataStart + end);
    if (entry.dtype === "F16") tensors.set(name, { shape: entry.shape, values: widenHalfFloats(bytes) });
    else if (entry.dtype === "F32") {
      const values = new Float32Array(bytes.length / 4);
      for (let i = 0; i < values.length; i++) values[i] = bytes.readFloatLE(i * 4);
      tensors.set(name, { shape: entry.shape, values });
    }
  }
  return tensors;
}

let halfToFloat: Float32Array | undefined;

/** IEEE 754 binary16 → float32, through a table of all 65,536 half-precision values. */
function widenHalfFloats(bytes: Buffer): Float32Array {
  halfToFloat ??= buildHalfTable();
  const table = halfToFloat;
  const values = new Float32Array(bytes.length / 2);
  for (let i = 0; i < values.length; i++) values[i] = table[bytes.readUInt16LE(i * 2)] as number;
  return values;
}

function buildHalfTable(): Float32Array {
  const table = new Float32Array(65536);
  for (let bits = 0; bits < 65536; bits++) {
    const sign = bits & 0x8000 ? -1 : 1;
    const exponent = (bits >> 10) & 0x1f;
    const mantissa = bits & 0x3ff;
    if (exponent === 0) table[bits] = sign * 2 ** -14 * (mantissa / 1024);
    else if (exponent === 31) table[bits] = mantissa === 0 ? sign * Infinity : NaN;
    else table[bits] = sign * 2 ** (exponent - 15) * (1 + mantissa / 1024);
  }
  return table;
}
