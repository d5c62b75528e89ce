import { describe, expect, it } from "vitest";
import { splitClauses } from "./query-clauses.js";

describe("splitClauses", () => {
  it("splits actions joined by and then, then, and, semicolons and sentence ends", () => {
    expect(splitClauses("book a flight to Rome and then find a hotel near the station")).toEqual([
      "book a flight to Rome",
      "find a hotel near the station",
    ]);
    expect(splitClauses("Create a new playlist named 'BIGBANG' and add a song of BIGBANG to it")).toEqual([
      "Create a new playlist named 'BIGBANG'",
      "add a song of BIGBANG to it",
    ]);
    expect(splitClauses("check the weather in Oslo; convert 100 euros to crowns")).toEqual([
      "check the weather in Oslo",
      "convert 100 euros to crowns",
    ]);
    expect(splitClauses("Get my calendar for today. Then email the agenda to Bob")).toEqual([
      "Get my calendar for today",
      "Then email the agenda to Bob",
    ]);
  });

  it("keeps a single intent whole: short pieces and abbreviations are not clauses", () => {
    expect(splitClauses("find tom and jerry cartoons")).toEqual([]);
    expect(splitClauses("What is the weather in Paris?")).toEqual([]);
    expect(splitClauses("Reschedule my appointment with Dr. Smith on April 12th")).toEqual([]);
    expect(splitClauses("")).toEqual([]);
  });

  it("ranks at most four clauses apart; the rest stay together in the last one", () => {
    const clauses = splitClauses(
      "open the door now; turn on the lights; start the coffee machine; play some jazz music; feed the cat please",
    );
    expect(clauses).toHaveLength(4);
    expect(clauses[3]).toBe("play some jazz music feed the cat please");
  });
});
