import { UsageError } from "./args.js";
import type { CommandContext } from "./commands.js";

/** What each request of a listing adds: the page size (0: the service's default) and the token of the page. */
export interface PageParams {
  readonly pageSize: number;
  readonly pageToken: string;
}

/**
 * Every page of a list RPC (docs/api.md#pagination): asks for each next page until the last and
 * answers the first page's message with `key` holding every page's items, so a command prints the
 * whole list as it did before pages. `--page-size` sets the size of each request.
 */
export async function everyPage<K extends string, Res extends { readonly nextPageToken: string } & Record<K, readonly unknown[]>>(
  ctx: CommandContext,
  key: K,
  fetch: (page: PageParams) => Promise<Res>,
): Promise<Omit<Res, "nextPageToken">> {
  const pageSize = pageSizeOf(ctx);
  const first = await fetch({ pageSize, pageToken: "" });
  const items: unknown[] = [...first[key]];
  for (let token = first.nextPageToken, seen = new Set<string>(); token !== "";) {
    // A token the service already gave would loop forever: a broken service, not a long list.
    if (seen.has(token)) throw new Error(`the service answered the same next_page_token twice while listing ${key}`);
    seen.add(token);
    const page = await fetch({ pageSize, pageToken: token });
    items.push(...page[key]);
    token = page.nextPageToken;
  }
  const { nextPageToken: _last, ...rest } = { ...first, [key]: items };
  return rest as Omit<Res, "nextPageToken">;
}

/** `--page-size N` (a whole number ≥ 1), else 0: the service's default. */
function pageSizeOf(ctx: CommandContext): number {
  const text = ctx.options["page-size"];
  if (text === undefined) return 0;
  const size = typeof text === "string" && /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(size) || size < 1) throw new UsageError("--page-size must be a whole number ≥ 1", ctx.command);
  return size;
}
