import { errorMessage, InvalidArgumentError } from "../errors/index.js";
import { jsonDepth } from "../json/index.js";

/**
 * How deeply a JSON value the service answers as a structure (`google.protobuf.Struct` or `Value`)
 * may nest arrays and objects (docs/api.md#json-as-structures). Each level is two or three nested
 * messages on the wire, and common decoders refuse a message nested more than 100 deep (Python's
 * protobuf among them): a deeper value would make the whole answer unreadable, so only its text
 * is sent.
 */
export const STRUCTURED_JSON_DEPTH = 24;

/**
 * A JSON field a request may send as text or as a structure (`payload` / `payload_json`): the text,
 * or the structure written as JSON text, which the use cases then check like any text. Both is
 * INVALID_ARGUMENT, since neither could be said to win.
 */
export function jsonTextOf(field: string, text: string, structure: Record<string, unknown> | undefined): string {
  if (structure === undefined) return text;
  if (text !== "") throw new InvalidArgumentError(`${field}_json`, `give ${field} or ${field}_json, not both`);
  try {
    return JSON.stringify(structure);
  } catch (error) {
    throw new InvalidArgumentError(`${field}_json`, `cannot be written as JSON text: ${errorMessage(error)}`);
  }
}

/**
 * `text` as a structure for an answer: the value of one JSON document (surrounding whitespace aside)
 * that nests at most {@link STRUCTURED_JSON_DEPTH} levels; undefined for anything else.
 */
export function structuredJson(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  return jsonDepth(value, STRUCTURED_JSON_DEPTH) > STRUCTURED_JSON_DEPTH ? undefined : value;
}

/** Like {@link structuredJson}, for a `google.protobuf.Struct`: only a JSON object. */
export function structuredObject(text: string): Record<string, unknown> | undefined {
  const value = structuredJson(text);
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
