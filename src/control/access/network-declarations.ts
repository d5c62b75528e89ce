import { coveredByPolicy, type HostPattern, MAX_DECLARED_HOSTS, parseHostPattern } from "../../egress/index.js";
import { InvalidArgumentError } from "../../errors/index.js";

/** The setting that caps what any skill may declare (docs/security.md#declaring-hosts). */
const POLICY_SETTING = "SKILL_ENGINE_EGRESS_ALLOWED_HOSTS";

/**
 * A declared host as it is stored and shown: lower case, no trailing dot, `*.domain` for a
 * wildcard, an IPv6 literal in brackets, and the port when one was written. Parsing it again gives
 * the same pattern, so the gateway reads what was checked.
 */
export function canonicalHost(pattern: HostPattern): string {
  const host = pattern.wildcard ? `*.${pattern.host}` : pattern.literal && pattern.host.includes(":") ? `[${pattern.host}]` : pattern.host;
  return pattern.port === undefined ? host : `${host}:${pattern.port}`;
}

/**
 * A version's `network_allow`, checked (docs/security.md#declaring-hosts): each entry a host,
 * `host:port`, `*.domain` or IP literal (the egress rules' syntax), none twice, at most
 * {@link MAX_DECLARED_HOSTS}, and each covered by the operator's `policy`. Returned in canonical
 * form ({@link canonicalHost}), in the order given. INVALID_ARGUMENT naming the entry and the rule
 * otherwise; `field` is how the caller wrote the list (`network_allow`, `SKILL.md metadata.network_allow`).
 */
export function validateNetworkAllow(field: string, entries: readonly string[], policy: readonly HostPattern[]): string[] {
  if (entries.length > MAX_DECLARED_HOSTS) {
    throw new InvalidArgumentError(field, `declares ${entries.length} hosts; at most ${MAX_DECLARED_HOSTS} may be declared`);
  }
  const declared: string[] = [];
  for (const [index, text] of entries.entries()) {
    const entry = `${field}[${index}] (${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)})`;
    const parsed = parseHostPattern(text);
    if (typeof parsed === "string") throw new InvalidArgumentError(entry, parsed);
    const canonical = canonicalHost(parsed);
    if (declared.includes(canonical)) throw new InvalidArgumentError(entry, `"${canonical}" is declared twice`);
    if (!coveredByPolicy(policy, parsed)) throw new InvalidArgumentError(entry, `not allowed by the operator's policy (${POLICY_SETTING})`);
    declared.push(canonical);
  }
  return declared;
}

/**
 * The first of a stored version's declarations that `policy` does not cover now (the operator
 * narrowed it after the version was registered), or undefined when it covers them all. An entry
 * that no longer parses is not covered either.
 */
export function uncoveredHost(entries: readonly string[], policy: readonly HostPattern[]): string | undefined {
  return entries.find((text) => {
    const parsed = parseHostPattern(text);
    return typeof parsed === "string" || !coveredByPolicy(policy, parsed);
  });
}

/**
 * What Python says when a name cannot be resolved or a network cannot be reached: what a run without
 * `network_allow` meets, since it has no network at all.
 */
const NO_NETWORK =
  /Temporary failure in name resolution|Name or service not known|No address associated with hostname|\[Errno -[235]\]|Network is unreachable|\[Errno 101\]/;

/**
 * A failed run's one-line cause, with what to do next when it is the sandbox's lack of a network that
 * failed it (docs/security.md#egress): a skill that declared no hosts has none, and the bare resolver
 * error invites a retry that can never help.
 */
export function withNetworkHint(errorSummary: string, networkAllow: readonly string[]): string {
  if (networkAllow.length > 0 || !NO_NETWORK.test(errorSummary) || errorSummary.includes("network_allow")) return errorSummary;
  return `${errorSummary} (the sandbox has no network: declare the hosts the skill calls in network_allow, docs/security.md#egress)`;
}
