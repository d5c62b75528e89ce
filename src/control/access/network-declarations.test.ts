import { describe, expect, it } from "vitest";
import { type HostPattern, MAX_DECLARED_HOSTS, parseHostPattern } from "../../egress/index.js";
import { InvalidArgumentError } from "../../errors/index.js";
import { canonicalHost, uncoveredHost, validateNetworkAllow, withNetworkHint } from "./network-declarations.js";

const policy = (...entries: string[]): HostPattern[] => entries.map((entry) => parseHostPattern(entry) as HostPattern);

describe("validateNetworkAllow (docs/security.md#declaring-hosts)", () => {
  const wide = policy("api.example.com", "*.svc.example.org", "10.1.2.3", "[2001:db8::1]", "mail.example.net:587");

  it("keeps covered entries in the order given, in canonical form", () => {
    expect(
      validateNetworkAllow(
        "network_allow",
        ["API.Example.com.", "*.svc.example.org:8443", "a.b.svc.example.org", "10.1.2.3:80", "2001:db8::1", "mail.example.net:587"],
        wide,
      ),
    ).toEqual(["api.example.com", "*.svc.example.org:8443", "a.b.svc.example.org", "10.1.2.3:80", "[2001:db8::1]", "mail.example.net:587"]);
    expect(validateNetworkAllow("network_allow", [], [])).toEqual([]);
  });

  it.each([
    [
      ["https://api.example.com/v1"],
      /^network_allow\[0\] \("https:\/\/api\.example\.com\/v1"\): must be a host, host:port or \*\.domain, not a URL$/,
    ],
    [["api.example.com", ""], /^network_allow\[1\] \(""\): is empty$/],
    [["api.example.com:99999"], /^network_allow\[0\] \("api\.example\.com:99999"\): has a port outside 1-65535$/],
    [["*.com"], /^network_allow\[0\] \("\*\.com"\): is a wildcard over a whole top-level domain/],
    [["api.example.com", "API.example.com"], /^network_allow\[1\] \("API\.example\.com"\): "api\.example\.com" is declared twice$/],
    [
      ["api.example.com", "other.example.com"],
      /^network_allow\[1\] \("other\.example\.com"\): not allowed by the operator's policy \(SKILL_ENGINE_EGRESS_ALLOWED_HOSTS\)$/,
    ],
    // An operator's entry with a port covers only that port; a wildcard, only names under it.
    [["mail.example.net"], /^network_allow\[0\] .*not allowed by the operator's policy/],
    [["svc.example.org"], /^network_allow\[0\] .*not allowed by the operator's policy/],
    [["10.1.2.4"], /^network_allow\[0\] .*not allowed by the operator's policy/],
  ])("refuses %j naming the entry and the rule", (entries, message) => {
    expect(() => validateNetworkAllow("network_allow", entries, wide)).toThrow(InvalidArgumentError);
    expect(() => validateNetworkAllow("network_allow", entries, wide)).toThrow(message);
  });

  it("refuses every declaration under the default policy (none), and more than MAX_DECLARED_HOSTS entries", () => {
    expect(() => validateNetworkAllow("SKILL.md metadata.network_allow", ["api.example.com"], [])).toThrow(
      /^SKILL\.md metadata\.network_allow\[0\] \("api\.example\.com"\): not allowed by the operator's policy/,
    );
    const many = Array.from({ length: MAX_DECLARED_HOSTS + 1 }, (_, i) => `h${i}.example.com`);
    expect(() => validateNetworkAllow("network_allow", many, policy("*.example.com"))).toThrow(
      `network_allow: declares ${MAX_DECLARED_HOSTS + 1} hosts; at most ${MAX_DECLARED_HOSTS} may be declared`,
    );
    expect(validateNetworkAllow("network_allow", many.slice(1), policy("*.example.com"))).toHaveLength(MAX_DECLARED_HOSTS);
  });

  it("writes a canonical form that parses back to the same pattern", () => {
    for (const text of ["*.Example.com:8443", "[::1]:443", "::1", "192.0.2.7", "host.example.com."]) {
      const parsed = parseHostPattern(text) as HostPattern;
      const again = parseHostPattern(canonicalHost(parsed)) as HostPattern;
      expect([again.host, again.wildcard, again.literal, again.port]).toEqual([parsed.host, parsed.wildcard, parsed.literal, parsed.port]);
    }
  });
});

describe("uncoveredHost: a stored declaration against the policy as it is now", () => {
  it("names the first entry a narrowed policy no longer covers", () => {
    const stored = ["api.example.com", "files.example.com:8443"];
    expect(uncoveredHost(stored, policy("*.example.com"))).toBeUndefined();
    expect(uncoveredHost(stored, policy("api.example.com", "files.example.com:8443"))).toBeUndefined();
    expect(uncoveredHost(stored, policy("api.example.com"))).toBe("files.example.com:8443");
    expect(uncoveredHost(stored, [])).toBe("api.example.com");
    expect(uncoveredHost([], [])).toBeUndefined();
  });
});

describe("the no-network hint", () => {
  const resolver = "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>";

  it("tells a skill without network_allow that the sandbox has no network, and how to declare hosts", () => {
    expect(withNetworkHint(resolver, [])).toBe(
      `${resolver} (the sandbox has no network: declare the hosts the skill calls in network_allow, docs/security.md#egress)`,
    );
    expect(withNetworkHint("OSError: [Errno 101] Network is unreachable", [])).toMatch(/declare the hosts/);
  });

  it("leaves other causes, and skills that declared hosts, as they are", () => {
    expect(withNetworkHint(resolver, ["api.example.com"])).toBe(resolver);
    expect(withNetworkHint("KeyError: 'items'", [])).toBe("KeyError: 'items'");
  });
});
