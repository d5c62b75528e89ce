import { isIP } from "node:net";

/**
 * One entry of a skill's `network_allow` or of the operator's policy (docs/security.md#egress): a host
 * name, a `*.domain` wildcard or an IP literal, with the ports it may be reached on (80 and 443 when
 * none is written).
 */
export interface HostPattern {
  /** Lower case, without a trailing dot; for a wildcard the domain after `*.`; an IPv6 literal without brackets. */
  readonly host: string;
  readonly wildcard: boolean;
  readonly literal: boolean;
  /** Undefined: 80 and 443 for a skill's entry, any port for an operator's. */
  readonly port: number | undefined;
  /** As written, for messages. */
  readonly text: string;
}

/** The ports a declared host without one may be reached on. */
export const DEFAULT_PORTS: readonly number[] = [443, 80];
/** Entries a skill may declare. */
export const MAX_DECLARED_HOSTS = 32;

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Parses one entry, or says what is wrong with it (a sentence a person can act on). */
export function parseHostPattern(text: string): HostPattern | string {
  const trimmed = text.trim();
  if (trimmed === "") return "is empty";
  if (trimmed.length > 260) return "is longer than 260 characters";
  if (/[/?#@\s]/.test(trimmed) || /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    return "must be a host, host:port or *.domain, not a URL";
  }
  let hostPart = trimmed;
  let port: number | undefined;
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(trimmed);
  if (bracketed) {
    hostPart = bracketed[1] as string;
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (isIP(trimmed) === 6) {
    hostPart = trimmed;
  } else {
    const colon = trimmed.lastIndexOf(":");
    if (colon >= 0) {
      const portText = trimmed.slice(colon + 1);
      if (!/^\d{1,5}$/.test(portText)) return "has a port that is not a number";
      port = Number(portText);
      hostPart = trimmed.slice(0, colon);
    }
  }
  if (port !== undefined && (port < 1 || port > 65535)) return "has a port outside 1-65535";
  const host = hostPart.toLowerCase().replace(/\.$/, "");
  if (isIP(host) !== 0) return { host, wildcard: false, literal: true, port, text: trimmed };
  const wildcard = host.startsWith("*.");
  const name = wildcard ? host.slice(2) : host;
  if (name.includes("*")) return "may use * only as the whole first label (*.example.com)";
  const labels = name.split(".");
  if (name.length > 253 || !labels.every((label) => LABEL.test(label))) return "is not a valid host name";
  if (wildcard && labels.length < 2) return "is a wildcard over a whole top-level domain; name a domain (*.example.com)";
  if (/^\d+$/.test(labels[labels.length - 1] as string)) return "looks like a partial IP address";
  return { host: name, wildcard, literal: false, port, text: trimmed };
}

/** Whether `host` (lower case, no trailing dot) is named by `pattern`'s host part. */
function namesHost(pattern: HostPattern, host: string): boolean {
  if (pattern.literal) return pattern.host === host;
  return pattern.wildcard ? host.endsWith(`.${pattern.host}`) : pattern.host === host;
}

/** The declaration in `allowed` that lets a run reach `host:port`, if any. */
export function allowingPattern(allowed: readonly HostPattern[], host: string, port: number): HostPattern | undefined {
  const name = host.toLowerCase().replace(/\.$/, "");
  return allowed.find(
    (pattern) => namesHost(pattern, name) && (pattern.port === undefined ? DEFAULT_PORTS.includes(port) : pattern.port === port),
  );
}

/**
 * Whether the operator's policy covers a skill's declaration: an exact entry for the same host, or a
 * wildcard whose domain contains it; an operator's entry without a port covers every port.
 */
export function coveredByPolicy(policy: readonly HostPattern[], declared: HostPattern): boolean {
  return policy.some((entry) => {
    if (entry.port !== undefined) {
      const ports = declared.port === undefined ? DEFAULT_PORTS : [declared.port];
      if (!ports.every((port) => port === entry.port)) return false;
    }
    if (entry.literal || declared.literal) return entry.literal && declared.literal && entry.host === declared.host;
    if (!entry.wildcard) return !declared.wildcard && entry.host === declared.host;
    return declared.host === entry.host ? declared.wildcard : declared.host.endsWith(`.${entry.host}`);
  });
}

/** Where an operator's host map sends a name (SKILL_ENGINE_EGRESS_HOST_MAP: `host=address[:port]`). */
export interface MappedAddress {
  readonly address: string;
  readonly port: number | undefined;
}

/** Parses SKILL_ENGINE_EGRESS_HOST_MAP; throws with the entry and the rule when one is malformed. */
export function parseHostMap(text: string | undefined): ReadonlyMap<string, MappedAddress> {
  const map = new Map<string, MappedAddress>();
  for (const entry of (text ?? "").split(",").map((part) => part.trim())) {
    if (entry === "") continue;
    const equals = entry.indexOf("=");
    const name = parseHostPattern(entry.slice(0, Math.max(0, equals)));
    if (equals < 0 || typeof name === "string" || name.wildcard || name.literal || name.port !== undefined) {
      throw new Error(`SKILL_ENGINE_EGRESS_HOST_MAP entry "${entry}" must be host=address or host=address:port`);
    }
    const target = entry.slice(equals + 1);
    const bracketed = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(target);
    const plain = /^([0-9.]+)(?::(\d{1,5}))?$/.exec(target);
    const address = bracketed?.[1] ?? plain?.[1] ?? (isIP(target) === 6 ? target : undefined);
    const portText = bracketed?.[2] ?? plain?.[2];
    const port = portText === undefined ? undefined : Number(portText);
    if (address === undefined || isIP(address) === 0 || (port !== undefined && (port < 1 || port > 65535))) {
      throw new Error(`SKILL_ENGINE_EGRESS_HOST_MAP entry "${entry}" must map to an IP address, optionally with a port`);
    }
    map.set(name.host, { address, port });
  }
  return map;
}
