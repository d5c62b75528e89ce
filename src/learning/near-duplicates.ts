/**
 * Near-duplicates at the door (docs/learning.md#near-duplicates): a new skill is compared with the
 * skills the caller can see whose routing vectors are nearest its description's, by description
 * (cosine of routing's embeddings) and by code (Jaccard of normalised token 4-gram shingles). A
 * pair is a near-duplicate when both similarities reach their thresholds (chosen by
 * cross-validation: `npm run bench:duplicates`, which also measures that the nearest
 * {@link DUPLICATE_CANDIDATES} hold every near-duplicate).
 */
import type { NeighboursOf, SimilarSkillReport, SkillText } from "../control/index.js";
import type { Embedder } from "../routing/index.js";

/** Thresholds of the near-duplicate rule. */
export interface DuplicateThresholds {
  /** Description cosine similarity at or above which a pair may be a near-duplicate. @default 0.5875 */
  readonly description: number;
  /** Code shingle similarity at or above which a pair may be a near-duplicate. @default 0 (code similarity is reported, not required: docs/learning.md#measuring-it) */
  readonly code: number;
}

export const DEFAULT_DUPLICATE_THRESHOLDS: DuplicateThresholds = { description: 0.5875, code: 0 };

/**
 * How many of the nearest skills a new one is compared with. A near-duplicate needs a description
 * cosine of at least {@link DEFAULT_DUPLICATE_THRESHOLDS}.description, so it is among the nearest
 * vectors unless more than this many skills are closer still (docs/learning.md#near-duplicates).
 */
export const DUPLICATE_CANDIDATES = 50;

/** Similar skills reported beside near-duplicates: description at least this similar. */
const REPORT_DESCRIPTION_FLOOR = 0.6;
const REPORTED = 5;
const SHINGLE = 4;

