#!/usr/bin/env node
/**
 * skillctl: the operator CLI of the skill engine, talking gRPC to a running service.
 * `skillctl --help` lists the commands. Exit codes: 0 ok, 1 a skill (test) failed, 2 usage or gRPC error.
 * The work is in ./skillctl/main.ts (importable without side effects); this file binds it to the process.
 */
import { type Io, main } from "./skillctl/index.js";

/**
 * grpc-js sets the TLS server name to the target host even when that is an IP address (as the default
 * 127.0.0.1 is), and Node then prints a DEP0123 deprecation warning on stderr for it. Nothing an
 * operator can act on: that one warning is dropped, every other one still goes through.
 */
const emitWarning = process.emitWarning.bind(process) as (...args: unknown[]) => void;
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const [typeOrOptions, code] = rest;
  const warningCode = typeof typeOrOptions === "object" && typeOrOptions !== null ? (typeOrOptions as { code?: unknown }).code : code;
  if (warningCode === "DEP0123") return;
  emitWarning(warning, ...rest);
}) as typeof process.emitWarning;

const processIo: Io = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  errIsTty: process.stderr.isTTY === true,
};

main(process.argv.slice(2), process.env, processIo).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`skillctl: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 3;
  },
);
