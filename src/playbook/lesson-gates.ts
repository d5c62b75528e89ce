import { createHash } from "node:crypto";
import { InvalidArgumentError } from "../errors/index.js";
import { sharedNgram } from "./generalization-guard.js";
import type { LessonVisibility, PlaybookPolicy } from "./lesson.js";

/** The gates a new lesson passes, by the name a rejection gives (docs/playbook.md#gates). */
export type LessonGate = "generalization guard" | "required field" | "domain taxonomy" | "confidence range" | "size limit";

/** A lesson refused by one of the gates; INVALID_ARGUMENT, with the gate named first. */
export class LessonGateError extends InvalidArgumentError {
  constructor(
    readonly gate: LessonGate,
    field: string,
    reason: string,
  ) {
    super(field, reason);
    this.message = `${gate}: ${field} ${reason}`;
  }
}

/** What AddLesson asks for, as it came off the wire. */
export interface LessonDraft {
  readonly trigger: string;
  readonly antiPattern: string;
  readonly correctPattern: string;
  readonly domains: readonly string[];
  readonly confidence: number;
  readonly source: string;
  readonly sourceChallengeHash: string;
  /** The challenge's setup and validator text; compared against, hashed, never stored. */
  readonly challengeText: string;
  readonly visibility: LessonVisibility;
}

/** A draft that passed every gate, trimmed and normalized, with the challenge text reduced to its hash. */
export interface AcceptedLesson {
  readonly trigger: string;
  readonly antiPattern: string;
  readonly correctPattern: string;
  readonly domains: string[];
  readonly confidence: number;
  readonly source: string;
  readonly sourceChallengeHash: string;
  readonly challengeTextHash: string;
  readonly visibility: LessonVisibility;
}

/** Size limits: a lesson is a few sentences injected into prompts, not a document. */
export const LESSON_LIMITS = {
  triggerChars: 500,
  patternChars: 2_000,
  sourceChars: 128,
  challengeHashChars: 128,
  challengeTextChars: 1_000_000,
  domains: 8,
} as const;

/**
 * Runs the gates in a fixed order (sizes, required fields, confidence, taxonomy, then the
 * generalization guard) and returns the accepted lesson, or throws {@link LessonGateError}
 * naming the first gate that refused it.
 */
export function acceptLesson(draft: LessonDraft, policy: PlaybookPolicy): AcceptedLesson {
  const trigger = draft.trigger.trim();
  const antiPattern = draft.antiPattern.trim();
  const correctPattern = draft.correctPattern.trim();
  const source = draft.source.trim();
  const sourceChallengeHash = draft.sourceChallengeHash.trim();
  tooLong("trigger", trigger, LESSON_LIMITS.triggerChars);
  tooLong("anti_pattern", antiPattern, LESSON_LIMITS.patternChars);
  tooLong("correct_pattern", correctPattern, LESSON_LIMITS.patternChars);
  tooLong("source", source, LESSON_LIMITS.sourceChars);
  tooLong("source_challenge_hash", sourceChallengeHash, LESSON_LIMITS.challengeHashChars);
  tooLong("challenge_text", draft.challengeText, LESSON_LIMITS.challengeTextChars);
  if (trigger === "") {
    throw new LessonGateError("required field", "trigger", "is empty: say which kind of task the lesson applies to");
  }
  if (correctPattern === "") {
    throw new LessonGateError("required field", "correct_pattern", "is empty: say what to do instead");
  }
  if (!(draft.confidence >= 0 && draft.confidence <= 1)) {
    throw new LessonGateError("confidence range", "confidence", `must be in [0, 1], got ${draft.confidence}`);
  }
  const domains = [...new Set(draft.domains.map((d) => d.trim().toLowerCase()).filter((d) => d !== ""))];
  if (domains.length === 0) {
    throw new LessonGateError("domain taxonomy", "domains", `is empty: name at least one of ${policy.domains.join(", ")}`);
  }
  if (domains.length > LESSON_LIMITS.domains) {
    throw new LessonGateError("size limit", "domains", `has ${domains.length} entries; at most ${LESSON_LIMITS.domains}`);
  }
  const outside = domains.filter((d) => !policy.domains.includes(d));
  if (outside.length > 0) {
    throw new LessonGateError(
      "domain taxonomy",
      "domains",
      `has ${outside.map((d) => `"${d.slice(0, 40)}"`).join(", ")} outside the taxonomy (${policy.domains.join(", ")})`,
    );
  }
  // Every text the lesson injects goes through the guard; without a challenge text there is nothing to
  // compare against, and the lesson is kept as unguarded (docs/playbook.md#gates).
  for (const [field, text] of [
    ["trigger", trigger],
    ["anti_pattern", antiPattern],
    ["correct_pattern", correctPattern],
  ] as const) {
    const copied = sharedNgram(text, draft.challengeText, policy.minCopiedNgram);
    if (copied !== undefined) {
      throw new LessonGateError(
        "generalization guard",
        field,
        `repeats ${policy.minCopiedNgram} consecutive tokens of the challenge text ("${copied}"); ` +
          "describe the kind of task and what to do, not this challenge's words or constants",
      );
    }
  }
  return {
    trigger,
    antiPattern,
    correctPattern,
    domains: domains.sort(),
    confidence: draft.confidence,
    source,
    sourceChallengeHash,
    challengeTextHash: sha256Hex(draft.challengeText.trim() === "" ? "" : draft.challengeText),
    visibility: draft.visibility,
  };
}

/** The hash a lesson added without a challenge text keeps: the guard compared it with nothing. */
const NO_CHALLENGE_TEXT_HASH = sha256Hex("");

/**
 * Whether the generalization guard had a challenge text to compare the lesson with
 * (docs/playbook.md#gates): false for lessons added without one (or from a mirror that lost the hash).
 */
export function isGuarded(lesson: { readonly challengeTextHash: string }): boolean {
  return lesson.challengeTextHash !== "" && lesson.challengeTextHash !== NO_CHALLENGE_TEXT_HASH;
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function tooLong(field: string, text: string, max: number): void {
  if (text.length > max) throw new LessonGateError("size limit", field, `is ${text.length} characters long; at most ${max}`);
}
