import type { Logger } from "pino";
import { untilReplied } from "../reply-scope/index.js";
import {
  type CallContext,
  canSee,
  type HealthPolicy,
  leavesOwnRoutes,
  pinnedVersionFor,
  type SkillIndexer,
  type SkillRecord,
  SkillLookup,
  type SkillRegistry,
  windowRate,
} from "../control/index.js";
import { InvalidArgumentError } from "../errors/index.js";
import type { Caller } from "../identity/index.js";
import { DEFAULT_HARDENING, type Hardening, instructionsText, toolDefinition, toolDescription } from "./hardened-description.js";
import { agentAudience, SEARCH_QUERY_LIMITS, searchedQuery, userAudience } from "../search/index.js";
import { failsFallbackFilter, type QualityCounters, type SkillQuality } from "./quality-counters.js";
import {
  failsQualityFilter,
  type RoutableSkill,
  ROUTABLE_STATUSES,
  type RouteMode,
  type RouteQuality,
  type RouteScope,
  type SkillRouter,
} from "./skill-router.js";

export type ToolFormat = "openai" | "anthropic";

/** One routed skill, ready for an LLM's tool list. */
export interface RoutedSkill {
  readonly skill: SkillRecord;
  readonly description: string;
  readonly score: number;
  readonly successRate: number | undefined;
  readonly warnings: string[];
  readonly toolDefinition: string;
  readonly keywordRank: number;
  readonly vectorRank: number;
  /** Calibrated relevance in [0, 1]; undefined when the route had no vector source. */
  readonly relevance: number | undefined;
  readonly keywordScore: number;
  readonly vectorScore: number;
  /** "plain", "composed", "directory" or "instructions", and a folder skill's id (docs/skill-sources.md#routing). */
  readonly kind: string;
  readonly skillId: string;
  /** The quality counters (docs/skill-sources.md#quality-counters), as the header shows them; undefined where they are not kept. */
  readonly quality: SkillQuality | undefined;
  /**
   * An instructions-only skill's text for the model's context, set instead of a tool definition
   * (`toolDefinition` is then empty): it is read, never called (docs/routing.md#instructions-skills).
   */
  readonly instructions?: string;
}

/** What a routed skill's header says about its kind (composition and skill sources know it; routing does not). */
export type SkillDescriber = (skill: SkillRecord) => { readonly kind: string; readonly skillId: string };

export interface RouteRequest {
  readonly query: string;
  readonly limit: number;
  readonly mode: RouteMode;
  readonly format: ToolFormat;
  /** How much a tool's description says about calling it (docs/routing.md#hardened-descriptions). @default "short" */
  readonly hardening?: Hardening;
  /** In [0, 1]; undefined means the service's default. */
  readonly minRelevance?: number | undefined;
}

/** What the routing service is told at construction besides its stores. */
export interface RoutingOptions {
  /** The floor of an answer when the request sets none (docs/routing.md#no-skill-fits). @default 0 */
  readonly minRelevance?: number;
  /** Each routed skill's kind and id. @default plain, no id */
  readonly describe?: SkillDescriber;
}

/** RecordRouteFeedback's input (docs/routing.md#learning-from-use). */
export interface RouteFeedbackInput {
  /** The id RouteSkills returned. */
  readonly routeId: string;
  readonly name: string;
  readonly success: boolean;
  /** The agent used something else instead (docs/skill-sources.md#quality-counters). @default false */
  readonly fallback?: boolean;
}

/** What ResetSkillQuality cleared: routing's filter counters and the quality counters, as they were for the active version. */
export interface QualityReset {
  readonly skill: SkillRecord;
  readonly routed: RouteQuality;
  readonly quality: SkillQuality;
}

/** `queryChars`: the longest query accepted; only its first and last 1,000 are searched (docs/routing.md#long-queries). */
export const ROUTE_LIMITS = { defaultLimit: 5, maxLimit: 50, queryChars: SEARCH_QUERY_LIMITS.acceptedChars } as const;

/**
 * The RouteSkills use case, and the control plane's indexer: keeps the router in step with the
 * registry and turns its hits into tool definitions with health attached.
 */
