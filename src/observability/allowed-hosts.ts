import { isIP } from "node:net";

/**
 * The host names the HTTP port (metrics, probes, console) answers to, against DNS rebinding
 * (docs/security.md#dns-rebinding): a page of `attacker.example` whose name the attacker points at
 * this machine is same-origin with the port by the browser's rules, but its requests still say
 * `Host: attacker.example`. `localhost` and IP addresses are always accepted (a browser only sends
 * an IP in `Host` when the page itself was loaded from that address, so no other site can use
 * one); any other name must be configured. The port in a header is not looked at: the name is what
 * an attacker controls.
 */
export class HostAllowList {
  private readonly names: ReadonlySet<string>;

  /** `names`: host names without a port (SKILL_ENGINE_HTTP_ALLOWED_HOSTS), compared case-insensitively. */
  constructor(names: readonly string[] = []) {
    this.names = new Set(["localhost", ...names.map(normalName)]);
  }

  /** True for a `Host` header naming an accepted host, with or without a port; false when it is missing. */
  allowsHost(header: string | undefined): boolean {
    // The characters of a name (underscores: compose service names), an IPv4 address or a bracketed IPv6 address and a port: nothing a URL
    // parser would read as user info or a path.
    if (header === undefined || !/^[\w.:[\]-]{1,300}$/.test(header)) return false;
    return this.allowsAuthority(`http://${header}`);
  }

  /** True for an `Origin` header (`http://` or `https://`, an accepted host, any port). */
  allowsOrigin(origin: string): boolean {
    if (!/^https?:\/\/[\w.:[\]-]{1,300}$/.test(origin)) return false;
    return this.allowsAuthority(origin);
  }

  /** What is accepted, for the message a refused request gets: the rule, not the configured names, which a stranger need not learn. */
  describe(): string {
    return "localhost, IP addresses and the names in SKILL_ENGINE_HTTP_ALLOWED_HOSTS";
  }

  private allowsAuthority(text: string): boolean {
    let hostname: string;
    try {
      // The WHATWG parser, as the browser's: lower case, IPv4 forms made canonical, IPv6 bracketed.
      hostname = new URL(text).hostname;
    } catch {
      return false;
    }
    if (hostname.startsWith("[") && hostname.endsWith("]")) return isIP(hostname.slice(1, -1)) === 6;
    if (isIP(hostname) === 4) return true;
    return this.names.has(normalName(hostname));
  }
}

/** Lower case, without the trailing dot of a fully qualified name (`localhost.` is `localhost`). */
function normalName(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}
