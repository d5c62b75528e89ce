import escapeHtml from "escape-html";

/** Markup that is already safe to send: built by {@link markup} or marked with {@link trusted}. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Interpolation = SafeHtml | string | number | boolean | undefined | null | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === undefined || value === null || value === false) return "";
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map((v: Interpolation) => render(v)).join("");
  return escapeHtml(String(value));
}

/**
 * The console's only way to make markup: every interpolated value is escaped (escape-html) unless
 * it is itself {@link SafeHtml}; arrays are joined. Attribute values must be quoted in the template.
 */
export function markup(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? "";
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? "");
  });
  return new SafeHtml(out);
}

/** Marks markup made by code (not from data) as safe; never pass it text that came from a request or the registry. */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/**
 * JSON for a `<script type="application/json">` block: `<`, `>` and `&` escaped as \\u003c etc.,
 * so no data can close the block or open a comment.
 */
export function jsonBlock(id: string, data: unknown): SafeHtml {
  const json = JSON.stringify(data).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");
  return markup`<script type="application/json" id="${id}">
    ${trusted(json)}
  </script>`;
}
