import { FailedPreconditionError } from "../../errors/index.js";
import { requireAdmin } from "../access/index.js";
import type { CallContext } from "../call-context.js";
import type { SkillCore } from "./skill-core.js";
import { compareKeys, type Listing, openPage, type Page, type PageRequest } from "../../paging/index.js";

/** ListEnvironments' pages: by environment id. */
const LIST_ENVIRONMENTS: Listing = { name: "ListEnvironments", keyShapes: ["s"] };

/** One file of an environment's lock (docs/packages.md#the-lock). */
export interface EnvironmentLockEntry {
  readonly kind: "wheel" | "deb";
  readonly name: string;
  readonly version: string;
  readonly sha256: string;
  readonly file: string;
}

/** A recorded environment as the environments report it, its status checked against the disk. */
export interface EnvironmentState {
  readonly id: string;
  readonly requirements: readonly string[];
  readonly systemPackages: readonly string[];
  /** Undefined until a build has succeeded once. */
  readonly lock: readonly EnvironmentLockEntry[] | undefined;
  readonly sizeBytes: number;
  readonly status: "ready" | "failed" | "missing";
  /** The last failed build's one-line cause; empty otherwise. */
  readonly error: string;
  readonly builtAt: Date;
  readonly lastUsedAt: Date;
}

/** ListEnvironments' row: the environment and how many skill versions refer to it. */
export interface EnvironmentView extends EnvironmentState {
  readonly skills: number;
}

/** What one environment's rebuild came to. */
export interface EnvironmentRebuildOutcome {
  readonly id: string;
  readonly result: "rebuilt" | "skipped" | "failed";
  readonly error?: string;
}

/** CheckRuntimes' answer (docs/packages.md#runtimes). */
export interface RuntimeReport {
  readonly sandboxPython: string | undefined;
  readonly installerPython: string | undefined;
  readonly pip: string | undefined;
  readonly pythonMatches: boolean;
  readonly packageSource: {
    readonly kind: "index" | "wheelhouse" | "none";
    readonly location: string;
    readonly reachable: boolean;
    readonly detail: string;
  };
  readonly debian: { readonly available: boolean; readonly detail: string };
}

/**
 * Port: the operator's side of the environments (docs/packages.md#operators), implemented by
 * src/environments. `rebuild` installs from the recorded locks, one environment at a time.
 */
export interface EnvironmentAdministration {
  list(): Promise<EnvironmentState[]>;
  rebuild(options: { readonly missingOnly: boolean }): Promise<EnvironmentRebuildOutcome[]>;
  checkRuntimes(): Promise<RuntimeReport>;
}

/**
 * ListEnvironments, RebuildEnvironments, CheckRuntimes. Listing and the runtime check are for any
 * caller: an environment holds package names, versions and hashes, no secret and no skill's code
 * (docs/security.md#the-access-table). A rebuild replaces what every skill of a set runs on: admins.
 */
export class EnvironmentOperations {
  constructor(
    private readonly core: SkillCore,
    private readonly environments: EnvironmentAdministration | undefined,
  ) {}

  /** Every recorded environment, with the number of skill versions (any skill, any status) that refer to it. */
  async list(_context: CallContext): Promise<EnvironmentView[]> {
    if (!this.environments) return [];
    const states = await this.environments.list();
    const uses = this.core.registry.environmentUses();
    return states.map((state) => ({ ...state, skills: uses.get(state.id) ?? 0 }));
  }

  /**
   * ListEnvironments: one page of {@link list} by id (docs/api.md#pagination). Environments are few
   * (one per distinct package set), so the page is cut from the whole list.
   */
  async listPage(request: PageRequest, context: CallContext): Promise<Page<EnvironmentView>> {
    const window = openPage<[string]>(LIST_ENVIRONMENTS, {}, request);
    const sorted = (await this.list(context)).sort((a, b) => compareKeys([a.id], [b.id]));
    return window.slice(sorted, (environment) => [environment.id]);
  }

  /**
   * Installs the recorded environments again from their locks. The builds go on to their end
   * when the caller goes away: each has its own time limit, and a half-finished set of rebuilds
   * is only a shorter list of fresh directories.
   */
  async rebuild(input: { readonly missingOnly: boolean }, context: CallContext): Promise<EnvironmentRebuildOutcome[]> {
    requireAdmin(context.caller, "RebuildEnvironments");
    if (!this.environments) return [];
    const outcomes = await this.environments.rebuild({ missingOnly: input.missingOnly });
    const count = (result: EnvironmentRebuildOutcome["result"]): number => outcomes.filter((o) => o.result === result).length;
    this.core.logger.warn(
      {
        missingOnly: input.missingOnly,
        rebuilt: count("rebuilt"),
        skipped: count("skipped"),
        failed: outcomes.filter((o) => o.result === "failed").map((o) => o.id),
        agent: context.caller.agentId,
        requestId: context.requestId,
      },
      "environments rebuilt by request",
    );
    return outcomes;
  }

  /** The runtimes builds depend on; an index URL's user and password are never shown. */
  async checkRuntimes(_context: CallContext): Promise<RuntimeReport> {
    if (!this.environments) throw new FailedPreconditionError("this service builds no environments: skills cannot declare packages");
    const report = await this.environments.checkRuntimes();
    const { location, detail } = report.packageSource;
    const shown = withoutCredentials(location);
    if (shown === location) return report;
    return { ...report, packageSource: { ...report.packageSource, location: shown, detail: detail.split(location).join(shown) } };
  }
}

/** A URL with `user:password@` has them replaced by `***`; anything else as it is. */
export function withoutCredentials(location: string): string {
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    return location;
  }
  if (url.username === "" && url.password === "") return location;
  url.username = "***";
  url.password = "";
  return url.toString();
}
