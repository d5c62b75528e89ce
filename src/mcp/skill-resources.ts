import { status } from "@grpc/grpc-js";
import { McpError, ErrorCode, type ReadResourceResult, type Resource, type ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import mime from "mime-types";
import { CatalogStatus } from "../gen/skillengine/v1/composition.js";
import { GetSkillContentRequest, type GetSkillContentResponse, GetSkillFileRequest } from "../gen/skillengine/v1/sources.js";
import { type CallScope, type EngineClient, isServiceError, wholeCatalog } from "./engine-client.js";
import { codeName } from "./tool-results.js";

/** MCP's "resource not found" (the protocol's own code for it, beside JSON-RPC's). */
const RESOURCE_NOT_FOUND = -32002;
/** Folder skills whose contents are asked for at once while listing. */
const LIST_CONCURRENCY = 8;
const SKILL_MD = "SKILL.md";

export const SKILL_RESOURCE_TEMPLATE: ResourceTemplate = {
  uriTemplate: "skill://{skill_id}/{+path}",
  name: "skill-file",
  title: "A file of a skill folder",
  description: "SKILL.md (its body, without frontmatter) or a bundled file of the folder skill whose .skill_id is skill_id.",
};

/** `skill://<skill_id>/<path>` (docs/mcp.md#resources). */
export function skillUri(skillId: string, path: string): string {
  return `skill://${skillId}/${path.split("/").map(encodeURIComponent).join("/")}`;
}

/** Every folder skill the caller may see: its SKILL.md (name and description listed, the body read later) and its bundled files. */
export async function listSkillResources(engine: EngineClient, scope: CallScope): Promise<Resource[]> {
  const catalog = await wholeCatalog(engine, scope);
  const folders = catalog.skills.filter(
    (e) =>
      e.skillId !== "" &&
      (e.status === CatalogStatus.CATALOG_STATUS_READY || e.status === CatalogStatus.CATALOG_STATUS_BLOCKED) &&
      // The catalog also lists folders of the last scan that are not (or not yet) a skill: nothing to read there.
      e.version > 0,
  );
  const contents: GetSkillContentResponse[] = [];
  for (let i = 0; i < folders.length; i += LIST_CONCURRENCY) {
    const batch = folders.slice(i, i + LIST_CONCURRENCY).map((e) =>
      engine
        .call(engine.skills.getSkillContent, GetSkillContentRequest.fromPartial({ skillId: e.skillId }), scope)
        .catch((error: unknown) => {
          // A folder removed since the catalog was read is simply not listed.
          if (isServiceError(error) && error.code === status.NOT_FOUND) return undefined;
          throw error;
        }),
    );
    for (const content of await Promise.all(batch)) if (content) contents.push(content);
  }
  return contents.flatMap((c) => [
    {
      uri: skillUri(c.skillId, SKILL_MD),
      name: `${c.name}/${SKILL_MD}`,
      title: c.name,
      description: c.description,
      mimeType: "text/markdown",
    },
    ...c.files
      .filter((f) => f.path !== SKILL_MD)
      .map((f) => ({
        uri: skillUri(c.skillId, f.path),
        name: `${c.name}/${f.path}`,
        description: `a file bundled with the skill ${c.name}`,
        mimeType: mime.lookup(f.path) || "application/octet-stream",
        size: f.bytes,
      })),
  ]);
}

/** Reads one `skill://` resource: SKILL.md's body, or a bundled file (text when it is UTF-8, else base64). */
export async function readSkillResource(engine: EngineClient, scope: CallScope, uri: string): Promise<ReadResourceResult> {
  const match = /^skill:\/\/([^/]+)\/(.+)$/.exec(uri);
  if (!match?.[1] || !match[2]) throw new McpError(ErrorCode.InvalidParams, `not a skill resource: ${uri} (skill://<skill_id>/<path>)`);
  const skillId = decodeURIComponent(match[1]);
  const path = match[2].split("/").map(decodeURIComponent).join("/");
  try {
    if (path === SKILL_MD) {
      const content = await engine.call(engine.skills.getSkillContent, GetSkillContentRequest.fromPartial({ skillId }), scope);
      return { contents: [{ uri, mimeType: "text/markdown", text: content.body }] };
    }
    const file = await engine.call(engine.skills.getSkillFile, GetSkillFileRequest.fromPartial({ skillId, path }), scope);
    const mimeType = mime.lookup(path) || "application/octet-stream";
    const bytes = Buffer.from(file.content);
    const text = utf8(bytes);
    return { contents: [text === undefined ? { uri, mimeType, blob: bytes.toString("base64") } : { uri, mimeType, text }] };
  } catch (error) {
    throw resourceError(error, uri);
  }
}

function utf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** A failed read as a JSON-RPC error: not found (the same answer for another agent's private skill), bad path, or the service. */
export function resourceError(error: unknown, uri: string): McpError {
  if (!isServiceError(error)) return error instanceof McpError ? error : new McpError(ErrorCode.InternalError, String(error));
  const details = (error.details || error.message).trim();
  if (error.code === status.NOT_FOUND) return new McpError(RESOURCE_NOT_FOUND, `resource not found: ${uri}: ${details}`, { uri });
  if (error.code === status.INVALID_ARGUMENT || error.code === status.FAILED_PRECONDITION || error.code === status.PERMISSION_DENIED) {
    return new McpError(ErrorCode.InvalidParams, `${uri}: ${details}`);
  }
  return new McpError(ErrorCode.InternalError, `the skill engine is unavailable (${codeName(error.code)}: ${details})`);
}
