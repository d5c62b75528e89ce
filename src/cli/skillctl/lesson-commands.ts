import { readFile } from "node:fs/promises";
import { errorMessage } from "../../errors/index.js";
import { type Lesson, LessonScope, lessonStateToJSON } from "../../gen/skillengine/v1/playbook.js";
import { Visibility } from "../../gen/skillengine/v1/skills.js";
import { positiveInteger, UsageError } from "./args.js";
import { everyPage } from "./pages.js";
import type { Command, CommandContext } from "./commands.js";
import { oneLine, table, toJson, visibilityName } from "./format.js";

const str = (ctx: CommandContext, key: string): string | undefined => {
  const value = ctx.options[key];
  return typeof value === "string" ? value : undefined;
};

const SCOPES: Record<string, LessonScope> = {
  today: LessonScope.LESSON_SCOPE_TODAY,
  week: LessonScope.LESSON_SCOPE_WEEK,
  all: LessonScope.LESSON_SCOPE_ALL,
};

/** `skillctl lessons <action> …`: the playbook's lessons (docs/playbook.md). */
export const lessons: Command = async (ctx) => {
  const [action = "", id] = ctx.positionals;
  const needId = (): string => {
    if (!id) throw new UsageError(`'lessons ${action}' needs a lesson id`, "lessons");
    return id;
  };
  const noId = (): void => {
    if (id !== undefined) throw new UsageError(`'lessons ${action}' takes no lesson id`, "lessons");
  };
  switch (action) {
    case "add":
      noId();
      return add(ctx);
    case "list":
      noId();
      return list(ctx);
    case "show":
      return printLesson(ctx, (await ctx.rpc.callPlaybook(ctx.rpc.playbook.getLesson, { lessonId: needId() })).lesson);
    case "verify":
      return verify(ctx, needId());
    case "prune":
      noId();
      return prune(ctx);
    case "pin":
    case "unpin": {
      const request = { lessonId: needId(), pinned: action === "pin" };
      return printLesson(ctx, (await ctx.rpc.callPlaybook(ctx.rpc.playbook.setLessonPinned, request)).lesson);
    }
    case "delete":
      return printLesson(ctx, (await ctx.rpc.callPlaybook(ctx.rpc.playbook.deleteLesson, { lessonId: needId() })).lesson);
    case "restore": {
      const restored = await ctx.rpc.callPlaybook(ctx.rpc.playbook.restoreLesson, { lessonId: needId() });
      for (const archived of restored.archived) if (!ctx.json) ctx.io.err(`skillctl: the cap archived ${archived}\n`);
      return printLesson(ctx, restored.lesson);
    }
    default:
      throw new UsageError(`unknown lessons action '${action}': add, list, show, verify, prune, pin, unpin, delete, restore`, "lessons");
  }
};

/** `skillctl playbook <query…>`: the context block, exactly as an agent would inject it. */
export const playbook: Command = async (ctx) => {
  const limitText = str(ctx, "limit");
  const response = await ctx.rpc.callPlaybook(ctx.rpc.playbook.getPlaybookContext, {
    query: ctx.positionals.join(" "),
    limit: limitText === undefined ? 0 : positiveInteger(limitText, "--limit"),
  });
  if (ctx.json) {
    ctx.io.out(toJson({ ...response, lessons: response.lessons.map(lessonJson) }));
    return 0;
  }
  for (const warning of response.warnings) ctx.io.err(`skillctl: ${warning}\n`);
  if (response.context === "") ctx.io.err("skillctl: no lesson qualifies for this query\n");
  else ctx.io.out(response.context);
  return 0;
};

