import { readFileSync } from "node:fs";

/** One tensor of a safetensors file as stored: its element type, shape and little-endian bytes. */
export interface RawTensor {
  /** The file's dtype ("F16", "F32", "I64", …). */
  readonly dtype: string;
  readonly shape: readonly number[];
  /** A view into the file's buffer, not a copy. */
  readonly bytes: Uint8Array;
}

/** One tensor of a safetensors file, widened to float32. */
export interface Float32Tensor {
  readonly shape: readonly number[];
  readonly values: Float32Array;
}

/**
 * Reads every tensor of a `.safetensors` file (an 8-byte little-endian header length, a JSON header
 * of `{name: {dtype, shape, data_offsets}}`, then the raw data) as views into one buffer.
 */
export function readSafetensorsRaw(file: string): Map<string, RawTensor> {
  const buffer = readFileSync(file);
  const headerLength = Number(buffer.readBigUInt64LE(0));
  const header = JSON.parse(buffer.subarray(8, 8 + headerLength).toString("utf8")) as Record<
    string,
    { dtype?: string; shape?: number[]; data_offsets?: [number, number] }
  >;
  const dataStart = 8 + headerLength;
  const tensors = new Map<string, RawTensor>();
  for (const [name, entry] of Object.entries(header)) {
    if (name === "__metadata__" || entry.dtype === undefined || entry.shape === undefined || entry.data_offsets === undefined) continue;
    const [begin, end] = entry.data_offsets;
    tensors.set(name, { dtype: entry.dtype, shape: entry.shape, bytes: buffer.subarray(dataStart + begin, dataStart + end) });
  }
  return tensors;
}

/**
 * Reads the floating-point tensors of a `.safetensors` file, widening F16 to F32. Tensors of
 * other types (the int64 `position_ids` buffer of a BERT checkpoint) are skipped.
 */
export function readSafetensors(file: string): Map<string, Float32Tensor> {
  const tensors = new Map<string, Float32Tensor>();
  for (const [name, { dtype, shape, bytes }] of readSafetensorsRaw(file)) {
    if (dtype === "F16") tensors.set(name, { shape, values: widenHalfFloats(bytes) });
    else if (dtype === "F32") {
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      tensors.set(name, { shape, values: Float32Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(i * 4, true)) });
    }
  }
  return tensors;
}

let halfToFloat: Float32Array | undefined;

/** IEEE 754 binary16 → float32, through a table of all 65,536 half-precision values. */
function widenHalfFloats(bytes: Uint8Array): Float32Array {
  halfToFloat ??= buildHalfTable();
  const table = halfToFloat;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const values = new Float32Array(bytes.length / 2);
  for (let i = 0; i < values.length; i++) values[i] = table[view.getUint16(i * 2, true)] as number;
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