export class RoutingService implements SkillIndexer {
  private readonly describe: SkillDescriber;
  private readonly minRelevance: number;
  /** Feedback names a skill the caller may see, looked up exactly as the control plane's use cases do. */
  private readonly lookup: SkillLookup;
  /**
   * Indexing still in flight, per skill name, chained so that one skill's changes land in order.
   * Routing and feedback wait for it, so a caller never routes against an index older than its
   * own acknowledged change (docs/performance.md#registration).
   */
  private readonly indexing = new Map<string, Promise<void>>();

  constructor(
    private readonly router: SkillRouter,
    private readonly registry: SkillRegistry,
    private readonly policy: HealthPolicy,
    private readonly logger: Logger,
    options: RoutingOptions = {},
    private readonly counters?: QualityCounters,
  ) {
    this.describe = options.describe ?? (() => ({ kind: "plain", skillId: "" }));
    this.minRelevance = options.minRelevance ?? 0;
    this.lookup = new SkillLookup(registry);
  }

  async init(): Promise<void> {
    const started = Date.now();
    await this.router.init({ count: this.registry.count(), load: () => this.registry.list({ includeInactive: true }).map(toRoutable) });
    // Changes acknowledged just before a crash, whose embedding had not been written: indexed
    // again in the background, so start-up does not wait for the model (routing waits for them).
    for (const name of this.router.pendingNames()) {
      const skill = this.registry.get(name);
      if (!skill) {
        this.router.settle(name);
        continue;
      }
      this.sync(skill).catch((error: unknown) => this.logger.error({ err: error, skill: name }, "could not re-index a pending skill"));
    }
    this.logger.info({ ms: Date.now() - started }, "routing indexes ready");
  }

  /** Re-indexes every skill (e.g. to bring Qdrant up to date after an outage); returns how many. */
  async reindexAll(): Promise<number> {
    await this.settled();
    const skills = this.registry.list({ includeInactive: true }).map(toRoutable);
    await this.router.reindexAll(skills);
    return skills.length;
  }

  /**
   * Stores the example queries and marks the skill pending before it returns (synchronously), then
   * embeds and indexes it; the returned promise settles once that is done. A crash before then
   * loses nothing: start-up indexes every skill still marked pending.
   */
  sync(skill: SkillRecord, exampleQueries: readonly string[] = []): Promise<void> {
    const name = skill.name;
    this.router.accept(name, exampleQueries);
    const work = (this.indexing.get(name) ?? Promise.resolve()).then(async () => {
      // The index rows are written once the caller has its answer (docs/performance.md#after-the-reply);
      // routing waits for them through settled().
      await untilReplied();
      await this.router.index(toRoutable(skill));
      this.router.settle(name);
    });
    const done = work.catch(() => undefined);
    this.indexing.set(name, done);
    void done.then(() => {
      if (this.indexing.get(name) === done) this.indexing.delete(name);
    });
    return work;
  }

  /** Resolves when every change handed to {@link RoutingService.sync} so far is indexed (or failed, logged). */
  async settled(): Promise<void> {
    while (this.indexing.size > 0) await Promise.all([...this.indexing.values()]);
  }

  async credit(routeId: string, skill: SkillRecord, success: boolean, agentId: string): Promise<boolean> {
    await this.settled();
    return this.router.credit(routeId, skill.name, success, toRoutable(skill), agentId);
  }

  /** An invocation that carried `routeId`: counted as applied (and completed on success) when the route returned the skill. */
  async applied(routeId: string, skill: SkillRecord, success: boolean, agentId: string): Promise<boolean> {
    if (!this.counters || !this.router.routeIncludes(routeId, skill.name, agentId)) return false;
    this.counters.applied(skill.name, success);
    return true;
  }

  /** The agent used something else instead of a routed skill (RecordRouteFeedback with `fallback`). */
  async fallback(routeId: string, skill: SkillRecord, agentId: string): Promise<boolean> {
    if (!this.counters || !this.router.routeIncludes(routeId, skill.name, agentId)) return false;
    this.counters.fallback(skill.name);
    return true;
  }

