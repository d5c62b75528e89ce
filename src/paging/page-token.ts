import { createHash } from "node:crypto";
import { InvalidArgumentError } from "../errors/index.js";

/**
 * Page sizes every list RPC shares (docs/api.md#pagination). The default is the maximum so that a
 * client that sends no page size gets what it got before pages existed, up to this many items.
 */
export const PAGE_SIZE = {
  /** page_size 0 or unset. @default 1000 */
  default: 1_000,
  /** A larger page_size is clamped to this, which keeps a page of the largest messages (skills with
   * their schemas, catalog entries) well inside gRPC's 4 MiB message limit. @default 1000 */
  max: 1_000,
} as const;

/** Longer page_token texts are refused before they are decoded; a real one is under 200 characters a key. */
export const MAX_PAGE_TOKEN_CHARS = 2_048;

/** The format of a token's payload unless its listing names another; a token of another version is refused. */
const TOKEN_VERSION = 1;

/** The position of the last item a page showed, in the listing's order: its unique sort key. */
export type PageKey = readonly (string | number)[];

/** What a page request says, as the wire gives it (proto3 `optional`: unset is undefined). */
export interface PageRequest {
  /** Items per page: unset or 0 the listing's default, above {@link PAGE_SIZE.max} clamped; negative is refused. */
  readonly pageSize?: number | undefined;
  /** A previous answer's next_page_token; unset or empty: the first page. */
  readonly pageToken?: string | undefined;
}

/** One page of a listing. */
export interface Page<T> {
  readonly items: T[];
  /** Pass as page_token for the next page; empty when this is the last one. */
  readonly nextPageToken: string;
}

/** A listing that pages: its name (the RPC's) and the shapes of its keyset cursor. */
export interface Listing {
  /** The RPC's name; a token of one listing is refused by another. */
  readonly name: string;
  /** The cursor's possible shapes, one letter a component ("s" string, "n" number), e.g. ["s"] or ["ss", "sss"]. */
  readonly keyShapes: readonly string[];
  /** page_size 0 or unset. @default PAGE_SIZE.default */
  readonly defaultSize?: number;
  /**
   * The format of this listing's tokens: bumped when what its tokens carry changes, so that a token
   * issued before is refused with "another version" instead of being misread. @default 1
   */
  readonly version?: number;
  /**
   * For a listing ordered by values computed when read that move with the clock (a lesson's utility
   * decays with time): the walk's instant is read from this clock on the first page and carried by
   * every token of the walk ({@link PageWindow.asOf}), so each page orders at the same instant and
   * the clock alone moves no item across the cursor. Unset: tokens carry no instant.
   */
  readonly clock?: () => number;
}

/**
 * The filters a page request was made with: a token remembers a digest of them, and a token reused
 * with other filters is refused, since its cursor means nothing in another listing.
 */
export type PageFilters = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * Where a page starts and how long it is, decoded from a request. Listings fetch
 * {@link PageWindow.fetch} rows after {@link PageWindow.after} in their order and hand them to
 * {@link PageWindow.page}: the one extra row tells whether another page follows without a last,
 * empty page.
 */
export class PageWindow<K extends PageKey = PageKey> {
  constructor(
    private readonly listing: Listing,
    private readonly digest: string,
    /** Items on this page. */
    readonly size: number,
    /** The key of the previous page's last item; undefined on the first page. */
    readonly after: K | undefined,
    /**
     * For a listing with a {@link Listing.clock}: the instant its order is computed at, the same on
     * every page of a walk (read from the clock on the first page, from the token after it);
     * undefined for other listings.
     */
    readonly asOf: number | undefined,
  ) {}

  /** Rows to read: one more than the page, to know whether another page follows. */
  get fetch(): number {
    return this.size + 1;
  }

  /** The page of `rows` (at most {@link fetch}, in the listing's order, all after the cursor) with the next page's token. */
  page<T>(rows: readonly T[], keyOf: (row: T) => K): Page<T> {
    const items = rows.slice(0, this.size);
    const last = items.at(-1);
    if (rows.length <= this.size || last === undefined) return { items, nextPageToken: "" };
    const payload: TokenPayload = { v: versionOf(this.listing), l: this.listing.name, f: this.digest, k: [...keyOf(last)] };
    return { items, nextPageToken: encodeToken(this.asOf === undefined ? payload : { ...payload, t: this.asOf }) };
  }

  /**
   * The page of a list the listing holds in memory, already in its order: the items after the
   * cursor (`comesAfter(key, cursor)`), up to the page size. For lists that are small by rule
   * (an agent's secrets, the environments) or computed in memory (a lesson's utility).
   */
  slice<T>(sorted: readonly T[], keyOf: (row: T) => K, comesAfter: (key: K, cursor: K) => boolean = ascending): Page<T> {
    const { after } = this;
    const start = after === undefined ? 0 : sorted.findIndex((row) => comesAfter(keyOf(row), after));
    return this.page(start < 0 ? [] : sorted.slice(start, start + this.fetch), keyOf);
  }
}

