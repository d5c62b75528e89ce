import { type HostPattern, type MappedAddress, parseHostMap, parseHostPattern } from "../egress/index.js";
import type { SkillEngineConfig } from "./config-options.js";

/** The egress settings (docs/security.md#egress), as the composition root hands them to the control plane and the gateway. */
export type EgressSettings = SkillEngineConfig["egress"];

/** The variables of the schema this reads (config-schema.ts gives their ranges and defaults). */
export interface EgressVariables {
  readonly SKILL_ENGINE_EGRESS_ALLOWED_HOSTS?: string | undefined;
  readonly SKILL_ENGINE_EGRESS_HOST_MAP?: string | undefined;
  readonly SKILL_ENGINE_EGRESS_MAX_CONNECTIONS: number;
  readonly SKILL_ENGINE_EGRESS_MAX_BYTES: number;
  readonly SKILL_ENGINE_EGRESS_CONNECT_TIMEOUT_MS: number;
}

/**
 * Reads the egress settings; a malformed policy entry or host-map entry is added to `problems`
 * (naming the variable and the entry), so the start stops with every bad setting listed.
 */
export function egressSettings(v: EgressVariables, problems: string[]): EgressSettings {
  const allowedHosts: HostPattern[] = [];
  for (const entry of (v.SKILL_ENGINE_EGRESS_ALLOWED_HOSTS ?? "").split(",").map((part) => part.trim())) {
    if (entry === "") continue;
    const parsed = parseHostPattern(entry);
    if (typeof parsed === "string") problems.push(`SKILL_ENGINE_EGRESS_ALLOWED_HOSTS: "${entry}" ${parsed}`);
    else allowedHosts.push(parsed);
  }
  let hostMap: ReadonlyMap<string, MappedAddress> = new Map();
  try {
    hostMap = parseHostMap(v.SKILL_ENGINE_EGRESS_HOST_MAP);
  } catch (error) {
    problems.push((error as Error).message);
  }
  return {
    allowedHosts,
    hostMap,
    limits: {
      maxConnections: v.SKILL_ENGINE_EGRESS_MAX_CONNECTIONS,
      maxBytes: v.SKILL_ENGINE_EGRESS_MAX_BYTES,
      connectTimeoutMs: v.SKILL_ENGINE_EGRESS_CONNECT_TIMEOUT_MS,
    },
  };
}