  /**
   * RecordRouteFeedback: the caller's verdict on a skill its route returned, for the caller's own
   * routes only (another agent's route id counts for nothing). A fallback says the agent used
   * something else: no success to credit. True when it counted; routing's own failures are logged.
   */
  async recordFeedback(input: RouteFeedbackInput, context: CallContext): Promise<boolean> {
    const { routeId, success, fallback = false } = input;
    if (routeId.trim() === "") throw new InvalidArgumentError("route_id", "is required: the id RouteSkills returned");
    const skill = this.lookup.visible(input.name, context.caller);
    const agentId = context.caller.agentId;
    if (fallback) {
      if (success) {
        throw new InvalidArgumentError("fallback", "cannot be set together with success: the agent either used the skill or replaced it");
      }
      return this.fallback(routeId, skill, agentId);
    }
    try {
      return await this.credit(routeId, skill, success, agentId);
    } catch (error) {
      this.logger.error({ err: error, skill: skill.name, routeId }, "could not record routing feedback");
      return false;
    }
  }

  quality(name: string): SkillQuality | undefined {
    return this.counters?.get(name);
  }

  /**
   * ResetSkillQuality (owner or admin): clears every routing quality counter of a skill, so a skill
   * the quality filters dropped is routed again (docs/routing.md#quality-filter). Answers the active
   * version's counters as they were.
   */
  resetQuality(input: { readonly name: string }, context: CallContext): QualityReset {
    const skill = this.lookup.manageable(input.name, context.caller, "reset the quality counters of");
    const routed = this.router.resetQuality(skill.name);
    const quality = this.counters?.reset(skill.name) ?? { selections: 0, applied: 0, completions: 0, fallbacks: 0 };
    this.logger.info(
      { skill: skill.name, routed, quality, agent: context.caller.agentId, requestId: context.requestId },
      "quality counters reset",
    );
    return { skill, routed, quality };
  }

  evidenceCount(name: string): number {
    return this.router.evidenceCount(name);
  }

  /**
   * The near-duplicate screen's candidates (docs/learning.md#near-duplicates): the skills nearest
   * to a description's vector among those `caller` may see, once every change handed to
   * {@link RoutingService.sync} is indexed (a skill registered a moment ago is among them).
   */
  async nearestSkills(vector: Float32Array, caller: Caller, limit: number): Promise<string[]> {
    await this.settled();
    return this.router.nearestSkills(vector, routeScope(caller), limit);
  }

