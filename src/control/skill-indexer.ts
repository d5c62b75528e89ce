import type { Caller } from "../identity/index.js";
import type { SkillRecord } from "./registry/index.js";

/**
 * What the control plane tells routing: every change of a skill (new version, status, pin) and
 * every routed invocation's outcome. Implemented by the routing layer; failures there are logged,
 * never fatal to the change itself (a rebuild re-indexes from the registry).
 */
export interface SkillIndexer {
  /**
   * Takes a change: what must survive a crash (the example queries, a mark that the skill needs
   * indexing) is stored before this returns; the returned promise settles once the skill is
   * indexed. Callers need not wait for it: routing itself waits for indexing in flight.
   */
  sync(skill: SkillRecord, exampleQueries?: readonly string[]): Promise<void>;
  /**
   * Records a routed skill's outcome for the route `agentId` asked for (another agent's route id
   * counts for nothing). Returns true when the route's query became evidence for the skill.
   */
  credit(routeId: string, skill: SkillRecord, success: boolean, agentId: string): Promise<boolean>;
  /** An invocation with a route id (docs/skill-sources.md#quality-counters); true when it counted. */
  applied?(routeId: string, skill: SkillRecord, success: boolean, agentId: string): Promise<boolean>;
  /** The agent used something else instead of a routed skill; true when it counted. */
  fallback?(routeId: string, skill: SkillRecord, agentId: string): Promise<boolean>;
  /** The quality counters of a skill (docs/skill-sources.md#quality-counters), where they are kept. */
  quality?(name: string): { selections: number; applied: number; completions: number; fallbacks: number } | undefined;
  /** How many stored queries route to the skill as evidence. */
  evidenceCount(name: string): number;
  /** Re-indexes every skill; returns how many. */
  reindexAll(): Promise<number>;
  /**
   * The names of the skills nearest to a description's vector among those `caller` may see,
   * nearest first, whatever their status (docs/learning.md#near-duplicates). Absent where the
   * indexer keeps no vectors: the screen then reads every visible skill.
   */
  nearestSkills?(vector: Float32Array, caller: Caller, limit: number): Promise<string[]>;
}
