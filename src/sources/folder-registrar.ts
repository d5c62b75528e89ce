import type { CallContext } from "../control/index.js";
import type { SkillRecord } from "../control/index.js";
import type { FolderRegistration, FolderSkillInput } from "../control/index.js";

/**
 * Port: what the skill folders need of the control plane (docs/skill-sources.md#registration), handed
 * to them at construction: register a version of what a scan or an import finds (through the same
 * gate as every skill), retire a skill whose folder is gone, restore one whose folder came back.
 * The control plane's folder-skill use case satisfies it.
 */
export interface FolderSkillRegistrar {
  register(input: FolderSkillInput, context: CallContext): Promise<FolderRegistration>;
  /** A no-op (undefined) unless the skill is live. */
  retire(input: { readonly name: string; readonly reason: string }, context: CallContext): Promise<SkillRecord | undefined>;
  restore(input: { readonly name: string }, context: CallContext): Promise<SkillRecord>;
}
