import type { Caller } from "../identity/index.js";

/**
 * Port: RegisterSkill's routing gate (docs/routing.md#the-routing-gate). The control plane asks it
 * how a skill about to be registered ranks for its own example queries against the skills the
 * caller can see, and whose queries it would take; the routing concern implements it.
 */
export interface RoutingGate {
  /**
   * Ranks `candidate` (as it describes itself, with `exampleQueries` as its evidence) against the
   * indexes as they stand, without changing them. Throws only for routing's own failures, which the
   * registration logs and answers without a report.
   */
  report(candidate: GateCandidate, exampleQueries: readonly string[], caller: Caller): Promise<RoutingGateReport>;
}

/** The skill being registered, as routing will index it. */
export interface GateCandidate {
  readonly name: string;
  readonly description: string;
}

/** How the new skill ranks for one of its example queries. */
export interface ExampleQueryRank {
  readonly query: string;
  /** 1-based, among the skills the caller can see. */
  readonly rank: number;
  /** Its calibrated relevance for the query; undefined when vectors were unavailable. */
  readonly relevance: number | undefined;
  /** The skills ranked above it, best first (at most {@link ROUTING_GATE_LIMITS.outrankedListed}). */
  readonly outrankedBy: readonly string[];
  /** Within the default route limit and not below the service's relevance floor. */
  readonly found: boolean;
}

/** A query of another skill that the new skill would now rank above that skill. */
export interface ShadowedQuery {
  readonly skill: string;
  /** The query, only when the skill is the caller's (or the caller is an admin); undefined otherwise. */
  readonly query: string | undefined;
  /** The new skill's rank for the query, and that skill's. */
  readonly rank: number;
  readonly skillRank: number;
}

export interface RoutingGateReport {
  readonly examples: readonly ExampleQueryRank[];
  readonly shadowed: readonly ShadowedQuery[];
  /** One line each: an example the skill is not found by; a skill whose query it would take. */
  readonly warnings: readonly string[];
  /** Why the ranks are partial (vectors unavailable: ranked by keywords alone). */
  readonly degraded: readonly string[];
}

/**
 * The gate's bounds (docs/routing.md#the-routing-gate): the work is a few rankings per example
 * query, never a pass over the library.
 */
export const ROUTING_GATE_LIMITS = {
  /** An example ranked within this many (the default route limit) is found. */
  foundWithin: 5,
  /** Skills listed as outranking the new skill for one example. */
  outrankedListed: 5,
  /** Competitors whose queries are checked for shadowing: the best ranked for the new skill's examples. */
  competitors: 3,
  /** Queries checked per competitor: its most recent evidence (example or credited queries). */
  queriesPerCompetitor: 3,
} as const;
