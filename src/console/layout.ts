import type { Caller } from "../identity/index.js";
import { markup, type SafeHtml } from "./html.js";

/** What every page knows about who is looking. */
export interface Viewer {
  readonly caller: Caller;
  /** The session's synchronizer token, put in every form. */
  readonly csrf: string;
  /** No tokens configured: the local agent, no login and no logout. */
  readonly local: boolean;
}

export type Section = "library" | "catalog" | "sources" | "candidates" | "playbook" | "none";

const NAV: ReadonlyArray<{ section: Section; href: string; label: string }> = [
  { section: "library", href: "/console/library", label: "Library" },
  { section: "catalog", href: "/console/catalog", label: "Catalog" },
  { section: "sources", href: "/console/sources", label: "Sources" },
  { section: "candidates", href: "/console/candidates", label: "Candidates" },
  { section: "playbook", href: "/console/playbook", label: "Playbook" },
];

/** The hidden field every state-changing form carries (docs/console.md#csrf). */
export function csrfField(viewer: Viewer): SafeHtml {
  return markup`<input type="hidden" name="csrf" value="${viewer.csrf}" />`;
}

/**
 * A whole page: head (own script and style only: the CSP allows nothing else), navigation, body.
 * The navigation is shown to a viewer, and on every page with `navigation` (the error pages).
 */
export function page(
  title: string,
  section: Section,
  viewer: Viewer | undefined,
  body: SafeHtml,
  options: { charts?: boolean; navigation?: boolean } = {},
): string {
  // Error pages show the way on even without a session: each link leads to sign-in when one is needed.
  const nav =
    viewer || options.navigation
      ? NAV.map((item) => markup`<a href="${item.href}" class="${item.section === section ? "current" : ""}">${item.label}</a>`)
      : [];
  const who = viewer
    ? markup`<span class="who"
        >${viewer.caller.agentId}${viewer.caller.admin ? " (admin)" : ""}${
          viewer.local
            ? " · local agent, no tokens configured"
            : markup` ·
                <form class="inline" method="post" action="/console/logout">
                  ${csrfField(viewer)}<button type="submit">Sign out</button>
                </form>`
        }</span
      >`
    : "";
  return markup`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · skill engine</title>
        <link rel="stylesheet" href="/console/static/console.css" />
        ${options.charts ? markup`<link rel="stylesheet" href="/console/static/uplot.css" />` : ""}
      </head>
      <body>
        <header><strong>skill engine</strong>${nav}${who}</header>
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
        ${options.charts ? markup`<script src="/console/static/uplot.js"></script>` : ""}
        <script src="/console/static/console.js"></script>
      </body>
    </html>`.text;
}

/** A point in time the browser shows in the viewer's time zone (UTC until the script runs). */
export function time(at: Date | number | undefined): SafeHtml {
  if (at === undefined) return markup`<span class="empty">never</span>`;
  const date = typeof at === "number" ? new Date(at) : at;
  return markup`<time datetime="${date.toISOString()}">${date.toISOString().replace("T", " ").slice(0, 19)} UTC</time>`;
}

export function percent(rate: number | undefined): string {
  return rate === undefined ? "–" : `${Math.round(rate * 100)}%`;
}
