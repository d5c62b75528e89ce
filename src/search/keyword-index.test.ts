import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KeywordIndex, type KeywordDocument } from "./keyword-index.js";
import { agentAudience, audienceOf, PUBLIC_AUDIENCE, userAudience } from "./vector-index.js";

const TOOLS: KeywordDocument[] = [
  doc("tmdb_get_movie_movie_id_credits", "Get Credits. Get the cast and crew for a movie."),
  doc("tmdb_get_search_person", "Search People. Search for people."),
  doc("tmdb_get_movie_top_rated", "Get Top Rated. Get the top rated movies on TMDb."),
  doc("GetUserToken", "Get the user token by username and password."),
  doc("AddReminder", "The API for adding a reminder item includes content and time."),
  doc("QueryStock", "This API queries the stock price of a given stock code and date."),
];

function doc(name: string, description: string, extra: Partial<KeywordDocument> = {}): KeywordDocument {
  return { name, description, owner: "alice", visibility: "public", status: "active", ...extra };
}

describe("KeywordIndex", () => {
  let db: Database.Database;
  let index: KeywordIndex;

  beforeEach(() => {
    db = new Database(":memory:");
    index = new KeywordIndex(db);
    index.upsert(TOOLS);
  });
  afterEach(() => db.close());

  const top = (query: string, limit = 3): string[] => index.search(query, { limit }).map((hit) => hit.id);

  it("ranks the obviously relevant tool first", () => {
    expect(top("cast and crew of a movie")[0]).toBe("tmdb_get_movie_movie_id_credits");
    expect(top("find a person by name")[0]).toBe("tmdb_get_search_person");
    expect(top("what is the stock price of NVDA today")[0]).toBe("QueryStock");
    expect(top("remind me to call mom at 5pm")[0]).toBe("AddReminder");
  });

  it("splits CamelCase names, so their words match", () => {
    // "token" appears in GetUserToken's description too; "user" and "get" come from the name.
    expect(top("GetUserToken")[0]).toBe("GetUserToken");
    const onlyName = new KeywordIndex(new Database(":memory:"));
    onlyName.upsert([doc("AddReminder", "x"), doc("QueryStock", "y"), doc("tmdb_get_search_person", "z")]);
    expect(onlyName.search("add a reminder", { limit: 3 }).map((hit) => hit.id)).toEqual(["AddReminder"]);
    expect(onlyName.search("stock query", { limit: 3 }).map((hit) => hit.id)).toEqual(["QueryStock"]);
    expect(onlyName.search("search person", { limit: 3 }).map((hit) => hit.id)).toEqual(["tmdb_get_search_person"]);
  });

  it("stems with Porter, so inflections meet", () => {
    expect(top("reminders")[0]).toBe("AddReminder");
    expect(top("searching people")[0]).toBe("tmdb_get_search_person");
  });

  it("returns positive scores, best first, and respects limit", () => {
    const hits = index.search("get movie credits rated", { limit: 2 });
    expect(hits).toHaveLength(2);
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? Infinity);
    expect(hits.every((hit) => hit.score > 0)).toBe(true);
  });

  it.each([
    "",
    "   ",
    '"',
    '"unbalanced',
    "a AND",
    "OR",
    "NOT NOT",
    "NEAR(movie credits, 2)",
    "movie NEAR/3 credits",
    "*",
    "mov*",
    "-credits",
    "+credits",
    "^credits",
    "name_tokens:movie",
    "{name_tokens description}: movie",
    "(((",
    ")",
    "don't",
    "C++ & C#",
    "'; DROP TABLE skill_keywords; --",
    "\u0000\u0001",
    "🎬 movie 🍿",
    "e\u0301",
    "\u0301",
    "ﬁlm",
    "x".repeat(10_000),
    Array.from({ length: 500 }, (_, i) => `w${i}`).join(" "),
  ])("never throws on hostile query %#", (query) => {
    expect(() => index.search(query, { limit: 5 })).not.toThrow();
  });

  it("answers an empty query with no hits", () => {
    expect(index.search("  !!! ", { limit: 5 })).toEqual([]);
  });

  it("treats operator words as plain words", () => {
    index.upsert([doc("logic_gate", "Evaluate a NOT gate or an AND gate near the input.")]);
    expect(top("NEAR")[0]).toBe("logic_gate");
    expect(top("NOT AND OR")[0]).toBe("logic_gate"); // only stop words: they are kept
  });

  it("ignores conversational function words that a small registry would over-weight", () => {
    // "this" and "of" occur only in QueryStock's description, so they would carry a high IDF here.
    expect(top("who played in the cast of this movie")[0]).toBe("tmdb_get_movie_movie_id_credits");
  });

  it("filters by status, owner and visibility before the limit", () => {
    index.upsert([
      doc("movie_private", "Get the movie cast privately.", { owner: "bob", visibility: "private" }),
      doc("movie_retired", "Get the movie cast, retired.", { status: "retired" }),
    ]);
    const query = "movie cast";
    const ids = (filter: Parameters<KeywordIndex["search"]>[1]["filter"]) =>
      index.search(query, { limit: 10, ...(filter ? { filter } : {}) }).map((hit) => hit.id);
    expect(ids({ statuses: ["active"] })).not.toContain("movie_retired");
    expect(ids({ owners: ["bob"] })).toEqual(["movie_private"]);
    expect(ids({ visibility: ["public"], statuses: ["active"] })).not.toContain("movie_private");
    expect(ids({ statuses: ["retired"] })).toEqual(["movie_retired"]);
    expect(ids({ owners: [] })).toEqual([]);
    // A limit of 1 under a filter still finds the one match however far down it ranks.
    expect(index.search(query, { limit: 1, filter: { statuses: ["retired"] } }).map((hit) => hit.id)).toEqual(["movie_retired"]);
  });

  it("filters by audience: an agent's own skills OR the public ones, in one search, before the limit", () => {
    index.upsert([
      doc("movie_alice_private", "Get the movie cast for alice.", { owner: "alice", visibility: "private" }),
      doc("movie_bob_private", "Get the movie cast for bob.", { owner: "bob", visibility: "private" }),
      doc("movie_bob_public", "Get the movie cast, shared by bob.", { owner: "bob", visibility: "public" }),
      doc("movie_public_private", "Get the movie cast for the agent called public.", { owner: "public", visibility: "private" }),
    ]);
    const scoped = (agent: string, limit = 20) =>
      index
        .search("movie cast", { limit, filter: { statuses: ["active"], audiences: [PUBLIC_AUDIENCE, audienceOf(agent, "private")] } })
        .map((hit) => hit.id)
        .sort();
    // TOOLS are alice's and public: the two movie tools among them are in every agent's scope.
    const tools = ["tmdb_get_movie_movie_id_credits", "tmdb_get_movie_top_rated"];
    expect(scoped("alice")).toEqual(["movie_alice_private", "movie_bob_public", ...tools]);
    expect(scoped("bob")).toEqual(["movie_bob_private", "movie_bob_public", ...tools]);
    expect(scoped("carol")).toEqual(["movie_bob_public", ...tools]);
    expect(scoped("public")).toEqual(["movie_bob_public", "movie_public_private", ...tools]);
    expect(index.search("movie cast", { limit: 10, filter: { audiences: [] } })).toEqual([]);
    // A limit of 1 still finds the one private match of bob's, however far down it ranks.
    expect(index.search("movie cast", { limit: 1, filter: { audiences: [audienceOf("bob", "private")] } }).map((hit) => hit.id)).toEqual([
      "movie_bob_private",
    ]);
    // Visibility changes move the document to its new audience.
    index.upsert([doc("movie_bob_private", "Get the movie cast for bob.", { owner: "bob", visibility: "public" })]);
    expect(scoped("carol")).toContain("movie_bob_private");
  });

  it("matches a document through any of its audiences (owner, agent and user grantees), once, before the limit", () => {
    const bob = agentAudience("bob");
    const user = userAudience("u-1");
    index.upsert([
      doc("movie_granted", "Get the movie cast, shared with bob and user u-1.", {
        owner: "alice",
        visibility: "internal",
        grantAudiences: [bob, user],
      }),
      doc("movie_dave", "Get the movie cast for dave.", { owner: "dave", visibility: "private" }),
    ]);
    const scoped = (audiences: string[], limit = 20) =>
      index
        .search("movie cast", { limit, filter: { statuses: ["active"], audiences } })
        .map((hit) => hit.id)
        .sort();
    expect(scoped([bob])).toEqual(["movie_granted"]);
    expect(scoped([bob, user])).toEqual(["movie_granted"]);
    expect(scoped([agentAudience("carol"), user])).toEqual(["movie_granted"]);
    expect(scoped([agentAudience("carol")])).toEqual([]);
    expect(scoped([bob], 1)).toEqual(["movie_granted"]);
    // The grant to bob revoked; then the document removed: nothing is left behind.
    index.upsert([
      doc("movie_granted", "Get the movie cast, shared with user u-1.", { owner: "alice", visibility: "internal", grantAudiences: [user] }),
    ]);
    expect(scoped([bob])).toEqual([]);
    expect(scoped([user])).toEqual(["movie_granted"]);
    index.remove(["movie_granted"]);
    expect(scoped([user])).toEqual([]);
  });

  it("upgrades a documents table from before audience: adds the column, fills it, keeps the text", () => {
    const upgraded = new Database(":memory:");
    new KeywordIndex(upgraded).upsert([
      ...TOOLS,
      doc("movie_bob_private", "Get the movie cast for bob.", { owner: "bob", visibility: "private", evidence: ["who acted in it"] }),
    ]);
    // What the previous version created: the same tables without the column.
    upgraded.exec("ALTER TABLE skill_keywords_docs DROP COLUMN audience");
    const columns = () =>
      (upgraded.prepare("SELECT name FROM pragma_table_info('skill_keywords_docs')").all() as Array<{ name: string }>).map((c) => c.name);
    expect(columns()).not.toContain("audience");

    const reopened = new KeywordIndex(upgraded);
    expect(columns()).toContain("audience");
    expect(reopened.count()).toBe(TOOLS.length + 1);
    const scoped = (agent: string) =>
      reopened
        .search("movie cast who acted", { limit: 10, filter: { audiences: [PUBLIC_AUDIENCE, audienceOf(agent, "private")] } })
        .map((hit) => hit.id);
    expect(scoped("bob")).toEqual(["movie_bob_private", "tmdb_get_movie_movie_id_credits", "tmdb_get_movie_top_rated"]);
    expect(scoped("carol")).toEqual(["tmdb_get_movie_movie_id_credits", "tmdb_get_movie_top_rated"]);
    expect(reopened.evidence("movie_bob_private")).toEqual(["who acted in it"]);
    new KeywordIndex(upgraded); // idempotent once upgraded
    expect(columns().filter((c) => c === "audience")).toHaveLength(1);
    upgraded.close();
  });

  it("upserts in place and removes", () => {
    expect(index.count()).toBe(TOOLS.length);
    index.upsert([doc("QueryStock", "Look up the weather forecast for a city.")]);
    expect(index.count()).toBe(TOOLS.length);
    expect(top("price")).not.toContain("QueryStock"); // the old description is gone from the FTS index
    expect(top("weather forecast")[0]).toBe("QueryStock");
    index.remove(["QueryStock", "unknown"]);
    expect(index.count()).toBe(TOOLS.length - 1);
    expect(top("weather forecast")).toEqual([]);
  });

  it("learns from evidence, which survives a new version of the skill", () => {
    expect(top("what's my balance")).toEqual([]);
    expect(index.addEvidence("QueryStock", "what's my balance")).toBe(true);
    expect(index.addEvidence("QueryStock", "What's   my BALANCE")).toBe(true); // duplicate, ignored
    expect(index.addEvidence("nope", "anything")).toBe(false);
    expect(index.evidence("QueryStock")).toEqual(["what's my balance"]);
    expect(top("my balance")).toEqual([]); // one query's words are not yet the skill's
    expect(index.addEvidence("QueryStock", "show the balances of my portfolio")).toBe(true);
    expect(index.matchedEvidence("QueryStock")).toEqual(["my balance", "balances my"]);
    expect(top("my balance")[0]).toBe("QueryStock");
    index.upsert([doc("QueryStock", "Query a stock price (v2).")]);
    expect(index.evidence("QueryStock")).toEqual(["what's my balance", "show the balances of my portfolio"]);
    expect(top("my balance")[0]).toBe("QueryStock");
    index.upsert([doc("QueryStock", "Query a stock price (v3).", { evidence: ["ticker lookup"] })]);
    expect(index.evidence("QueryStock")).toEqual(["ticker lookup"]);
    expect(top("my balance")).toEqual([]);
  });

  it("matches only the words of a skill's evidence that several of its queries use", () => {
    // The setting of one credited query (a trip to New York) is not what the skill is asked for.
    index.upsert([
      doc("get_weather", "Get the weather for a city and a day.", {
        evidence: ["planning a trip to New York City on May 1st, what's the forecast", "will I need an umbrella in Oslo, is rain forecast"],
      }),
      doc("book_car", "Book a rental car."),
    ]);
    expect(index.matchedEvidence("get_weather")).toEqual(["forecast", "forecast"]);
    expect(top("my trip to New York City on May 1st: I need a rental car")[0]).toBe("book_car");
    expect(top("rain forecast for tomorrow")[0]).toBe("get_weather");
    index.replaceEvidence("get_weather", ["a trip to New York", "New York in May"]);
    expect(top("a car in New York")[0]).toBe("get_weather"); // now recurring words, matched
    expect(new KeywordIndex(new Database(":memory:"), { evidenceRecurrence: 1 }).search("x", { limit: 1 })).toEqual([]);
  });

  it("matches words in the evidence of many skills against names and descriptions only", () => {
    // Twelve skills credited with requests that all name a file 'example.jpg', each for its own effect.
    const effects = [
      "sepia",
      "blur",
      "sharpen",
      "crop",
      "rotate",
      "mirror",
      "invert",
      "posterize",
      "vignette",
      "pixelate",
      "emboss",
      "tint",
    ];
    const credited = effects.map((effect, i) =>
      doc(`image_tool_${i}`, `Image operation number ${i}.`, {
        evidence: [`I have an image example.jpg, make it ${effect}`, `${effect} example.jpg please`],
      }),
    );
    index.upsert([...credited, doc("jpg_to_png", "Convert a JPG picture to PNG.")]);
    expect(index.matchedEvidence("image_tool_1")).toEqual(["example jpg blur", "blur example jpg"]);
    expect(top("convert example.jpg")[0]).toBe("jpg_to_png");
    expect(top("example.jpg", 20)).toEqual(["jpg_to_png"]); // none of the twelve, though each holds it twice
    expect(top("blur it, please")[0]).toBe("image_tool_1");
    // Among a handful of skills holding evidence, a word one of them uses is its own: the share is
    // taken of at least 10 skills, so only a word in the evidence of two or more is boilerplate.
    const few = new KeywordIndex(new Database(":memory:"));
    few.upsert(credited.slice(0, 3));
    expect(few.search("blur", { limit: 5 }).map((hit) => hit.id)).toEqual(["image_tool_1"]);
    expect(few.search("example.jpg", { limit: 5 })).toEqual([]);
    const off = new KeywordIndex(new Database(":memory:"), { boilerplateShare: 1 });
    off.upsert(credited.slice(0, 3));
    expect(off.search("example.jpg", { limit: 5 })).toHaveLength(3);
  });

  it("upgrades a documents table from before heard: the queries kept whole, their recurring words matched", () => {
    const upgraded = new Database(":memory:");
    new KeywordIndex(upgraded).upsert([doc("get_weather", "Get the weather.", { evidence: ["a trip to Oslo", "rain in Oslo"] })]);
    // What the previous version held: the evidence queries whole in `evidence`, no `heard` and its index.
    upgraded.exec(
      `DROP TABLE skill_keywords_heard; DROP TRIGGER skill_keywords_docs_heard_ai; DROP TRIGGER skill_keywords_docs_heard_ad;
       DROP TRIGGER skill_keywords_docs_heard_au; DROP INDEX skill_keywords_docs_heard;
       UPDATE skill_keywords_docs SET evidence = heard; ALTER TABLE skill_keywords_docs DROP COLUMN heard;`,
    );
    const reopened = new KeywordIndex(upgraded);
    expect(reopened.evidence("get_weather")).toEqual(["a trip to Oslo", "rain in Oslo"]);
    expect(reopened.matchedEvidence("get_weather")).toEqual(["oslo", "oslo"]);
    expect(reopened.search("trip", { limit: 3 })).toEqual([]);
    expect(reopened.search("oslo", { limit: 3 }).map((hit) => hit.id)).toEqual(["get_weather"]);
    reopened.addEvidence("get_weather", "snow in Oslo");
    expect(reopened.search("snow", { limit: 3 })).toEqual([]); // the heard index follows: no error, one use only
    upgraded.close();
  });

  it("caps evidence, dropping the oldest queries", () => {
    const small = new KeywordIndex(new Database(":memory:"), { maxEvidenceChars: 30 });
    small.upsert([doc("x", "x")]);
    for (const query of ["first query here", "second query here", "third query here"]) small.addEvidence("x", query);
    expect(small.evidence("x")).toEqual(["third query here"]);
  });

  it("rebuilds the FTS index when the tokenizer changes", () => {
    const plain = new KeywordIndex(db, { tokenizer: "unicode61" });
    expect(plain.search("reminders", { limit: 3 })).toEqual([]); // no stemming now
    expect(plain.search("reminder", { limit: 3 })[0]?.id).toBe("AddReminder");
    expect(plain.count()).toBe(TOOLS.length);
    const stemmed = new KeywordIndex(db);
    expect(stemmed.search("reminders", { limit: 3 })[0]?.id).toBe("AddReminder");
  });

  it("clear empties documents and the FTS index", () => {
    index.clear();
    expect(index.count()).toBe(0);
    expect(top("movie")).toEqual([]);
  });

  it("lives beside other tables in a shared database", () => {
    db.exec("CREATE TABLE skills (name TEXT PRIMARY KEY)");
    const again = new KeywordIndex(db);
    expect(again.count()).toBe(TOOLS.length);
  });
});
