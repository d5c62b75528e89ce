import type { SkillQueries } from "../control/index.js";
import { type ScanReport, type SkillBundles, type SkillSources, sourcesPage } from "../sources/index.js";
import type { SkillEngineServer } from "../gen/skillengine/v1/skill_engine.js";
import type { SourceProblem } from "../gen/skillengine/v1/sources.js";
import { Visibility } from "../gen/skillengine/v1/skills.js";
import { InvalidArgumentError } from "../errors/index.js";
import {
  fromOnDuplicateMessage,
  fromVisibilityMessage,
  toCatalogEntryMessage,
  toExecutionResultMessage,
  toSimilarSkillMessage,
  toSkillMessage,
} from "./messages.js";
import { type UnaryDependencies, unaryHandler } from "./unary-call.js";

/** The skill-folder RPCs of the SkillEngine service (docs/skill-sources.md); messages in, messages out. */
export type SourceHandlers = Pick<
  SkillEngineServer,
  "listSkillSources" | "rescanSkillDirs" | "getSkillContent" | "getSkillFile" | "importSkillBundle" | "exportSkill" | "getCatalog"
>;

export function skillSourceHandlers(
  sources: SkillSources,
  bundles: SkillBundles,
  queries: SkillQueries,
  deps: UnaryDependencies,
): SourceHandlers {
  return {
    // One catalog: composition's entries with the folders' ids, locations and statuses.
    getCatalog: unaryHandler(deps, "GetCatalog", async (request, context) => {
      // Taken before the page is read: a change while it is read moves the next answer's etag.
      const etag = sources.catalogEtag();
      const page = sources.catalogPage(request, context.caller, (after, limit) => queries.catalogAfter({ after, limit }, context));
      return { skills: page.items.map(toCatalogEntryMessage), nextPageToken: page.nextPageToken, etag };
    }),

    listSkillSources: unaryHandler(deps, "ListSkillSources", async (request) => {
      const page = sourcesPage(sources.lastScan.entries, request);
      return {
        sources: page.items.map(toCatalogEntryMessage),
        problems: problemsOf(sources.lastScan),
        directories: [...sources.roots],
        nextPageToken: page.nextPageToken,
      };
    }),

    rescanSkillDirs: unaryHandler(deps, "RescanSkillDirs", async (_request, context) => {
      const report = await sources.rescanFor(context.caller, context.signal);
      return {
        sources: sources.sourceEntries(report).map(toCatalogEntryMessage),
        problems: problemsOf(report),
        registered: report.registered,
        retired: report.retired,
        durationMs: Math.round(report.durationMs),
      };
    }),

    getSkillContent: unaryHandler(deps, "GetSkillContent", async (request, context) => {
      const content = await sources.content({ name: request.name, skillId: request.skillId }, context.caller);
      return {
        name: content.skill.name,
        skillId: content.skillId,
        kind: content.kind,
        body: content.body,
        baseDir: content.baseDir,
        files: content.files.map((f) => ({ path: f.path, bytes: f.bytes })),
        version: content.skill.version,
        description: content.skill.description,
      };
    }),

    getSkillFile: unaryHandler(deps, "GetSkillFile", async (request, context) => {
      const found = await sources.file({ name: request.name, skillId: request.skillId }, request.path, context.caller);
      return { name: found.skill.name, path: request.path, content: found.content, bytes: found.content.length };
    }),

    importSkillBundle: unaryHandler(deps, "ImportSkillBundle", async (request, context) => {
      const visibility = fromVisibilityMessage(request.visibility);
      if (visibility === undefined && request.visibility !== Visibility.VISIBILITY_UNSPECIFIED) {
        throw new InvalidArgumentError("visibility", "must be VISIBILITY_PRIVATE or VISIBILITY_PUBLIC");
      }
      const onDuplicate = fromOnDuplicateMessage(request.onDuplicate);
      const imported = await bundles.import({ archive: Buffer.from(request.archive), visibility, onDuplicate }, context);
      return {
        skill: toSkillMessage(imported.skill),
        skillId: imported.skillId,
        test: imported.test ? toExecutionResultMessage(imported.test) : undefined,
        similarSkills: imported.similarSkills.map(toSimilarSkillMessage),
      };
    }),

    exportSkill: unaryHandler(deps, "ExportSkill", async (request, context) => {
      const exported = await bundles.export({ name: request.name }, context);
      return { archive: exported.archive, fileName: exported.fileName, skillId: exported.skillId };
    }),
  };
}

function problemsOf(report: ScanReport): SourceProblem[] {
  return report.problems.map((p) => ({ directory: p.root, reason: p.reason }));
}
