import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ExecutionResult } from "../../execution/index.js";
import { redactResult, SecretRedactor } from "./secret-redaction.js";

const KEY = "sk-live/4f9a+Zq==x y&é";
const redactor = new SecretRedactor(new Map([["API_KEY", KEY]]));
const MARK = "[secret:API_KEY]";
const utf8 = Buffer.from(KEY, "utf8");

/** Python's urllib.parse.quote (safe "/") and quote_plus, upper-case hex. */
const pyQuote = (text: string, plus: boolean): string =>
  [...Buffer.from(text, "utf8")]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      if (/[A-Za-z0-9_.~-]/.test(char) || (!plus && char === "/")) return char;
      if (plus && char === " ") return "+";
      return `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");

describe("SecretRedactor: every form of a value becomes [secret:NAME]", () => {
  const forms: Array<[string, string]> = [
    ["plain", KEY],
    ["base64", utf8.toString("base64")],
    ["base64 without padding", utf8.toString("base64").replace(/=+$/, "")],
    ["URL-safe base64", utf8.toString("base64url")],
    ["URL-safe base64 with padding", `${utf8.toString("base64url")}==`.slice(0, utf8.toString("base64").length)],
    ["hex", utf8.toString("hex")],
    ["HEX", utf8.toString("hex").toUpperCase()],
    ["encodeURIComponent", encodeURIComponent(KEY)],
    ["percent-encoding in lower case", encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
    ["Python quote", pyQuote(KEY, false)],
    ["Python quote_plus (+ for space)", pyQuote(KEY, true)],
    ["form encoding", new URLSearchParams({ k: KEY }).toString().slice(2)],
    ["percent-encoding with + left as it is", encodeURIComponent(KEY).replace("%2B", "+")],
    ["Python json.dumps", JSON.stringify(KEY).slice(1, -1).replace("é", "\\u00e9")],
  ];
  it.each(forms)("%s", (_label, form) => {
    expect(redactor.redact(`before ${form} after\n`)).toBe(`before ${MARK} after\n`);
    expect(redactor.redact(`${form}${form}`)).toBe(MARK);
  });

  it("finds the value's base64 inside longer base64, at each of the three offsets", () => {
    for (const prefix of ["", "a", "ab", "abc", "Bearer "]) {
      for (const encoding of ["base64", "base64url"] as const) {
        const encoded = Buffer.from(`${prefix}${KEY}-and-more`, "utf8").toString(encoding);
        const out = redactor.redact(encoded);
        expect(out).toContain(MARK);
        // At most the few characters shared with the neighbouring bytes are left around the mark.
        expect(out.length).toBeLessThan(encoded.length - utf8.toString("base64").length + MARK.length + 4);
      }
    }
  });

  it("leaves text without a value alone, and redacts several secrets at once", () => {
    expect(redactor.redact("nothing here: sk-live, 4f9a, x y")).toBe("nothing here: sk-live, 4f9a, x y");
    const two = new SecretRedactor(
      new Map([
        ["A", "alpha-secret"],
        ["B", "bravo-secret"],
      ]),
    );
    expect(two.redact("alpha-secret|bravo-secret|YWxwaGEtc2VjcmV0")).toBe("[secret:A]|[secret:B]|[secret:A]");
    expect(new SecretRedactor(new Map()).redact(KEY)).toBe(KEY);
    expect(new SecretRedactor(new Map([["E", ""]])).empty).toBe(true);
  });

  it("redacts a value's trailing prefix (4 characters or more) only at the end of a cut stream", () => {
    const r = new SecretRedactor(new Map([["T", "tok_0123456789"]]));
    expect(r.redact("out: tok_0123", true)).toBe("out: [secret:T]");
    expect(r.redact("out: tok_0123", false)).toBe("out: tok_0123");
    expect(r.redact("out: tok", true)).toBe("out: tok"); // 3 characters: not told apart from ordinary output
    expect(r.redact("out: tok_0123 and more", true)).toBe("out: tok_0123 and more");
    const hexPrefix = Buffer.from("tok_0123456789").toString("hex").slice(0, 9);
    expect(r.redact(`x ${hexPrefix}`, true)).toBe("x [secret:T]");
    // A value that repeats itself: the longest prefix at the end is found (KMP), whole occurrences too.
    const aa = new SecretRedactor(new Map([["R", "aaaab"]]));
    expect(aa.redact(`${"a".repeat(10)}`, true)).toBe(`${"a".repeat(6)}[secret:R]`);
  });
});

describe("redactResult: what a run returns", () => {
  const base: ExecutionResult = {
    exitCode: 1,
    stdout: `key=${KEY}\n`,
    stderr: `ValueError: ${utf8.toString("hex")}\n`,
    durationMs: 10,
    timedOut: false,
    oomKilled: false,
    stdoutTruncated: false,
    stderrTruncated: true,
    errorSummary: `ValueError: bad ${KEY.slice(0, 8)}…`,
    success: false,
  };

  it("redacts stdout, stderr, the (clipped) error summary, file paths, text files and warnings; binary files stay", () => {
    const text = Buffer.from(`token: ${KEY}\n`);
    const binary = Buffer.from([0xff, 0xfe, ...utf8]);
    const result = redactResult(
      {
        ...base,
        stderr: `${"x".repeat(10)}${KEY.slice(0, 6)}`,
        outputFiles: [
          {
            path: `by-${utf8.toString("hex")}.txt`,
            sizeBytes: text.length,
            sha256: "0".repeat(64),
            content: text,
            truncated: false,
            mediaType: "text/plain",
          },
          {
            path: "cut.txt",
            sizeBytes: 1000,
            sha256: "1".repeat(64),
            content: Buffer.from(`${KEY.slice(0, 5)}`),
            truncated: true,
            mediaType: "text/plain",
          },
          {
            path: "blob.bin",
            sizeBytes: binary.length,
            sha256: "2".repeat(64),
            content: binary,
            truncated: false,
            mediaType: "application/octet-stream",
          },
        ],
        fileWarnings: [`${KEY}: a symbolic link`],
      },
      redactor,
    );
    expect(result.stdout).toBe(`key=${MARK}\n`);
    expect(result.stderr).toBe(`${"x".repeat(10)}${MARK}`);
    expect(result.errorSummary).toBe(`ValueError: bad ${MARK}…`);
    const [whole, cut, blob] = result.outputFiles ?? [];
    expect(whole?.content.toString()).toBe(`token: ${MARK}\n`);
    expect(whole?.sizeBytes).toBe(whole?.content.length);
    expect(whole?.sha256).toBe(
      createHash("sha256")
        .update(whole?.content ?? "")
        .digest("hex"),
    );
    expect(cut).toMatchObject({ sizeBytes: 1000, sha256: "1".repeat(64) });
    expect(cut?.content.toString()).toBe(MARK);
    expect(whole?.path).toBe(`by-${MARK}.txt`);
    expect(blob?.content).toEqual(binary);
    expect(result.fileWarnings).toEqual([`${MARK}: a symbolic link`]);
  });

  it("keeps a cut file's incomplete last character as it came", () => {
    const bytes = Buffer.concat([Buffer.from(`v=${KEY} `), Buffer.from("é").subarray(0, 1)]);
    const [file] =
      redactResult(
        {
          ...base,
          outputFiles: [{ path: "a.txt", sizeBytes: 99, sha256: "3".repeat(64), content: bytes, truncated: true, mediaType: "text/plain" }],
        },
        redactor,
      ).outputFiles ?? [];
    expect(file?.content).toEqual(Buffer.concat([Buffer.from(`v=${MARK} `), Buffer.from("é").subarray(0, 1)]));
  });

  it("handles a megabyte of output with 32 secrets of 64 characters", () => {
    const values = new Map(Array.from({ length: 32 }, (_, i) => [`S${i}`, `${i}-${"k".repeat(60)}-${i}`]));
    const big = new SecretRedactor(values);
    const stdout = `${"lorem ipsum % + ".repeat(65_536)}${values.get("S7")}`;
    const out = big.redact(stdout, true);
    expect(out.endsWith("[secret:S7]")).toBe(true);
  });
});