async function add(ctx: CommandContext): Promise<number> {
  const trigger = str(ctx, "trigger");
  const correctPattern = str(ctx, "do");
  if (trigger === undefined) throw new UsageError("lessons add needs --trigger", "lessons");
  if (correctPattern === undefined) throw new UsageError("lessons add needs --do", "lessons");
  if (ctx.options.public === true && ctx.options.private === true) throw new UsageError("give --public or --private, not both", "lessons");
  const confidenceText = str(ctx, "confidence") ?? "0.5";
  const confidence = Number(confidenceText);
  if (confidenceText.trim() === "" || !Number.isFinite(confidence)) {
    throw new UsageError(`--confidence must be a number in [0, 1], got '${confidenceText}'`, "lessons");
  }
  const challengeFile = str(ctx, "challenge-file");
  let challengeText = "";
  if (challengeFile !== undefined) {
    try {
      challengeText = await readFile(challengeFile, "utf8");
    } catch (error) {
      throw new UsageError(`cannot read challenge file ${challengeFile}: ${errorMessage(error)}`, "lessons");
    }
  }
  const domains = ctx.options.domain;
  const added = await ctx.rpc.callPlaybook(ctx.rpc.playbook.addLesson, {
    trigger,
    antiPattern: str(ctx, "avoid") ?? "",
    correctPattern,
    domains: Array.isArray(domains) ? domains : [],
    confidence,
    source: str(ctx, "source") ?? "skillctl",
    sourceChallengeHash: str(ctx, "challenge-hash") ?? "",
    challengeText,
    visibility: ctx.options.public === true ? Visibility.VISIBILITY_PUBLIC : Visibility.VISIBILITY_PRIVATE,
  });
  if (ctx.json) {
    ctx.io.out(toJson({ ...added, lesson: lessonJson(added.lesson) }));
    return 0;
  }
  ctx.io.out(`${added.merged ? "merged into" : "added"} ${added.lesson?.id ?? ""} (utility ${fixed(added.lesson?.utility)})\n`);
  for (const archived of added.archived) ctx.io.out(`archived by the cap: ${archived}\n`);
  return 0;
}

async function list(ctx: CommandContext): Promise<number> {
  const scopeText = (str(ctx, "scope") ?? "all").toLowerCase();
  const scope = SCOPES[scopeText];
  if (scope === undefined) throw new UsageError(`--scope must be today, week or all, got '${scopeText}'`, "lessons");
  const limitText = str(ctx, "limit");
  const domains = ctx.options.domain;
  if (Array.isArray(domains) && domains.length > 1) throw new UsageError("lessons list takes one --domain", "lessons");
  const request = {
    scope,
    domain: Array.isArray(domains) ? (domains[0] ?? "") : "",
    limit: limitText === undefined ? 0 : positiveInteger(limitText, "--limit"),
    includeInactive: ctx.options.all === true,
    owner: str(ctx, "owner") ?? "",
  };
  // --limit: the top lessons, one page of that many; otherwise every lesson, page after page.
  const response =
    limitText === undefined
      ? await everyPage(ctx, "lessons", (page) => ctx.rpc.callPlaybook(ctx.rpc.playbook.listLessons, { ...request, ...page }))
      : await ctx.rpc.callPlaybook(ctx.rpc.playbook.listLessons, request);
  if (ctx.json) {
    ctx.io.out(toJson(response.lessons.map(lessonJson)));
    return 0;
  }
  if (response.lessons.length === 0) {
    ctx.io.out("no lessons\n");
    return 0;
  }
  const rows = [["ID", "UTILITY", "STATE", "SHOWN", "HELPED", "VERIFIED", "PINNED", "TRIGGER"]];
  for (const l of response.lessons) {
    rows.push([
      l.id,
      fixed(l.utility),
      stateName(l),
      String(l.retrievals),
      String(l.helpfulRetrievals),
      l.verified ? "yes" : "",
      l.pinned ? "yes" : "",
      oneLine(l.trigger),
    ]);
  }
  ctx.io.out(table(rows));
  return 0;
}

/** `pass`, `pass:2` or `fail` (attempts default to 1). */
function runOutcome(text: string | undefined, flag: string): { passed: boolean; attempts: number } {
  const match = text === undefined ? null : /^(pass|fail)(?::(\d+))?$/i.exec(text.trim());
  if (!match) throw new UsageError(`${flag} must be pass, pass:<attempts> or fail, got '${text ?? ""}'`, "lessons");
  return { passed: match[1]?.toLowerCase() === "pass", attempts: match[2] === undefined ? 1 : positiveInteger(match[2], flag) };
}

