import { createHash } from "node:crypto";

/**
 * Namespace of skill point ids (itself a v5 UUID of "skill-engine/acquired_skill" in the URL
 * namespace). Changing it would orphan every point already in a Qdrant collection.
 */
export const SKILL_POINT_NAMESPACE = "97569111-757e-51d7-ad82-4b06466d412f";

/**
 * Qdrant accepts only unsigned integers and UUIDs as point ids, while skills are known by name.
 * A name-based UUID (RFC 9562 version 5: SHA-1 of namespace + name) gives every process the same
 * id for the same name with no lookup table; the name itself travels in the payload.
 */
export function skillPointId(name: string, namespace: string = SKILL_POINT_NAMESPACE): string {
  const hash = createHash("sha1").update(uuidBytes(namespace)).update(name, "utf8").digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50; // version 5
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80; // RFC variant
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function uuidBytes(uuid: string): Buffer {
  const hex = uuid.replace(/-/g, "");
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`not a UUID: ${uuid}`);
  return Buffer.from(hex, "hex");
}
