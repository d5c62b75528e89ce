import { describe, expect, it } from "vitest";
import { DEFAULT_PLAYBOOK_POLICY, type LessonRecord } from "./lesson.js";
import { frequency, hitRate, pruneSelection, stalePenalty, trimToCap, utility, verificationOutcome } from "./retention.js";

const NOW = Date.UTC(2026, 0, 10);
const DAY = 86_400_000;
const policy = DEFAULT_PLAYBOOK_POLICY;

let next = 0;
function lesson(fields: Partial<LessonRecord> = {}): LessonRecord {
  next += 1;
  return {
    id: `lsn_${String(next).padStart(4, "0")}`,
    owner: "agent",
    trigger: `trigger ${next}`,
    antiPattern: "",
    correctPattern: `pattern ${next}`,
    domains: ["coding"],
    confidence: 0.5,
    source: "self-play",
    sourceChallengeHash: "",
    challengeTextHash: "",
    state: "active",
    archivedReason: "",
    visibility: "private",
    verified: false,
    pinned: false,
    retrievals: 0,
    helpfulRetrievals: 0,
    timesAdded: 1,
    createdAt: NOW,
    updatedAt: NOW,
    lastRetrievedAt: undefined,
    lastHelpfulAt: undefined,
    ...fields,
  };
}

describe("utility", () => {
  it("is confidence·0.5 + hit_rate·0.8 + 0.3 if verified + ln(freq)·0.1 + stale_penalty", () => {
    const l = lesson({ confidence: 0.6, retrievals: 4, helpfulRetrievals: 1, verified: true, timesAdded: 2, lastHelpfulAt: NOW - 5 * DAY });
    expect(hitRate(l)).toBe(0.25);
    expect(frequency(l)).toBe(6);
    expect(stalePenalty(l, NOW, policy)).toBeCloseTo(-0.05, 10);
    expect(utility(l, NOW, policy)).toBeCloseTo(0.3 + 0.2 + 0.3 + Math.log(6) * 0.1 - 0.05, 10);
  });

  it("gives a never-retrieved lesson hit rate 0 and a fresh one no penalty", () => {
    const l = lesson({ confidence: 1 });
    expect(hitRate(l)).toBe(0);
    expect(utility(l, NOW, policy)).toBe(0.5);
  });

  it("caps the stale penalty at 0.3, counting from creation when the lesson never helped", () => {
    expect(stalePenalty(lesson({ createdAt: NOW - 400 * DAY }), NOW, policy)).toBe(-0.3);
    expect(stalePenalty(lesson({ createdAt: NOW - 400 * DAY, lastHelpfulAt: NOW - DAY }), NOW, policy)).toBeCloseTo(-0.01, 10);
  });
});

describe("verificationOutcome", () => {
  it.each([
    [false, 1, true, 1, true],
    [false, 1, true, 3, true],
    [true, 2, true, 1, true],
    [true, 1, true, 1, false],
    [true, 2, true, 2, false],
    [false, 1, false, 1, false],
    [true, 3, false, 1, false],
  ])(
    "original passed=%s in %i, verify passed=%s in %i → verified=%s",
    (originalPassed, originalAttempts, verifyPassed, verifyAttempts, verified) => {
      expect(verificationOutcome({ originalPassed, originalAttempts, verifyPassed, verifyAttempts }).verified).toBe(verified);
    },
  );
});

describe("trimToCap", () => {
  it("keeps head pins, then verified, then the highest-utility unverified; archives the rest", () => {
    const small = { ...policy, maxLessons: 3 };
    const pinned = lesson({ pinned: true, confidence: 0 });
    const verified = lesson({ verified: true, confidence: 0, createdAt: NOW - 300 * DAY });
    const strong = lesson({ confidence: 0.9 });
    const weak = lesson({ confidence: 0.2 });
    const { keep, archive } = trimToCap([weak, strong, verified, pinned], NOW, small);
    expect(keep.map((l) => l.id)).toEqual([pinned.id, verified.id, strong.id]);
    expect(archive.map((l) => l.id)).toEqual([weak.id]);
  });

  it("trims nothing at or under the cap", () => {
    const lessons = Array.from({ length: 50 }, () => lesson());
    expect(trimToCap(lessons, NOW, policy).archive).toEqual([]);
  });
});

describe("pruneSelection", () => {
  const options = { minRetrievals: 5, maxDropFraction: 0.25 };

  it("drops only unverified, unpinned, never-helpful lessons retrieved at least min_retrievals times, lowest utility first", () => {
    const candidates = [lesson({ retrievals: 9, confidence: 0.1 }), lesson({ retrievals: 5, confidence: 0.9 })];
    const others = [
      lesson({ retrievals: 9, verified: true }),
      lesson({ retrievals: 9, pinned: true }),
      lesson({ retrievals: 9, helpfulRetrievals: 1 }),
      lesson({ retrievals: 4 }),
      lesson(),
      lesson(),
    ];
    const dropped = pruneSelection([...others, ...candidates], options, NOW, policy);
    expect(dropped.map((l) => l.id)).toEqual([candidates[0]?.id, candidates[1]?.id]);
  });

  it("never drops more than ⌊fraction × playbook⌋", () => {
    const lessons = Array.from({ length: 7 }, () => lesson({ retrievals: 10 }));
    expect(pruneSelection(lessons, options, NOW, policy)).toHaveLength(1);
    expect(pruneSelection(lessons.slice(0, 3), options, NOW, policy)).toHaveLength(0);
    expect(pruneSelection(lessons.slice(0, 4), options, NOW, policy)).toHaveLength(1);
  });
});
