import type { SkillRecord } from "./registry/index.js";

/**
 * What the control plane tells routing: every change of a skill (new version, status, pin) and
 * every routed invocation's outcome. Implemented by the routing layer; failures there are logged,
 * never fatal to the change itself (a rebuild re-indexes from the registry).
 */
export interface SkillIndexer {
  sync(skill: SkillRecord, exampleQueries?: readonly string[]): Promise<void>;
  /**
   * Records a routed skill's outcome for the route `agentId` asked for (another agent's route id
   * counts for nothing). Returns true when the route's query became evidence for the skill.
   */
  credit(routeId: string, skill: SkillRecord, success: boolean, agentId: string): Promise<boolean>;
  /** How many stored queries route to the skill as evidence. */
  evidenceCount(name: string): number;
  /** Re-indexes every skill; returns how many. */
  reindexAll(): Promise<number>;
}
