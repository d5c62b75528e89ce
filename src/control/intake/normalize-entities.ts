import { decodeHTMLStrict } from "entities";
import { type Candidate, plural } from "./normalize-repair.js";

export const ENTITY = /&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/g;
export const ENTITY_ON_LINE = new RegExp(ENTITY.source);

/**
 * One pass over entity references, each decoded by the `entities` library in strict mode (the
 * `;` is required, so `a&b` in code is never touched). One pass is the exact inverse of
 * escaping: `&amp;lt;` becomes `&lt;`, not `<`.
 */
export function decodeEntities(text: string): Candidate[] {
  if (!text.includes("&")) return [];
  let count = 0;
  const decoded = text.replace(ENTITY, (entity) => {
    const value = decodeHTMLStrict(entity);
    if (value !== entity) count++;
    return value;
  });
  if (count === 0) return [];
  return [{ kind: "entities", text: decoded, note: `decoded ${plural(count, "HTML entity", "HTML entities")}` }];
}

/**
 * Whether the text itself says it was entity-escaped: entity references present and not one raw
 * `<`, `>` or `&` anywhere, which escaped text cannot have and real code with those characters
 * in strings or comparisons would.
 */
export function entityEscapedByEvidence(text: string): boolean {
  return ENTITY_ON_LINE.test(text) && !/[<>&]/.test(text.replace(ENTITY, ""));
}
