import { describe, expect, it } from "vitest";
import { camelParts, nameWords, queryWords } from "./name-tokens.js";

describe("nameWords", () => {
  it.each([
    ["tmdb_get_movie_movie_id_credits", ["tmdb", "get", "movie", "movie", "id", "credits"]],
    ["GetUserToken", ["get", "user", "token"]],
    ["parseHTTPHeaders", ["parse", "http", "headers"]],
    ["spotify-get-me", ["spotify", "get", "me"]],
    ["get2FACode", ["get2", "fa", "code"]],
    ["ModifyReminder_v2", ["modify", "reminder", "v2"]],
    ["ÉtéRapport", ["été", "rapport"]],
    ["lowercase", ["lowercase"]],
    ["", []],
  ])("%s → %j", (name, words) => {
    expect(nameWords(name)).toEqual(words);
  });
});

describe("camelParts", () => {
  it("keeps acronyms together and starts a word at the last capital", () => {
    expect(camelParts("XMLHttpRequest")).toEqual(["XML", "Http", "Request"]);
    expect(camelParts("iPhone")).toEqual(["i", "Phone"]);
  });
});

describe("queryWords", () => {
  it("keeps each whole word and adds its camelCase parts", () => {
    expect(queryWords("call GetUserToken now")).toEqual(["call", "getusertoken", "get", "user", "token", "now"]);
  });
  it("splits on punctuation like the names do", () => {
    expect(queryWords("movie_id, please!")).toEqual(["movie", "id", "please"]);
  });
});
