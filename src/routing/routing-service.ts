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
    this.logger.info({ ms: Date.now() - started }, "routing indexes ready");
  }

  /** Re-indexes every skill (e.g. to bring Qdrant up to date after an outage); returns how many. */
  async reindexAll(): Promise<number> {
    const skills = this.registry.list({ includeInactive: true }).map(toRoutable);
    await this.router.reindexAll(skills);
    return skills.length;
  }

  async sync(skill: SkillRecord, exampleQueries: readonly string[] = []): Promise<void> {
    await this.router.index(toRoutable(skill), exampleQueries);
  }

  credit(routeId: string, skill: SkillRecord, success: boolean, agentId: string): Promise<boolean> {
    return this.router.credit(routeId, skill.name, success, toRoutable(skill), agentId);
  }

  evidenceCount(name: string): number {
    return this.router.evidenceCount(name);
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