/**
 * Decodes a page request for `listing` made with `filters`: the page size after the default and
 * the maximum, and the cursor of a page token. INVALID_ARGUMENT (an {@link InvalidArgumentError}
 * naming page_size or page_token) for a negative size, a token this service did not issue for this
 * listing, or one issued for other filters.
 */
export function openPage<K extends PageKey = PageKey>(listing: Listing, filters: PageFilters, request: PageRequest): PageWindow<K> {
  const size = pageSizeOf(listing, request.pageSize);
  const digest = filterDigest(listing.name, filters);
  const token = request.pageToken ?? "";
  if (token === "") return new PageWindow<K>(listing, digest, size, undefined, listing.clock?.());
  const payload = decodeToken(listing, token);
  if (payload.f !== digest) {
    throw new InvalidArgumentError(
      "page_token",
      `was issued for ${listing.name} with other filters (${filterNames(filters)}): send the same filters as the request ` +
        "that returned it, or leave page_token empty to start from the first page",
    );
  }
  return new PageWindow<K>(listing, digest, size, payload.k as unknown as K, payload.t);
}

/** Ascending tuple order, component by component: the order of `ORDER BY a, b, …` over these keys. */
export function ascending(key: PageKey, cursor: PageKey): boolean {
  for (let i = 0; i < Math.max(key.length, cursor.length); i++) {
    const a = key[i];
    const b = cursor[i];
    if (a === b) continue;
    if (a === undefined) return false;
    if (b === undefined) return true;
    return a > b;
  }
  return false;
}

/** A sort comparator over keys in {@link ascending} order, for lists sorted in memory before {@link PageWindow.slice}. */
export function compareKeys(a: PageKey, b: PageKey): number {
  return ascending(a, b) ? 1 : ascending(b, a) ? -1 : 0;
}

function pageSizeOf(listing: Listing, requested: number | undefined): number {
  const fallback = listing.defaultSize ?? PAGE_SIZE.default;
  if (requested === undefined || requested === 0) return fallback;
  if (!Number.isInteger(requested) || requested < 0) {
    throw new InvalidArgumentError("page_size", `must be ≥ 0 (0 or unset: ${fallback}; at most ${PAGE_SIZE.max}, larger is clamped)`);
  }
  return Math.min(requested, PAGE_SIZE.max);
}

interface TokenPayload {
  /** {@link TOKEN_VERSION}. */
  readonly v: number;
  /** The listing's name. */
  readonly l: string;
  /** {@link filterDigest} of the request that was answered. */
  readonly f: string;
  /** The cursor: the key of the last item shown. */
  readonly k: Array<string | number>;
  /** {@link PageWindow.asOf}: present exactly when the listing has a {@link Listing.clock}. */
  readonly t?: number;
}

function versionOf(listing: Listing): number {
  return listing.version ?? TOKEN_VERSION;
}

function encodeToken(payload: TokenPayload): string {
  return Buffer.from(JSON.stringify(payload), "utf8").toString("base64url");
}

function decodeToken(listing: Listing, token: string): TokenPayload {
  const refuse = (why: string): InvalidArgumentError =>
    new InvalidArgumentError(
      "page_token",
      `is not a page token of ${listing.name} (${why}): pass the next_page_token of a ${listing.name} answer unchanged, ` +
        "or leave page_token empty to start from the first page",
    );
  if (token.length > MAX_PAGE_TOKEN_CHARS) throw refuse(`longer than ${MAX_PAGE_TOKEN_CHARS} characters`);
  if (!/^[A-Za-z0-9_-]+$/.test(token)) throw refuse("not base64url");
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw refuse("malformed");
  }
  if (typeof parsed !== "object" || parsed === null) throw refuse("malformed");
  const { v, l, f, k, t } = parsed as Record<string, unknown>;
  // The listing first: listings version their tokens apart, so another listing's token may carry another version.
  if (l !== listing.name) throw refuse(typeof l === "string" ? `issued by ${l}` : "malformed");
  if (v !== versionOf(listing)) throw refuse("issued by another version of the service");
  if (typeof f !== "string" || !Array.isArray(k)) throw refuse("malformed");
  const shape = (k as unknown[]).map((part) => (typeof part === "string" ? "s" : Number.isFinite(part) ? "n" : "?")).join("");
  if (!listing.keyShapes.includes(shape)) throw refuse("malformed");
  const cursor = k as Array<string | number>;
  if (listing.clock === undefined) {
    if (t !== undefined) throw refuse("malformed");
    return { v, l, f, k: cursor };
  }
  // An instant is epoch milliseconds; a forged one carries no authority (every page is filtered when read), it only reorders.
  if (typeof t !== "number" || !Number.isFinite(t) || t < 0) throw refuse("malformed");
  return { v, l, f, k: cursor, t };
}

/** A short digest of the listing and its filters; key order does not matter, unset equals absent. */
function filterDigest(listing: string, filters: PageFilters): string {
  const entries = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash("sha256")
    .update(JSON.stringify([listing, entries]))
    .digest("base64url")
    .slice(0, 16);
}

function filterNames(filters: PageFilters): string {
  const names = Object.keys(filters).map((name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
  return names.length === 0 ? "none" : names.join(", ");
}