async function verify(ctx: CommandContext, lessonId: string): Promise<number> {
  const original = runOutcome(str(ctx, "original"), "--original");
  const withLesson = runOutcome(str(ctx, "with-lesson"), "--with-lesson");
  const response = await ctx.rpc.callPlaybook(ctx.rpc.playbook.verifyLesson, {
    lessonId,
    originalPassed: original.passed,
    originalAttempts: original.attempts,
    verifyPassed: withLesson.passed,
    verifyAttempts: withLesson.attempts,
  });
  if (ctx.json) {
    ctx.io.out(toJson({ ...response, lesson: lessonJson(response.lesson) }));
    return 0;
  }
  ctx.io.out(`${lessonId}: ${response.lesson?.verified ? "verified" : "not verified"} (${response.reason})\n`);
  return 0;
}

async function prune(ctx: CommandContext): Promise<number> {
  const minText = str(ctx, "min-retrievals");
  const dropText = str(ctx, "max-drop");
  const maxDrop = dropText === undefined ? 0 : Number(dropText);
  if (dropText !== undefined && (dropText.trim() === "" || !Number.isFinite(maxDrop))) {
    throw new UsageError(`--max-drop must be a fraction in (0, 1], got '${dropText}'`, "lessons");
  }
  const dryRun = ctx.options["dry-run"] === true;
  const response = await ctx.rpc.callPlaybook(ctx.rpc.playbook.pruneLessons, {
    minRetrievals: minText === undefined ? 0 : positiveInteger(minText, "--min-retrievals"),
    maxDropFraction: maxDrop,
    hasMaxDropFraction: dropText !== undefined,
    dryRun,
  });
  if (ctx.json) {
    ctx.io.out(toJson({ ...response, dropped: response.dropped.map(lessonJson) }));
    return 0;
  }
  if (response.dropped.length === 0) ctx.io.out("nothing to prune\n");
  for (const l of response.dropped) ctx.io.out(`${dryRun ? "would archive" : "archived"} ${l.id}  ${oneLine(l.trigger)}\n`);
  return 0;
}

function printLesson(ctx: CommandContext, lesson: Lesson | undefined): number {
  if (ctx.json) {
    ctx.io.out(toJson(lessonJson(lesson)));
    return 0;
  }
  if (!lesson) return 0;
  const lines = [
    `id:          ${lesson.id}`,
    `owner:       ${lesson.owner} (${visibilityName(lesson.visibility)})`,
    `state:       ${stateName(lesson)}${lesson.archivedReason ? ` (${lesson.archivedReason})` : ""}`,
    `trigger:     ${lesson.trigger}`,
    ...(lesson.antiPattern ? [`avoid:       ${lesson.antiPattern}`] : []),
    `do:          ${lesson.correctPattern}`,
    `domains:     ${lesson.domains.join(", ")}`,
    `confidence:  ${lesson.confidence}`,
    `utility:     ${fixed(lesson.utility)} (hit rate ${fixed(lesson.hitRate)}, frequency ${lesson.frequency})`,
    `retrievals:  ${lesson.retrievals} shown, ${lesson.helpfulRetrievals} helpful; added ${lesson.timesAdded} time(s)`,
    `verified:    ${lesson.verified ? "yes" : "no"}; pinned: ${lesson.pinned ? "yes" : "no"}${lesson.guarded ? "" : "; unguarded (added without a challenge text)"}`,
    `source:      ${lesson.source}${lesson.sourceChallengeHash ? ` (challenge ${lesson.sourceChallengeHash})` : ""}`,
    `created:     ${lesson.createdAt?.toISOString() ?? ""}`,
  ];
  ctx.io.out(`${lines.join("\n")}\n`);
  return 0;
}

function lessonJson(lesson: Lesson | undefined): unknown {
  return lesson === undefined
    ? undefined
    : { ...lesson, state: lessonStateToJSON(lesson.state), visibility: visibilityName(lesson.visibility) };
}

function stateName(lesson: Lesson): string {
  return lessonStateToJSON(lesson.state)
    .replace(/^LESSON_STATE_/, "")
    .toLowerCase();
}

function fixed(value: number | undefined): string {
  return (value ?? 0).toFixed(3);
}
