import { z } from "zod";
import { AGENT_ID_PATTERN } from "../identity/index.js";
import { CIPHER, type Sealed } from "./secret-cipher.js";
import { SECRET_NAME_PATTERN } from "./secret-rules.js";
import { KEY_FILE_SETTING, SecretsStoreError } from "./secrets-errors.js";

/** The store's file name under SKILL_ENGINE_HOME (docs/security.md#the-store). */
export const STORE_FILE = "secrets.json";

/** One agent's secret as the store keeps it: never its value in clear. */
export interface StoredEntry {
  readonly agentId: string;
  readonly name: string;
  readonly sealed: Sealed;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The whole store: the key check (which key sealed it) and every entry. */
export interface StoreContent {
  readonly keyCheck: Sealed;
  readonly entries: readonly StoredEntry[];
}

const FORMAT = 1;
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, "must be base64");
const sealedShape = { nonce: base64, ciphertext: base64, tag: base64 };
const timestamp = z.iso.datetime();

const storeSchema = z.object({
  format: z.literal(FORMAT),
  cipher: z.literal(CIPHER),
  key_check: z.object(sealedShape),
  secrets: z.array(
    z.object({
      agent: z.string().regex(AGENT_ID_PATTERN),
      name: z.string().regex(SECRET_NAME_PATTERN),
      ...sealedShape,
      created_at: timestamp,
      updated_at: timestamp,
    }),
  ),
});

/** The file's text: entries sorted by agent then name, so two writes of one state are the same bytes. */
export function serializeStore(content: StoreContent): string {
  const entries = [...content.entries].sort((a, b) => compare(a.agentId, b.agentId) || compare(a.name, b.name));
  return `${JSON.stringify(
    {
      format: FORMAT,
      cipher: CIPHER,
      key_check: sealedJson(content.keyCheck),
      secrets: entries.map((entry) => ({
        agent: entry.agentId,
        name: entry.name,
        ...sealedJson(entry.sealed),
        created_at: entry.createdAt.toISOString(),
        updated_at: entry.updatedAt.toISOString(),
      })),
    },
    null,
    2,
  )}\n`;
}

/** The store read from `file`'s text; a SecretsStoreError naming the file when it is not one the service wrote. */
export function parseStore(text: string, file: string): StoreContent {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw damaged(file, "it is not JSON");
  }
  const parsed = storeSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw damaged(file, `${issue?.path.join(".") || "the file"}: ${issue?.message ?? "unexpected shape"}`);
  }
  const seen = new Set<string>();
  const entries = parsed.data.secrets.map((entry): StoredEntry => {
    const key = `${entry.agent}\0${entry.name}`;
    if (seen.has(key)) throw damaged(file, `agent ${entry.agent} has secret ${entry.name} twice`);
    seen.add(key);
    return {
      agentId: entry.agent,
      name: entry.name,
      sealed: fromSealedJson(entry),
      createdAt: new Date(entry.created_at),
      updatedAt: new Date(entry.updated_at),
    };
  });
  return { keyCheck: fromSealedJson(parsed.data.key_check), entries };
}

function damaged(file: string, why: string): SecretsStoreError {
  return new SecretsStoreError(
    `the secrets store ${file} cannot be read (${why}): it was changed outside the service. Restore it together with ` +
      `${KEY_FILE_SETTING} from the same backup, or move it away to start with no secrets`,
  );
}

function sealedJson(sealed: Sealed): { nonce: string; ciphertext: string; tag: string } {
  return { nonce: sealed.nonce.toString("base64"), ciphertext: sealed.ciphertext.toString("base64"), tag: sealed.tag.toString("base64") };
}

function fromSealedJson(json: { nonce: string; ciphertext: string; tag: string }): Sealed {
  return {
    nonce: Buffer.from(json.nonce, "base64"),
    ciphertext: Buffer.from(json.ciphertext, "base64"),
    tag: Buffer.from(json.tag, "base64"),
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
