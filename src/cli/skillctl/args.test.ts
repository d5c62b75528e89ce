import { describe, expect, it } from "vitest";
import { COMMANDS, DEFAULT_ADDRESS, parseCommandLine, usage, UsageError, visibilityWord } from "./args.js";

const NO_ENV: NodeJS.ProcessEnv = {};

function command(argv: string[], env: NodeJS.ProcessEnv = NO_ENV) {
  const parsed = parseCommandLine(argv, env);
  if (parsed.kind !== "command") throw new Error(`expected a command, got ${JSON.stringify(parsed)}`);
  return parsed;
}

function usageError(argv: string[], env: NodeJS.ProcessEnv = NO_ENV): UsageError {
  try {
    parseCommandLine(argv, env);
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error(`expected a UsageError for ${argv.join(" ")}`);
}

describe("skillctl command line: authentication", () => {
  it("has no token by default, and takes $SKILLCTL_TOKEN (trimmed) when set", () => {
    expect(command(["list"]).global.token).toEqual({ kind: "none" });
    expect(command(["list"], { SKILLCTL_TOKEN: "  " }).global.token).toEqual({ kind: "none" });
    expect(command(["list"], { SKILLCTL_TOKEN: " abcdefghijklmnop\n" }).global.token).toEqual({ kind: "env", token: "abcdefghijklmnop" });
  });

  it("takes --token-file anywhere on the line, over $SKILLCTL_TOKEN", () => {
    expect(command(["--token-file", "/run/secrets/t", "list"]).global.token).toEqual({ kind: "file", path: "/run/secrets/t" });
    expect(command(["list", "--token-file=/x"], { SKILLCTL_TOKEN: "abcdefghijklmnop" }).global.token).toEqual({ kind: "file", path: "/x" });
    expect(usageError(["list", "--token-file="]).message).toContain("--token-file needs a file name");
  });

  it("refuses --token VALUE with the reason (shell history, ps) and the alternatives", () => {
    for (const argv of [
      ["--token", "abc", "list"],
      ["list", "--token=abc"],
      ["list", "--token"],
    ]) {
      const error = usageError(argv);
      expect(error.message).toContain("there is no --token option");
      expect(error.message).toContain("shell history");
      expect(error.message).toContain("SKILLCTL_TOKEN");
      expect(error.message).toContain("--token-file");
      expect(error.message).not.toContain("abc");
    }
    // After `--` it is an argument like any other (here a payload, which the command then checks).
    expect(command(["invoke", "x", "--", "--token"]).positionals).toEqual(["x", "--token"]);
  });
});

describe("skillctl command line: TLS", () => {
  it("is plaintext by default", () => {
    expect(command(["list"]).global.tls).toEqual({ kind: "insecure" });
    expect(command(["list"], { SKILLCTL_TLS_CA: "" }).global.tls).toEqual({ kind: "insecure" });
  });

  it("--tls trusts the system roots; --tls-ca (or $SKILLCTL_TLS_CA) a CA file, the flag winning", () => {
    expect(command(["--tls", "list"]).global.tls).toEqual({ kind: "system-roots" });
    expect(command(["list", "--tls-ca", "ca.pem"]).global.tls).toEqual({ kind: "ca-file", path: "ca.pem" });
    expect(command(["list"], { SKILLCTL_TLS_CA: "/etc/ca.pem" }).global.tls).toEqual({ kind: "ca-file", path: "/etc/ca.pem" });
    expect(command(["list", "--tls-ca", "mine.pem"], { SKILLCTL_TLS_CA: "/etc/ca.pem" }).global.tls).toEqual({
      kind: "ca-file",
      path: "mine.pem",
    });
    expect(command(["--tls", "list"], { SKILLCTL_TLS_CA: "/etc/ca.pem" }).global.tls).toEqual({ kind: "ca-file", path: "/etc/ca.pem" });
    expect(usageError(["list", "--tls-ca="]).message).toContain("--tls-ca needs a file name");
  });

  it("keeps the address default and $SKILLCTL_ADDRESS", () => {
    expect(command(["list"]).global.address).toBe(DEFAULT_ADDRESS);
    expect(command(["list"], { SKILLCTL_ADDRESS: "engine:50051" }).global.address).toBe("engine:50051");
  });
});

describe("skillctl command line: the new commands", () => {
  it("checks arguments of whoami, visibility, transfer, protect, unprotect, stats, versions, rebuild", () => {
    expect(command(["whoami"]).command).toBe("whoami");
    expect(usageError(["whoami", "x"]).message).toContain("takes at most 0");
    expect(command(["visibility", "s", "public"]).positionals).toEqual(["s", "public"]);
    expect(usageError(["visibility", "s"]).message).toContain("needs more arguments");
    expect(command(["transfer", "s", "bob"]).positionals).toEqual(["s", "bob"]);
    expect(usageError(["transfer", "s"]).message).toContain("needs more arguments");
    for (const name of ["protect", "unprotect", "stats", "versions"]) {
      expect(command([name, "s"]).positionals).toEqual(["s"]);
      expect(usageError([name]).message).toContain("needs more arguments");
    }
    expect(command(["--json", "rebuild"]).global.json).toBe(true);
    expect(usageError(["rebuild", "--all"]).message).toContain("'rebuild' does not take --all");
  });

  it("patch takes find/replace text or files and a test payload; nothing else", () => {
    const parsed = command(["patch", "s", "--find", "a = 1", "--replace", "", "--test-payload", "{}"]);
    expect(parsed.options).toMatchObject({ find: "a = 1", replace: "", "test-payload": "{}" });
    expect(command(["patch", "s", "--find-file", "f.txt", "--replace-file", "r.txt"]).options).toMatchObject({
      "find-file": "f.txt",
      "replace-file": "r.txt",
    });
    expect(usageError(["patch", "s", "--name", "x"]).message).toContain("'patch' does not take --name");
  });

  it("register takes --public and --private; list takes --owner", () => {
    expect(command(["register", "f.py", "--name", "n", "--description", "d", "--public"]).options.public).toBe(true);
    expect(command(["register", "f.py", "--private"]).options.private).toBe(true);
    expect(command(["list", "--owner", "alice"]).options.owner).toBe("alice");
    expect(usageError(["show", "x", "--owner", "alice"]).message).toContain("'show' does not take --owner");
  });

  it("register takes repeated --requirements and --system-packages; envs takes rebuild and --missing-only", () => {
    const options = command([
      "register",
      "f.py",
      "--requirements",
      "PyYAML==6.0.1",
      "--requirements",
      "attrs",
      "--system-packages",
      "python3-numpy",
    ]).options;
    expect(options.requirements).toEqual(["PyYAML==6.0.1", "attrs"]);
    expect(options["system-packages"]).toEqual(["python3-numpy"]);
    const rebuild = command(["envs", "rebuild", "--missing-only"]);
    expect(rebuild.positionals).toEqual(["rebuild"]);
    expect(rebuild.options["missing-only"]).toBe(true);
    expect(usageError(["envs", "rebuild", "now"]).message).toContain("'envs' takes at most 1 argument(s)");
    expect(usageError(["runtimes", "--missing-only"]).message).toContain("'runtimes' does not take --missing-only");
  });

  it("visibility words", () => {
    expect(visibilityWord("PUBLIC")).toBe("public");
    expect(visibilityWord("private")).toBe("private");
    expect(() => visibilityWord("secret")).toThrow(/private or public/);
  });
});

describe("skillctl usage text", () => {
  it("lists every command and explains token handling and TLS", () => {
    const text = usage();
    for (const name of Object.keys(COMMANDS)) expect(text).toMatch(new RegExp(`\\n  ${name}\\b`));
    expect(text).toContain("--token-file PATH");
    expect(text).toContain("$SKILLCTL_TOKEN");
    expect(text).toContain("no --token flag");
    expect(text).toContain("shell history");
    expect(text).toContain("--tls-ca PATH");
    expect(text).toContain("$SKILLCTL_TLS_CA");
    expect(usage("transfer")).toMatch(/^usage: skillctl transfer <name> <agent>\n/);
    expect(usage("transfer")).toContain("admin only");
  });
});
