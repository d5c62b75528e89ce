import type { ImportedModule, PythonSyntaxChecker, SyntaxVerdict } from "./python-syntax.js";

// The repairs (normalize-entities, -escapes, -newlines, -wrappers, -fences, -indentation) each
// return the texts they can make of their input, most plausible first, or none when their trigger
// (an entity, an escape, a fence...) is absent; none of them parses anything. The driver
// (normalize-code.ts) searches over them, gated by the parser.

export type RepairKind = "entities" | "escapes" | "cdata" | "tags" | "fence" | "dedent";

export interface Candidate {
  readonly kind: RepairKind;
  readonly text: string;
  readonly note: string;
  /** A refined candidate to try when this one fails to parse, guided by the parser's verdict. */
  readonly retry?: (verdict: SyntaxFailure) => Candidate | undefined;
}

export type SyntaxFailure = Extract<SyntaxVerdict, { ok: false }>;

/** Parses each distinct text once; the search and the diagnosis share the answers. */
export class ParseCache {
  private readonly verdicts = new Map<string, SyntaxVerdict>();
  parses = 0;

  constructor(private readonly checker: PythonSyntaxChecker) {}

  async check(text: string): Promise<SyntaxVerdict> {
    const cached = this.verdicts.get(text);
    if (cached) return cached;
    this.parses++;
    const verdict = await this.checker.check(text);
    this.verdicts.set(text, verdict);
    return verdict;
  }

  /** The imports the parser listed for `text`, already parsed; none when it did not parse. */
  importsOf(text: string): readonly ImportedModule[] {
    const verdict = this.verdicts.get(text);
    return verdict?.ok ? (verdict.imports ?? []) : [];
  }
}

export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

export function lineAt(text: string, line: number): string {
  return text.split("\n")[line - 1] ?? "";
}

export function countMatches(text: string, pattern: RegExp): number {
  return text.match(pattern)?.length ?? 0;
}

export function countNewlines(text: string): number {
  return countMatches(text, /\n/g);
}

export function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}
