import { randomBytes } from "node:crypto";
import { mkdir, open } from "node:fs/promises";
import path from "node:path";
import { errorMessage } from "../errors/index.js";
import { createPrivateFile } from "./private-files.js";
import { KEY_FILE_SETTING, SecretsStoreError } from "./secrets-errors.js";

/** AES-256: the key file holds exactly this many raw bytes. */
export const KEY_BYTES = 32;

/**
 * The key in `file`, or undefined when there is no such file. Refuses (SecretsStoreError) a file that is not a regular
 * file, that anybody but its owner may read or write (the key decrypts every secret), or that is not exactly
 * {@link KEY_BYTES} bytes.
 */
export async function readKeyFile(file: string): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new SecretsStoreError(`${KEY_FILE_SETTING} ${file}: cannot be read: ${errorMessage(error)}`, { cause: error });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new SecretsStoreError(`${KEY_FILE_SETTING} ${file}: is not a regular file`);
    if ((stat.mode & 0o077) !== 0) {
      throw new SecretsStoreError(
        `${KEY_FILE_SETTING} ${file}: has mode ${(stat.mode & 0o777).toString(8).padStart(4, "0")}; the key decrypts every ` +
          `secret, so it must be readable by the service's user alone: chmod 600 ${file}`,
      );
    }
    if (stat.size !== KEY_BYTES) {
      throw new SecretsStoreError(
        `${KEY_FILE_SETTING} ${file}: is ${stat.size} bytes; a key file holds exactly ${KEY_BYTES} random bytes ` +
          `(e.g. head -c ${KEY_BYTES} /dev/urandom > ${file}; chmod 600 ${file})`,
      );
    }
    const key = Buffer.alloc(KEY_BYTES);
    const { bytesRead } = await handle.read(key, 0, KEY_BYTES, 0);
    if (bytesRead !== KEY_BYTES) throw new SecretsStoreError(`${KEY_FILE_SETTING} ${file}: could not read its ${KEY_BYTES} bytes`);
    return key;
  } finally {
    await handle.close();
  }
}

/**
 * A new random key written to `file` (mode 0600, its directory created 0700 when missing). Another process that
 * created the file first wins: its key is returned.
 */
export async function createKeyFile(file: string): Promise<Buffer> {
  const key = randomBytes(KEY_BYTES);
  try {
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    if (await createPrivateFile(file, key)) return key;
  } catch (error) {
    throw new SecretsStoreError(`${KEY_FILE_SETTING} ${file}: cannot be created: ${errorMessage(error)}`, { cause: error });
  }
  const existing = await readKeyFile(file);
  if (existing === undefined) throw new SecretsStoreError(`${KEY_FILE_SETTING} ${file}: vanished while it was being created`);
  return existing;
}
