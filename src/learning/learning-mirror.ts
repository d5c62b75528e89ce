import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import { z } from "zod";
import type { OutcomeRecord, SkillRegistry } from "../control/index.js";
import { errorMessage } from "../errors/index.js";
import { CoalescedWrites, writeFileAtomic } from "../control/index.js";
import type { CandidateRecord, EvolutionRecord, LearningStore } from "./learning-store.js";

/** Beside the registry's mirror (`.registry/`) and `lessons.json` in the canonical directory. */
export const LEARNING_MIRROR_FILE = "learning.json";
const FORMAT = 1;

const Document = z.object({
  format: z.literal(FORMAT),
  candidates: z.array(z.any()).default([]),
  evolution: z.array(z.any()).default([]),
  outcomes: z.array(z.any()).default([]),
});

/**
 * Keeps `learning.json` (candidates, evolution events, outcomes) in step with registry.db so the
 * canonical directory alone rebuilds them (docs/learning.md#storage). Writes are coalesced (one a
 * second, and one at close) and atomic, as the lessons mirror's are.
 */
export class LearningMirror {
  private readonly writes: CoalescedWrites;

  constructor(
    private readonly directory: string,
    private readonly store: LearningStore,
    private readonly registry: SkillRegistry,
    private readonly logger: Logger,
    coalesceMs = 1_000,
  ) {
    this.writes = new CoalescedWrites(
      () => this.write(),
      (error: unknown) => this.logger.error({ err: error }, `could not rewrite ${LEARNING_MIRROR_FILE}: ${errorMessage(error)}`),
      coalesceMs,
    );
  }

  /**
   * At start: a registry without candidates or outcomes (a rebuilt one) takes them from the
   * mirror; then the mirror is rewritten from the registry.
   */
  async init(): Promise<{ candidates: number; evolution: number; outcomes: number }> {
    const restored = { candidates: 0, evolution: 0, outcomes: 0 };
    let text: string | undefined;
    try {
      text = await readFile(path.join(this.directory, LEARNING_MIRROR_FILE), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    if (text !== undefined) {
      const document = Document.parse(JSON.parse(text));
      if (this.store.isEmpty()) {
        this.store.transaction("restore candidates", () => {
          for (const c of document.candidates as CandidateRecord[]) this.store.restoreCandidate(c);
          for (const e of document.evolution as EvolutionRecord[]) this.store.restoreEvolution(e);
        });
        restored.candidates = document.candidates.length;
        restored.evolution = document.evolution.length;
      }
      restored.outcomes = this.registry.restoreOutcomes(document.outcomes as OutcomeRecord[]);
    }
    await this.flush();
    return restored;
  }

  schedule(): void {
    this.writes.schedule();
  }

  async flush(): Promise<void> {
    await this.writes.flush();
  }

  async close(): Promise<void> {
    await this.writes.close();
  }

  private async write(): Promise<void> {
    const document = {
      format: FORMAT,
      candidates: this.store.candidates(undefined, undefined),
      evolution: this.store.evolution(undefined),
      outcomes: this.registry.outcomes(),
    };
    await writeFileAtomic(path.join(this.directory, LEARNING_MIRROR_FILE), `${JSON.stringify(document, null, 2)}\n`);
  }
}
