import { describe, expect, it } from "vitest";
import { parseQdrantUrl } from "./qdrant-endpoint.js";

describe("parseQdrantUrl", () => {
  it("takes the port from the URL, else the scheme's default, and keeps the path as a prefix", () => {
    expect(parseQdrantUrl("http://qdrant:6333")).toEqual({
      host: "qdrant",
      port: 6333,
      https: false,
      prefix: undefined,
      display: "http://qdrant:6333",
    });
    expect(parseQdrantUrl("https://qdrant.example.com")).toMatchObject({ host: "qdrant.example.com", port: 443, https: true });
    expect(parseQdrantUrl("http://qdrant:80")).toMatchObject({ port: 80, https: false, display: "http://qdrant" });
    expect(parseQdrantUrl("http://qdrant")).toMatchObject({ port: 80 });
    expect(parseQdrantUrl("http://gw:8080/qdrant")).toMatchObject({ host: "gw", port: 8080, prefix: "/qdrant" });
    expect(parseQdrantUrl("https://gw/vector/qdrant/")).toMatchObject({ port: 443, prefix: "/vector/qdrant" });
    expect(parseQdrantUrl("http://[::1]:6333")).toMatchObject({ host: "[::1]", port: 6333 });
  });

  it("never shows credentials, and refuses what is not an http(s) URL", () => {
    expect(parseQdrantUrl("https://user:secret@qdrant.example.com:6334/p").display).toBe("https://qdrant.example.com:6334/p");
    expect(() => parseQdrantUrl("qdrant:6333/secret-key")).toThrow(
      /^QDRANT_URL: must start with http:\/\/ or https:\/\/, not qdrant:\/\/$/,
    );
    expect(() => parseQdrantUrl("not a url with key=abc")).toThrow(/^QDRANT_URL: is not a valid/);
    expect(() => parseQdrantUrl("ftp://qdrant")).toThrow(/must start with http/);
    expect(() => parseQdrantUrl("http://qdrant:6333/?api-key=x")).toThrow(/must not carry a query/);
  });
});
