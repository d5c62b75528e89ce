import { readFile, writeFile } from "node:fs/promises";
import { catalogStatusToJSON, type CatalogEntry } from "../../gen/skillengine/v1/composition.js";
import { OnDuplicate } from "../../gen/skillengine/v1/learning.js";
import { Visibility } from "../../gen/skillengine/v1/skills.js";
import { errorMessage } from "../../errors/index.js";
import { UsageError } from "./args.js";
import { everyPage } from "./pages.js";
import type { Command } from "./commands.js";
import { nearDuplicateLine, progress, skillJson, skillLine, table, toJson } from "./format.js";

/** `skillctl sources`: every folder the last scan of SKILL_ENGINE_SKILL_DIRS found (docs/skill-sources.md#catalog). */
export const sources: Command = async (ctx) => {
  const response = await everyPage(ctx, "sources", (page) => ctx.rpc.call(ctx.rpc.raw.listSkillSources, page));
  if (ctx.json) {
    ctx.io.out(toJson({ ...response, sources: response.sources.map(sourceJson) }));
    return 0;
  }
  ctx.io.out(`directories: ${response.directories.join(", ") || "(none: set SKILL_ENGINE_SKILL_DIRS)"}\n`);
  for (const problem of response.problems) ctx.io.out(`cannot list ${problem.directory}: ${problem.reason}\n`);
  ctx.io.out(sourceTable(response.sources));
  return 0;
};

/** `skillctl rescan`: scans the skill directories now and prints what changed. */
export const rescan: Command = async (ctx) => {
  const line = progress(ctx.io, false);
  line.show("scanning the skill directories (executable folders are test-run)…");
  const response = await ctx.rpc.call(ctx.rpc.raw.rescanSkillDirs, {}).finally(() => line.done());
  if (ctx.json) {
    ctx.io.out(toJson({ ...response, sources: response.sources.map(sourceJson) }));
    return 0;
  }
  ctx.io.out(sourceTable(response.sources));
  ctx.io.out(
    `scanned in ${response.durationMs} ms: ${response.registered.length} registered (${response.registered.join(", ") || "-"}), ` +
      `${response.retired.length} retired (${response.retired.join(", ") || "-"})\n`,
  );
  return 0;
};

/** `skillctl content <name|skill_id>`: a folder skill's instructions, then its bundled files. */
export const content: Command = async (ctx) => {
  const ref = ctx.positionals[0] ?? "";
  const byId = ref.includes("__");
  const response = await ctx.rpc.call(ctx.rpc.raw.getSkillContent, { name: byId ? "" : ref, skillId: byId ? ref : "" });
  if (ctx.json) {
    ctx.io.out(toJson(response));
    return 0;
  }
  ctx.io.out(`# ${response.name} (${response.kind}, v${response.version}, ${response.skillId})\n${response.body}`);
  if (!response.body.endsWith("\n")) ctx.io.out("\n");
  // Paths relative to the skill's folder, as GetSkillFile takes them: the service names no host path.
  ctx.io.out("\nbundled files:\n");
  ctx.io.out(table([["PATH", "BYTES"], ...response.files.map((f) => [f.path, String(f.bytes)])]));
  return 0;
};

/** `skillctl import <bundle.tar.gz|bundle.zip> [--public|--private] [--reject-duplicates]`. */
export const importBundle: Command = async (ctx) => {
  const file = ctx.positionals[0] ?? "";
  let archive: Buffer;
  try {
    archive = await readFile(file);
  } catch (error) {
    throw new UsageError(`cannot read bundle ${file}: ${errorMessage(error)}`);
  }
  if (ctx.options.public && ctx.options.private) throw new UsageError("--public and --private exclude each other", ctx.command);
  const visibility = ctx.options.public
    ? Visibility.VISIBILITY_PUBLIC
    : ctx.options.private
      ? Visibility.VISIBILITY_PRIVATE
      : Visibility.VISIBILITY_UNSPECIFIED;
  const line = progress(ctx.io, false);
  line.show(`importing ${file}: checked, then test-run in a sandbox if it is executable…`);
  const onDuplicate = ctx.options["reject-duplicates"] === true ? OnDuplicate.ON_DUPLICATE_REJECT : OnDuplicate.ON_DUPLICATE_WARN;
  const response = await ctx.rpc.call(ctx.rpc.raw.importSkillBundle, { archive, visibility, onDuplicate }).finally(() => line.done());
  if (ctx.json) {
    ctx.io.out(toJson({ ...response, skill: skillJson(response.skill) }));
    return 0;
  }
  const test = response.test ? `; test run passed in ${response.test.durationMs} ms` : " (instructions only: nothing to run)";
  ctx.io.out(`imported ${skillLine(response.skill)} as ${response.skillId}${test}\n`);
  for (const similar of response.similarSkills) if (similar.nearDuplicate) ctx.io.out(`${nearDuplicateLine(similar)}\n`);
  return 0;
};

/** `skillctl export <name> [-o file]`: the skill as a .tar.gz bundle. */
export const exportSkill: Command = async (ctx) => {
  const name = ctx.positionals[0] ?? "";
  const response = await ctx.rpc.call(ctx.rpc.raw.exportSkill, { name });
  const output = typeof ctx.options.output === "string" ? ctx.options.output : response.fileName;
  await writeFile(output, response.archive);
  if (ctx.json) ctx.io.out(toJson({ file: output, skillId: response.skillId, bytes: response.archive.length }));
  else ctx.io.out(`wrote ${output} (${response.archive.length} bytes, ${response.skillId})\n`);
  return 0;
};

function sourceJson(entry: CatalogEntry): Record<string, unknown> {
  return { ...entry, status: statusOf(entry) };
}

function statusOf(entry: CatalogEntry): string {
  return catalogStatusToJSON(entry.status)
    .replace(/^CATALOG_STATUS_/, "")
    .toLowerCase();
}

function sourceTable(entries: readonly CatalogEntry[]): string {
  const rows = [["FOLDER", "NAME", "KIND", "STATUS", "VERSION", "SKILL ID", "REASON"]];
  for (const e of entries) {
    rows.push([
      e.sourceFolder,
      e.name || "-",
      e.kind || "-",
      statusOf(e),
      e.version > 0 ? String(e.version) : "-",
      e.skillId || "-",
      e.reason,
    ]);
  }
  return table(rows);
}
