import type { Logger } from "pino";
import { canSee, type HealthPolicy, type SkillIndexer, type SkillRecord, type SkillRegistry, windowRate } from "../control/index.js";
import { InvalidArgumentError } from "../errors/index.js";
import type { Caller } from "../identity/index.js";
import { hardenedDescription, toolDefinition } from "./hardened-description.js";
import { failsQualityFilter, type RoutableSkill, ROUTABLE_STATUSES, type RouteMode, type SkillRouter } from "./skill-router.js";

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
}

export interface RouteRequest {
  readonly query: string;
  readonly limit: number;
  readonly mode: RouteMode;
  readonly format: ToolFormat;
  /** In [0, 1]; undefined means the service's default. */
  readonly minRelevance?: number | undefined;
}

export const ROUTE_LIMITS = { defaultLimit: 5, maxLimit: 50, queryChars: 2000 } as const;

/**
 * The RouteSkills use case, and the control plane's indexer: keeps the router in step with the
 * registry and turns its hits into tool definitions with health attached.
 */
export class RoutingService implements SkillIndexer {
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
    private readonly defaults: { readonly minRelevance: number } = { minRelevance: 0 },
  ) {}

  async init(): Promise<void> {
    const started = Date.now();
    await this.router.init(this.registry.list({ includeInactive: true }).map(toRoutable));
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

  /** The skills for a query among those `caller` may see: its own and public ones (admins: all). */
  async route(request: RouteRequest, caller: Caller): Promise<{ routeId: string; skills: RoutedSkill[]; degraded: string[] }> {
    const query = request.query.trim();
    if (query === "") throw new InvalidArgumentError("query", "is required: what the user wants done");
    if (query.length > ROUTE_LIMITS.queryChars) {
      throw new InvalidArgumentError("query", `is ${query.length} characters; the limit is ${ROUTE_LIMITS.queryChars}`);
    }
    const limit = request.limit === 0 ? ROUTE_LIMITS.defaultLimit : request.limit;
    if (!Number.isInteger(limit) || limit < 1 || limit > ROUTE_LIMITS.maxLimit) {
      throw new InvalidArgumentError("limit", `must be between 1 and ${ROUTE_LIMITS.maxLimit}`);
    }
    const minRelevance = request.minRelevance ?? this.defaults.minRelevance;
    if (!(minRelevance >= 0 && minRelevance <= 1)) {
      throw new InvalidArgumentError("min_relevance", `must be between 0 and 1 (0 keeps every skill), got ${minRelevance}`);
    }
    await this.settled();
    const result = await this.router.route(query, {
      limit,
      mode: request.mode,
      minRelevance,
      scope: { agentId: caller.agentId, everything: caller.admin },
      exclude: (name) => failsQualityFilter(this.router.quality(name)),
    });
    const skills: RoutedSkill[] = [];
    for (const hit of result.hits) {
      const skill = this.registry.get(hit.name);
      // The index may trail the registry by a moment (a visibility just changed, say); the
      // registry has the last word.
      if (!skill || !ROUTABLE_STATUSES.includes(skill.status) || !canSee(skill, caller)) continue;
      const description = hardenedDescription(skill.name, skill.description, skill.parametersSchema);
      const warnings = [skill.healthWarning, skill.status === "degraded" ? `degraded: ${skill.statusReason}` : ""].filter((w) => w !== "");
      skills.push({
        skill,
        description,
        score: hit.score,
        successRate: windowRate(this.registry.window(skill.name, skill.version), this.policy),
        warnings,
        toolDefinition: JSON.stringify(toolDefinition(request.format, skill.name, description, skill.parametersSchema)),
        keywordRank: hit.keywordRank,
        vectorRank: hit.vectorRank,
        relevance: hit.relevance,
        keywordScore: hit.keywordScore,
        vectorScore: hit.vectorScore,
      });
    }
    return { routeId: result.routeId, skills, degraded: result.degraded };
  }
}

function toRoutable(skill: SkillRecord): RoutableSkill {
  return { name: skill.name, description: skill.description, status: skill.status, owner: skill.owner, visibility: skill.visibility };
}
