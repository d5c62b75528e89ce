import { writeFile } from "node:fs/promises";
import path from "node:path";

/** One entry of SKILL_ENGINE_TOKENS_FILE (docs/security.md#identity-and-scoping). */
export interface TokenEntry {
  readonly agent: string;
  readonly token?: string;
  readonly token_sha256?: string;
  readonly admin?: boolean;
  readonly delegate?: boolean;
}

/** Writes a tokens file (mode 0600, as the service requires) in `dir` and returns its path. */
export async function writeTokensFile(dir: string, tokens: readonly TokenEntry[]): Promise<string> {
  const file = path.join(dir, "tokens.json");
  await writeFile(file, JSON.stringify({ tokens }), { mode: 0o600 });
  return file;
}
