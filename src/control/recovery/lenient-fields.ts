/**
 * Reading fields of JSON written by other systems (the legacy index), which name the same thing
 * several ways and hold damaged values: the first usable value under any of the given keys, or
 * a default. Never throws.
 */

/** A plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The first value present (not undefined or null) under any of `keys`. */
export function firstField(record: Record<string, unknown>, keys: readonly string[]): unknown {
  for (const key of keys) {
    const value = record[key];
    if (value !== undefined && value !== null) return value;
  }
  return undefined;
}

/** The first value under `keys`, when it is text. */
export function stringField(record: Record<string, unknown>, keys: readonly string[]): string | undefined {
  const value = firstField(record, keys);
  return typeof value === "string" ? value : undefined;
}

/** A non-negative integer (or its digits as text) under `keys`; 0 when there is none. */
export function countField(record: Record<string, unknown>, keys: readonly string[]): number {
  const value = firstField(record, keys);
  const number = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  return typeof number === "number" && Number.isSafeInteger(number) && number >= 0 ? number : 0;
}

/** ISO text, or epoch seconds or milliseconds; undefined unless plausible. */
export function dateField(record: Record<string, unknown>, keys: readonly string[]): Date | undefined {
  const value = firstField(record, keys);
  let date: Date | undefined;
  if (typeof value === "number" && Number.isFinite(value)) date = new Date(value < 1e12 ? value * 1000 : value);
  else if (typeof value === "string" && value.trim() !== "") date = new Date(value);
  if (!date || Number.isNaN(date.getTime()) || date.getFullYear() < 2000 || date.getTime() > Date.now() + 86_400_000) return undefined;
  return date;
}
