import { createHash } from "node:crypto";
import type { PackageDeclarations } from "./package-declarations.js";

/** Hex characters of an environment id: 128 bits of SHA-256. */
export const ENVIRONMENT_ID_LENGTH = 32;
const ENVIRONMENT_ID = new RegExp(`^[0-9a-f]{${ENVIRONMENT_ID_LENGTH}}$`);

/**
 * An environment's id (docs/packages.md#environment-id): SHA-256 over the canonical JSON of the
 * sandbox image's id and the normalised declarations, so every version declaring the same set for
 * the same image shares one environment, and a new image gets new ones (its Python may differ).
 * The keys are written in a fixed order; the lists are already sorted and de-duplicated.
 */
export function environmentId(imageId: string, declarations: PackageDeclarations): string {
  const canonical = JSON.stringify({
    image: imageId,
    requirements: [...declarations.requirements],
    system_packages: [...declarations.systemPackages],
  });
  return createHash("sha256").update(canonical, "utf8").digest("hex").slice(0, ENVIRONMENT_ID_LENGTH);
}

/** Whether a string is an id this module makes: the only names the builder gives a directory. */
export function isEnvironmentId(text: string): boolean {
  return ENVIRONMENT_ID.test(text);
}
