import type { Logger } from "pino";
import { FailedPreconditionError, InvalidArgumentError, SkillNotFoundError, SkillVersionNotFoundError } from "../../errors/index.js";
import { agentIdProblem, type Caller, userIdProblem } from "../../identity/index.js";
import { validateSkillName } from "../intake/index.js";
import type { GranteeKind, SkillGrant, SkillRecord, SkillRegistry } from "../registry/index.js";
import { canManage, canSee, notYoursError } from "./skill-access.js";
import { compareKeys, type Listing, openPage, type Page, type PageRequest } from "../../paging/index.js";

/** ListGrants' pages: by grantee kind, then grantee (unique within a skill). */
const LIST_GRANTS: Listing = { name: "ListGrants", keyShapes: ["ss"] };

/** Who a grant is for, as a request names it: exactly one of the two. */
export interface GranteeInput {
  readonly agent: string;
  readonly user: string;
}

export interface SkillSharingDependencies {
  readonly registry: SkillRegistry;
  readonly logger: Logger;
  readonly now: () => Date;
  /** Runs `work` under the skill's per-name lock (the same one every other change of the skill takes). */
  readonly lock: <T>(name: string, work: () => Promise<T>) => Promise<T>;
  /** Writes the mirror and re-indexes the skill for routing after a change. */
  readonly changed: (skill: SkillRecord) => Promise<void>;
}

/**
 * Grants, revocations and the on/off switch (docs/security.md#grants-and-visibility): the owner's
 * or an admin's calls; a system skill's an admin's only. Anybody who cannot see the skill gets
 * NOT_FOUND, exactly as for a name that does not exist.
 */
export class SkillSharing {
  constructor(private readonly deps: SkillSharingDependencies) {}

  /** Adds (or replaces) the grantee's grant; `version` 0 follows the active version, otherwise pins it. */
  async grant(name: string, grantee: GranteeInput, version: number, caller: Caller): Promise<{ skill: SkillRecord; grant: SkillGrant }> {
    const { kind, id } = checkGrantee(grantee);
    if (!Number.isInteger(version) || version < 0)
      throw new InvalidArgumentError("version", "must be 0 (follow the active version) or a version number");
    return this.deps.lock(name, async () => {
      const skill = this.manageable(name, caller, "grant");
      if (kind === "agent" && id === skill.owner) {
        throw new FailedPreconditionError(`"${name}" belongs to agent "${id}" already: an owner needs no grant`);
      }
      if (version > 0 && !this.deps.registry.version(name, version))
        throw new SkillVersionNotFoundError(name, version, skill.latestVersion);
      const grant: SkillGrant = {
        name,
        granteeKind: kind,
        grantee: id,
        version: version > 0 ? version : undefined,
        grantedBy: caller.agentId,
        grantedAt: this.deps.now(),
      };
      const updated = this.deps.registry.grant(grant);
      await this.deps.changed(updated);
      this.deps.logger.info(
        {
          skill: name,
          granteeKind: kind,
          grantee: id,
          pinned: grant.version,
          visibility: updated.visibility,
          agent: caller.agentId,
          user: caller.userId,
        },
        "skill granted",
      );
      return { skill: updated, grant };
    });
  }

  /** Removes the grantee's grant (revoked false when it had none). */
  async revoke(name: string, grantee: GranteeInput, caller: Caller): Promise<{ skill: SkillRecord; revoked: boolean }> {
    const { kind, id } = checkGrantee(grantee);
    return this.deps.lock(name, async () => {
      this.manageable(name, caller, "revoke a grant of");
      const outcome = this.deps.registry.revoke(name, kind, id, this.deps.now());
      if (outcome.revoked) {
        await this.deps.changed(outcome.skill);
        this.deps.logger.info(
          { skill: name, granteeKind: kind, grantee: id, visibility: outcome.skill.visibility, agent: caller.agentId, user: caller.userId },
          "grant revoked",
        );
      }
      return outcome;
    });
  }

  /** The grants of a skill: for its owner and admins; to anybody else it does not exist. */
  grants(name: string, caller: Caller): readonly SkillGrant[] {
    const skill = this.existing(name);
    if (!caller.admin && skill.owner !== caller.agentId) throw new SkillNotFoundError(name);
    return skill.grants;
  }

  /**
   * ListGrants: one page of {@link grants} by grantee, agents first (docs/api.md#pagination). The skill's
   * record already holds every grant (one query with it), so the page is cut from the record.
   */
  grantsPage(name: string, request: PageRequest, caller: Caller): Page<SkillGrant> {
    const window = openPage<[string, string]>(LIST_GRANTS, { name }, request);
    const key = (grant: SkillGrant): [string, string] => [grant.granteeKind, grant.grantee];
    const sorted = [...this.grants(name, caller)].sort((a, b) => compareKeys(key(a), key(b)));
    return window.slice(sorted, key);
  }

  /** Switches a skill on or off; off, it keeps everything but is neither routed nor invocable. */
  async setEnabled(name: string, enabled: boolean, caller: Caller): Promise<SkillRecord> {
    return this.deps.lock(name, async () => {
      const skill = this.manageable(name, caller, enabled ? "enable" : "disable");
      if (skill.enabled === enabled) return skill;
      const updated = this.deps.registry.setEnabled(name, enabled, caller.agentId, this.deps.now());
      await this.deps.changed(updated);
      this.deps.logger.info(
        { skill: name, enabled, agent: caller.agentId, user: caller.userId },
        enabled ? "skill enabled" : "skill disabled",
      );
      return updated;
    });
  }

  private existing(name: string): SkillRecord {
    validateSkillName(name);
    const skill = this.deps.registry.get(name);
    if (!skill) throw new SkillNotFoundError(name);
    return skill;
  }

  private manageable(name: string, caller: Caller, action: string): SkillRecord {
    const skill = this.existing(name);
    if (!canSee(skill, caller)) throw new SkillNotFoundError(name);
    if (!canManage(skill, caller)) throw notYoursError(name, skill, action, caller);
    return skill;
  }
}

/** FAILED_PRECONDITION for a disabled skill, naming who switched it off and the way back. */
export function disabledError(skill: Pick<SkillRecord, "name" | "disabledBy">, action: string): FailedPreconditionError {
  return new FailedPreconditionError(
    `cannot ${action} "${skill.name}": it is disabled (switched off by "${skill.disabledBy}"); SetSkillEnabled with enabled=true brings it back`,
  );
}

function checkGrantee(grantee: GranteeInput): { kind: GranteeKind; id: string } {
  const agent = grantee.agent.trim();
  const user = grantee.user.trim();
  if ((agent === "") === (user === "")) {
    throw new InvalidArgumentError("grantee", "give exactly one of grantee_agent and grantee_user");
  }
  if (agent !== "") {
    const problem = agentIdProblem(agent);
    if (problem) throw new InvalidArgumentError("grantee_agent", problem);
    return { kind: "agent", id: agent };
  }
  const problem = userIdProblem(user);
  if (problem) throw new InvalidArgumentError("grantee_user", problem);
  return { kind: "user", id: user };
}
