import { randomBytes, timingSafeEqual } from "node:crypto";

/** One signed-in browser: the bearer token it presented (re-checked on every request) and its CSRF token. */
export interface ConsoleSession {
  readonly id: string;
  /** The bearer token given at login; undefined for the local agent (no tokens configured). */
  readonly token: string | undefined;
  /** The synchronizer token every form of this session carries (docs/console.md#csrf). */
  readonly csrf: string;
  lastSeen: number;
}

/** The session cookie's name; the cookie holds only a random session id, never the bearer token. */
export const SESSION_COOKIE = "se_console";

/**
 * Server-side sessions, in memory: a restart signs everyone out, which is the safe default. Idle
 * sessions expire; past `maxSessions` the least recently seen is dropped.
 */
export class SessionStore {
  private readonly sessions = new Map<string, ConsoleSession>();

  constructor(
    private readonly idleMs: number,
    private readonly maxSessions: number,
    private readonly now: () => number = Date.now,
  ) {}

  create(token: string | undefined): ConsoleSession {
    this.expire();
    while (this.sessions.size >= this.maxSessions) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.sessions.delete(oldest);
    }
    const session: ConsoleSession = { id: randomToken(), token, csrf: randomToken(), lastSeen: this.now() };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session a cookie names, touched (moved to the back of the eviction order). */
  get(id: string | undefined): ConsoleSession | undefined {
    if (id === undefined) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    if (this.now() - session.lastSeen > this.idleMs) {
      this.sessions.delete(id);
      return undefined;
    }
    session.lastSeen = this.now();
    this.sessions.delete(id);
    this.sessions.set(id, session);
    return session;
  }

  delete(id: string): void {
    this.sessions.delete(id);
  }

  private expire(): void {
    const cutoff = this.now() - this.idleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen >= cutoff) break; // insertion order is last-seen order
      this.sessions.delete(id);
    }
  }
}

/** 256 random bits, URL-safe. */
export function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Constant-time comparison of a submitted token with the expected one. */
export function tokensMatch(expected: string, submitted: string | undefined): boolean {
  if (submitted === undefined) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The cookies of a request, by name (the first of each). */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (name !== "" && !cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}
