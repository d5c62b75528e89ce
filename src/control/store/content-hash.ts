import { createHash } from "node:crypto";

/** sha256 of the UTF-8 code, lowercase hex: the identity of a skill version's content. */
export function contentHash(code: string): string {
  return createHash("sha256").update(code, "utf8").digest("hex");
}
