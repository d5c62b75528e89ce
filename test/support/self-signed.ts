import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A self-signed certificate for 127.0.0.1 and localhost (and `moreNames`), made with Debian's openssl;
 * it is its own CA.
 */
export async function selfSigned(
  dir: string,
  name: string,
  moreNames: readonly string[] = [],
): Promise<{ certFile: string; keyFile: string }> {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    keyFile,
    "-out",
    certFile,
    "-days",
    "2",
    "-subj",
    "/CN=localhost",
    "-addext",
    `subjectAltName=${["IP:127.0.0.1", "DNS:localhost", ...moreNames.map((host) => `DNS:${host}`)].join(",")}`,
  ]).catch((error: unknown) => {
    throw new Error(`openssl could not make a test certificate (apt-get install openssl): ${String(error)}`);
  });
  return { certFile, keyFile };
}
