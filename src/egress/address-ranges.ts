import { BlockList, isIP } from "node:net";

/**
 * Addresses a skill's traffic may never reach, whatever it declared (docs/security.md#egress): this
 * host, private networks, link-local and cloud-metadata addresses, carrier-grade NAT, multicast and
 * the unspecified and reserved ranges. The only way to such an address is an operator's host map
 * (SKILL_ENGINE_EGRESS_HOST_MAP), which names it on purpose.
 */
const REFUSED_V4: readonly [string, number, string][] = [
  ["0.0.0.0", 8, "this network"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local (cloud metadata)"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "6to4 relay"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

const REFUSED_V6: readonly [string, number, string][] = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["64:ff9b::", 96, "NAT64 (an IPv4 address in disguise)"],
  ["64:ff9b:1::", 48, "NAT64 (an IPv4 address in disguise)"],
  ["100::", 64, "discard"],
  ["2001:db8::", 32, "documentation"],
  ["2002::", 16, "6to4 (an IPv4 address in disguise)"],
  ["fc00::", 7, "unique local (private)"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local"],
  ["ff00::", 8, "multicast"],
];

/** Each range as a block list of its own, so the answer names the range. */
function ranges(list: readonly [string, number, string][], family: "ipv4" | "ipv6"): { name: string; block: BlockList }[] {
  return list.map(([address, prefix, name]) => {
    const block = new BlockList();
    block.addSubnet(address, prefix, family);
    return { name, block };
  });
}
const V4_RANGES = ranges(REFUSED_V4, "ipv4");
const V6_RANGES = ranges(REFUSED_V6, "ipv6");

/**
 * Why `address` may not be reached (the range's name), or undefined when it is a public address. An
 * IPv4 address written as IPv6 (`::ffff:10.0.0.1`) is judged as the IPv4 address it is.
 */
export function refusedRange(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return "not an IP address";
  if (family === 4) return V4_RANGES.find((range) => range.block.check(address, "ipv4"))?.name;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)?.[1];
  if (mapped) return V4_RANGES.find((range) => range.block.check(mapped, "ipv4"))?.name;
  if (/^::ffff:[0-9a-f]{1,4}:[0-9a-f]{1,4}$/i.test(address)) return "an IPv4-mapped address in hexadecimal";
  return V6_RANGES.find((range) => range.block.check(address, "ipv6"))?.name;
}
