import { markup, type SafeHtml } from "./html.js";

/**
 * A sparkline of outcomes, oldest left: one bar per invocation, tall and green for a success,
 * short and red for a failure. Drawn on the server so a page of thousands of rows needs no script.
 */
export function sparkline(outcomes: readonly boolean[], slots: number): SafeHtml {
  const bar = 4;
  const width = slots * bar;
  const successes = outcomes.filter(Boolean).length;
  const label =
    outcomes.length === 0 ? "no invocations yet" : `${successes} of the last ${outcomes.length} invocations succeeded (oldest left)`;
  const bars = outcomes.map((ok, i) =>
    ok
      ? markup`<rect x="${i * bar}" y="2" width="${bar - 1}" height="14" fill="#2e7d32"></rect>`
      : markup`<rect x="${i * bar}" y="10" width="${bar - 1}" height="6" fill="#c62828"></rect>`,
  );
  return markup`<svg class="spark" role="img" aria-label="${label}" width="${width}" height="18" viewBox="0 0 ${width} 18">
    <title>${label}</title>
    <line x1="0" y1="17" x2="${width}" y2="17" stroke="#bbb"></line>
    ${bars}
  </svg>`;
}

/**
 * The dependencies (left) and dependents (right) of a skill (centre), as boxes joined by arrows;
 * each box links to that skill's page.
 */
export function dependencyGraph(
  name: string,
  dependsOn: readonly string[],
  dependents: readonly string[],
  href: (skill: string) => string,
): SafeHtml {
  const rowHeight = 34;
  const boxWidth = 180;
  const rows = Math.max(1, dependsOn.length, dependents.length);
  const height = rows * rowHeight + 10;
  const columns = { left: 10, centre: 260, right: 510 };
  const centreY = height / 2 - 12;
  const yOf = (i: number, count: number) => height / 2 - (count * rowHeight) / 2 + i * rowHeight + 5;
  const box = (label: string, x: number, y: number, current: boolean) =>
    markup`<a href="${href(label.replace(/@\d+$/, ""))}"
      ><rect
        x="${x}"
        y="${y}"
        width="${boxWidth}"
        height="24"
        rx="4"
        fill="${current ? "#e3f2fd" : "#fafafa"}"
        stroke="${current ? "#1565c0" : "#888"}"
      ></rect
      ><text x="${x + 8}" y="${y + 16}" font-size="12">${label.length > 26 ? `${label.slice(0, 25)}…` : label}</text></a
    >`;
  const arrow = (x1: number, y1: number, x2: number, y2: number) =>
    markup`<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="#888" marker-end="url(#arrow)"></line>`;
  const parts: SafeHtml[] = [];
  dependsOn.forEach((dependency, i) => {
    const y = yOf(i, dependsOn.length);
    // The skill needs its dependency: the arrow points from the skill to what it uses.
    parts.push(arrow(columns.centre, centreY + 12, columns.left + boxWidth + 4, y + 12));
    parts.push(box(dependency, columns.left, y, false));
  });
  dependents.forEach((dependent, i) => {
    const y = yOf(i, dependents.length);
    parts.push(arrow(columns.right, y + 12, columns.centre + boxWidth + 4, centreY + 12));
    parts.push(box(dependent, columns.right, y, false));
  });
  parts.push(box(name, columns.centre, centreY, true));
  const label = `${name} depends on ${dependsOn.length === 0 ? "nothing" : dependsOn.join(", ")}; ${dependents.length === 0 ? "nothing depends on it" : `${dependents.join(", ")} depend on it`}`;
  return markup`<svg
    class="graph"
    role="img"
    aria-label="${label}"
    width="${columns.right + boxWidth + 10}"
    height="${height}"
    viewBox="0 0 ${columns.right + boxWidth + 10} ${height}"
  >
    <title>${label}</title>
    <defs>
      <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
        <path d="M 0 0 L 10 5 L 0 10 z" fill="#888"></path>
      </marker>
    </defs>
    ${parts}
  </svg>`;
}