  /**
   * The skills for a query among those `caller` may see: its own and public ones (admins: all).
   * `warnings` says when only part of a long query was searched.
   */
  async route(
    request: RouteRequest,
    caller: Caller,
  ): Promise<{ routeId: string; skills: RoutedSkill[]; degraded: string[]; warnings: string[]; noFit: boolean }> {
    const trimmed = request.query.trim();
    if (trimmed === "") throw new InvalidArgumentError("query", "is required: what the user wants done");
    const { text: query, pieces, warning } = searchedQuery(trimmed);
    const limit = request.limit === 0 ? ROUTE_LIMITS.defaultLimit : request.limit;
    if (!Number.isInteger(limit) || limit < 1 || limit > ROUTE_LIMITS.maxLimit) {
      throw new InvalidArgumentError("limit", `must be between 1 and ${ROUTE_LIMITS.maxLimit}`);
    }
    const minRelevance = request.minRelevance ?? this.minRelevance;
    if (!(minRelevance >= 0 && minRelevance <= 1)) {
      throw new InvalidArgumentError("min_relevance", `must be between 0 and 1 (0 keeps every skill), got ${minRelevance}`);
    }
    await this.settled();
    // The caller's own verdicts steer its own routes at once, whoever owns the skill; the shared
    // status follows them only as docs/learning.md#whose-reports-count says.
    const leftOutForCaller = new Set<string>();
    for (const [name, own] of this.registry.ownReports(caller.agentId)) if (leavesOwnRoutes(own, this.policy)) leftOutForCaller.add(name);
    const result = await this.router.route(query, {
      pieces,
      limit,
      mode: request.mode,
      minRelevance,
      scope: routeScope(caller),
      exclude: (name) =>
        leftOutForCaller.has(name) ||
        failsQualityFilter(this.router.quality(name)) ||
        (this.counters !== undefined && failsFallbackFilter(this.counters.get(name))),
      // Until the retirement sweep takes it, a degraded skill ranks below every healthy one.
      demote: (name) => this.registry.get(name)?.status === "degraded",
    });
    const skills: RoutedSkill[] = [];
    for (const hit of result.hits) {
      const skill = this.registry.get(hit.name);
      // The index may trail the registry by a moment (a visibility just changed, say); the
      // registry has the last word.
      if (!skill || !ROUTABLE_STATUSES.includes(skill.status) || !skill.enabled || !canSee(skill, caller)) continue;
      // A grantee pinned to a version gets that version's tool definition (docs/security.md#pinned-grants).
      const pinned = pinnedVersionFor(skill, caller);
      const shown = (pinned === undefined || pinned === skill.version ? undefined : this.registry.version(skill.name, pinned)) ?? skill;
      const header = this.describe(skill);
      // An instructions-only skill has nothing to run: it is handed over as a text to read, never
      // as a tool (docs/routing.md#instructions-skills).
      const instructions = header.kind === "instructions" ? instructionsText(skill.name, shown.description) : undefined;
      const description =
        instructions ?? toolDescription(skill.name, shown.description, shown.parametersSchema, request.hardening ?? DEFAULT_HARDENING);
      const warnings = [skill.healthWarning, skill.status === "degraded" ? `degraded: ${skill.statusReason}` : ""].filter((w) => w !== "");
      skills.push({
        skill,
        description,
        score: hit.score,
        successRate: windowRate(this.registry.window(skill.name, skill.version), this.policy),
        warnings,
        toolDefinition:
          instructions === undefined ? JSON.stringify(toolDefinition(request.format, skill.name, description, shown.parametersSchema)) : "",
        ...(instructions === undefined ? {} : { instructions }),
        keywordRank: hit.keywordRank,
        vectorRank: hit.vectorRank,
        relevance: hit.relevance,
        keywordScore: hit.keywordScore,
        vectorScore: hit.vectorScore,
        ...header,
        quality: undefined,
      });
    }
    if (this.counters && skills.length > 0) {
      const counters = this.counters;
      try {
        counters.selected(skills.map((s) => s.skill.name));
        skills.forEach((s, i) => (skills[i] = { ...s, quality: counters.get(s.skill.name) }));
      } catch (error) {
        this.logger.error({ err: error }, "could not count routing selections");
      }
    }
    return {
      routeId: result.routeId,
      skills,
      degraded: result.degraded,
      warnings: warning === undefined ? [] : [warning],
      noFit: result.noFit,
    };
  }
}

/**
 * What the indexes keep of a skill (docs/routing.md#scoping): a system skill is routed to every
 * agent as a public one; a disabled one keeps its entries under the status `disabled`, which no
 * route asks for; each grant adds its grantee's audience.
 */
function toRoutable(skill: SkillRecord): RoutableSkill {
  const grantAudiences = skill.grants.map((g) => (g.granteeKind === "agent" ? agentAudience(g.grantee) : userAudience(g.grantee)));
  return {
    name: skill.name,
    description: skill.description,
    status: skill.enabled ? skill.status : DISABLED_STATUS,
    owner: skill.owner,
    visibility: skill.system ? "public" : skill.visibility,
    ...(grantAudiences.length > 0 ? { grantAudiences } : {}),
  };
}

/** The index status of a switched-off skill; not among ROUTABLE_STATUSES. */
const DISABLED_STATUS = "disabled";

/** Whose skills a caller's routes search: its own, public and granted ones; an admin's, every skill. */
function routeScope(caller: Caller): RouteScope {
  return { agentId: caller.agentId, everything: caller.admin, ...(caller.userId === undefined ? {} : { userId: caller.userId }) };
}
