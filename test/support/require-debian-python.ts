import { existsSync } from "node:fs";
import { DEBIAN_PYTHON } from "../../src/control/intake/index.js";

/**
 * The intake parser runs Debian's python3, which the service requires to start; a test of it
 * fails with what to do rather than skipping where it is missing.
 */
export function requireDebianPython(): void {
  if (!existsSync(DEBIAN_PYTHON)) {
    throw new Error(
      `${DEBIAN_PYTHON} is missing: intake parses skill code with Debian's python3, which the service needs to start; ` +
        "install it with npm run setup (or apt-get install python3)",
    );
  }
}
