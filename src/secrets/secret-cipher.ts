import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** AES-256-GCM (docs/security.md#the-store): an AEAD, so a changed byte or a moved entry does not decrypt. */
export const CIPHER = "aes-256-gcm";
/** GCM's recommended 96-bit nonce, fresh from the CSPRNG for every encryption (a key seals far fewer than 2^32 values). */
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** One encrypted value as the store keeps it. */
export interface Sealed {
  readonly nonce: Buffer;
  readonly ciphertext: Buffer;
  readonly tag: Buffer;
}

/**
 * The associated data of an entry: its agent and name, so an entry copied to another agent or renamed in the file
 * does not decrypt. Neither an agent id nor a secret name can hold a NUL, so the encoding is unambiguous.
 */
export function entryAad(agentId: string, name: string): Buffer {
  return Buffer.from(`skill-engine/secret/v1\0${agentId}\0${name}`, "utf8");
}

/** The key check's associated data and text: a store with no secret still tells whether a key opens it. */
const KEY_CHECK_AAD = Buffer.from("skill-engine/secrets-key-check/v1", "utf8");
const KEY_CHECK_TEXT = Buffer.from("skill-engine secrets store", "utf8");

export function seal(key: Buffer, aad: Buffer, plaintext: Buffer): Sealed {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv(CIPHER, key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { nonce, ciphertext, tag: cipher.getAuthTag() };
}

/** The plaintext, or undefined when the key, the associated data or any byte of `sealed` is not what sealed it. */
export function unseal(key: Buffer, aad: Buffer, sealed: Sealed): Buffer | undefined {
  if (sealed.nonce.length !== NONCE_BYTES || sealed.tag.length !== TAG_BYTES) return undefined;
  const decipher = createDecipheriv(CIPHER, key, sealed.nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.tag);
  try {
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  } catch {
    return undefined;
  }
}

export function sealKeyCheck(key: Buffer): Sealed {
  return seal(key, KEY_CHECK_AAD, KEY_CHECK_TEXT);
}

/** True when `key` is the key that sealed `check`. */
export function opensKeyCheck(key: Buffer, check: Sealed): boolean {
  return unseal(key, KEY_CHECK_AAD, check)?.equals(KEY_CHECK_TEXT) === true;
}