const PYTHON_KEYWORDS = new Set(
  (
    "False None True and as assert async await break class continue def del elif else except finally for from global if " +
    "import in is lambda nonlocal not or pass raise return try while with yield"
  ).split(" "),
);
const TOKEN = /[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|==|!=|<=|>=|\*\*|\/\/|[^\s\w]/g;

/**
 * Code tokens with the names a rewrite changes freely taken out: keywords, operators, called names
 * (`len(`, `sorted(`) and attributes (`.lower`, `json.loads`) stay, since they carry what the code
 * does; other identifiers become `ID`, string literals `STR`, numbers `NUM`; comments are dropped.
 */
export function normalisedTokens(code: string): string[] {
  const withoutComments = code.replace(/#[^\n]*/g, "");
  const raw = withoutComments.match(TOKEN) ?? [];
  return raw.map((token, index) => {
    if (/^["']/.test(token)) return "STR";
    if (/^\d/.test(token)) return "NUM";
    if (!/^[A-Za-z_]/.test(token) || PYTHON_KEYWORDS.has(token)) return token;
    const previous = raw[index - 1];
    const next = raw[index + 1];
    if (previous === "." || next === "(" || next === ".") return token;
    return "ID";
  });
}

function rawShingles(code: string): Set<string> {
  const tokens = normalisedTokens(code);
  const shingles = new Set<string>();
  if (tokens.length < SHINGLE) {
    if (tokens.length > 0) shingles.add(tokens.join(" "));
    return shingles;
  }
  for (let i = 0; i + SHINGLE <= tokens.length; i++) shingles.add(tokens.slice(i, i + SHINGLE).join(" "));
  return shingles;
}

/**
 * The scaffolding every skill shares (read the JSON payload from argv, print JSON) says nothing
 * about what a skill does: its shingles are left out of the comparison.
 */
const SCAFFOLD = rawShingles(
  "import json, sys\nimport sys, json\nargs = json.loads(sys.argv[1])\nprint(json.dumps(result))\nprint(json.dumps({'result': result}))\n",
);

/** Normalised token 4-grams of a code, without the shared scaffolding. */
export function codeShingles(code: string): Set<string> {
  const shingles = rawShingles(code);
  for (const shingle of SCAFFOLD) shingles.delete(shingle);
  return shingles;
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let shared = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const item of small) if (large.has(item)) shared++;
  return shared / (a.size + b.size - shared);
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot; // unit vectors (Embedder's contract)
}

export function isNearDuplicate(description: number, code: number, thresholds: DuplicateThresholds): boolean {
  return description >= thresholds.description && code >= thresholds.code;
}

/**
 * Compares a new skill with others. Shingles are kept per code text and embeddings per
 * description (the embedder's own cache is on disk), so a registration costs one embedding, a
 * pass over the other skills' descriptions, and reading the code of the few that come close.
 */
export class NearDuplicateDetector {
  private readonly shingles = new Map<string, Set<string>>();
  private readonly vectors = new Map<string, Float32Array>();
  /** Embeddings being computed, by text, so that a text asked for twice is embedded once. */
  private readonly embedding = new Map<string, Promise<void>>();

  constructor(
    private readonly embedder: Embedder,
    readonly thresholds: DuplicateThresholds = DEFAULT_DUPLICATE_THRESHOLDS,
  ) {}

  /**
   * Similar skills, most similar first: every near-duplicate among the skill's
   * {@link DUPLICATE_CANDIDATES} neighbours, and up to five others above the report floor. Both
   * need a description at least as similar as the lower of the two floors, so only those skills'
   * code is read (`codeOf`) and compared.
   */
  async compare(skill: SkillText, neighbours: NeighboursOf, codeOf: (name: string) => Promise<string>): Promise<SimilarSkillReport[]> {
    await this.embedMissing([skill.description]);
    const mine = this.vectors.get(skill.description) as Float32Array;
    const others = (await neighbours(mine, DUPLICATE_CANDIDATES)).filter((other) => other.name !== skill.name);
    if (others.length === 0) return [];
    await this.embedMissing(others.map((o) => o.description));
    const floor = Math.min(this.thresholds.description, REPORT_DESCRIPTION_FLOOR);
    const close = others
      .map((other) => ({
        name: other.name,
        descriptionSimilarity: round(cosine(mine, this.vectors.get(other.description) as Float32Array)),
      }))
      .filter((other) => other.descriptionSimilarity >= floor);
    const myShingles = this.shinglesOf(skill.code);
    const all = await Promise.all(
      close.map(async ({ name, descriptionSimilarity }) => {
        const codeSimilarity = round(jaccard(myShingles, this.shinglesOf(await codeOf(name))));
        return {
          name,
          descriptionSimilarity,
          codeSimilarity,
          nearDuplicate: isNearDuplicate(descriptionSimilarity, codeSimilarity, this.thresholds),
        };
      }),
    );
    all.sort((a, b) => Number(b.nearDuplicate) - Number(a.nearDuplicate) || b.descriptionSimilarity - a.descriptionSimilarity);
    return all.filter((s, index) => s.nearDuplicate || (index < REPORTED && s.descriptionSimilarity >= REPORT_DESCRIPTION_FLOOR));
  }

  private shinglesOf(code: string): Set<string> {
    let found = this.shingles.get(code);
    if (!found) {
      found = codeShingles(code);
      if (this.shingles.size > 50_000) this.shingles.clear();
      this.shingles.set(code, found);
    }
    return found;
  }

  /** Starts embedding `description` ahead of a {@link compare} (a registration's first step); never throws. */
  anticipate(description: string): void {
    this.embedMissing([description]).catch(() => undefined);
  }

  private async embedMissing(texts: readonly string[]): Promise<void> {
    const unique = [...new Set(texts.filter((t) => !this.vectors.has(t)))];
    const inFlight = unique.filter((t) => this.embedding.has(t));
    const missing = unique.filter((t) => !this.embedding.has(t));
    if (missing.length > 0) {
      const embedded = this.embedder.embed(missing).then((vectors) => {
        if (this.vectors.size > 50_000) this.vectors.clear();
        missing.forEach((text, i) => this.vectors.set(text, vectors[i] as Float32Array));
      });
      const settled = embedded.finally(() => {
        for (const text of missing) if (this.embedding.get(text) === settled) this.embedding.delete(text);
      });
      settled.catch(() => undefined); // observed by every caller waiting for it
      for (const text of missing) this.embedding.set(text, settled);
    }
    await Promise.all([...new Set([...inFlight, ...missing].map((t) => this.embedding.get(t)))]);
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
