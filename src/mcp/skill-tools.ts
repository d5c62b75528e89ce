import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { CatalogStatus, type GetCatalogResponse } from "../gen/skillengine/v1/composition.js";
import { hardenedDescription } from "../routing/index.js";
import { allSkills, type CallScope, type EngineClient, wholeCatalog } from "./engine-client.js";
import { schemaObject } from "./tool-results.js";

/** Tools a page of tools/list holds in `skills` and `both` modes (docs/mcp.md#a-tool-per-skill). */
export const TOOLS_PAGE_SIZE = 100;

/** MCP's tool names: 1 to 128 of these characters (a skill's name always is one; anything else is left out). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Catalog entries a skill of its own runs for: ready, and something to run (an instructions-only folder has nothing). */
function runnable(catalog: GetCatalogResponse): Map<string, number> {
  const entries = new Map<string, number>();
  for (const entry of catalog.skills) {
    if (entry.status === CatalogStatus.CATALOG_STATUS_READY && entry.kind !== "instructions" && TOOL_NAME.test(entry.name)) {
      entries.set(entry.name, entry.version);
    }
  }
  return entries;
}

/**
 * What changes when the caller's skill tools change: each runnable skill's name with its version, and
 * which of them are switched off (`disabled`: names; the catalog does not show the switch).
 */
export function toolsFingerprint(catalog: GetCatalogResponse, disabled: ReadonlySet<string> = new Set()): string {
  return [...runnable(catalog)].map(([name, version]) => `${name}@${version}${disabled.has(name) ? " off" : ""}`).join("\n");
}

/** What changes when a folder skill is added, changed or removed (its resources). */
export function resourcesFingerprint(catalog: GetCatalogResponse): string {
  return catalog.skills
    .filter((entry) => entry.skillId !== "")
    .map((entry) => `${entry.skillId}@${entry.version}:${entry.status}`)
    .join("\n");
}

/**
 * One page of the caller's skills as tools of their own, ordered by name: the skill's name, its hardened
 * description (the one RouteSkills gives) and its parameters schema as `inputSchema`. The cursor is the
 * last name of the previous page. `reserved`: names of meta tools, which a skill cannot shadow.
 */
export async function skillToolsPage(
  engine: EngineClient,
  scope: CallScope,
  cursor: string | undefined,
  reserved: ReadonlySet<string>,
): Promise<{ tools: Tool[]; nextCursor?: string }> {
  const [catalog, listed] = await Promise.all([wholeCatalog(engine, scope), allSkills(engine, scope)]);
  const ready = runnable(catalog);
  const after = cursor === undefined ? undefined : Buffer.from(cursor, "base64url").toString("utf8");
  const skills = listed
    .filter((s) => ready.has(s.name) && !s.disabled && !reserved.has(s.name))
    .filter((s) => after === undefined || s.name > after)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const page = skills.slice(0, TOOLS_PAGE_SIZE);
  const tools: Tool[] = page.map((s) => ({
    name: s.name,
    title: s.name,
    description: hardenedDescription(s.name, s.description, s.parametersSchema),
    inputSchema: { ...schemaObject(s.parametersSchema), type: "object" },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  }));
  const last = page.at(-1);
  return skills.length > page.length && last ? { tools, nextCursor: Buffer.from(last.name, "utf8").toString("base64url") } : { tools };
}
