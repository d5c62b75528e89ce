import { fileURLToPath } from "node:url";
import path from "node:path";
import { Client, credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import protobuf from "protobufjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

/**
 * docs/security.md#request-decoding: bytes that cannot be decoded into our types answer
 * INVALID_ARGUMENT, never INTERNAL. The 64-bit fields are found by walking the proto files (not the
 * generated code), so a field added later is covered without touching this test.
 */

const PROTO_ROOT = fileURLToPath(new URL("../proto", import.meta.url));
const SERVICES = [
  { file: "skillengine/v1/skill_engine.proto", name: "skillengine.v1.SkillEngine" },
  { file: "skillengine/v1/playbook.proto", name: "skillengine.v1.Playbook" },
];
const U64_MAX = 2n ** 64n - 1n;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
/** Values sent in each 64-bit field: the type's extremes, and the first integer a JavaScript number cannot hold exactly. */
const EXTREMES: Record<string, readonly bigint[]> = {
  uint64: [U64_MAX, 2n ** 53n + 1n],
  fixed64: [U64_MAX],
  int64: [I64_MIN, I64_MAX],
  sint64: [I64_MIN, I64_MAX],
  sfixed64: [I64_MIN, I64_MAX],
};

interface LongField {
  readonly method: string;
  /** Field path in proto names, e.g. `id` or `steps.candidate_id`. */
  readonly path: string;
  /** The request's bytes with `value` in that field (and nothing else set). */
  encode(value: bigint): Buffer;
  readonly type: string;
}

describe("request decoding through gRPC: never INTERNAL", () => {
  let engine: TestEngine;
  let raw: Client;
  const api = new protobuf.Root();
  api.resolvePath = (_origin, target) => (target.startsWith("google/protobuf/") ? target : path.join(PROTO_ROOT, target));
  api.loadSync(
    SERVICES.map((s) => s.file),
    { keepCase: true },
  );
  api.resolveAll();

  const send = (method: string, bytes: Buffer): Promise<ServiceError | undefined> =>
    new Promise((resolve) => {
      raw.makeUnaryRequest(
        method,
        (b: Buffer) => b,
        (b: Buffer) => b,
        bytes,
        new Metadata(),
        { deadline: Date.now() + 60_000 },
        (error) => resolve(error ?? undefined),
      );
    });

  beforeAll(async () => {
    engine = await startTestEngine();
    raw = new Client(`127.0.0.1:${engine.app.port}`, credentials.createInsecure());
  });
  afterAll(async () => {
    raw?.close();
    await engine?.dispose();
  });

  const longFields = SERVICES.flatMap(({ name }) =>
    Object.values(api.lookupService(name).methods).flatMap((method) =>
      longFieldsOf(method.resolvedRequestType as protobuf.Type, []).map((f) => ({ ...f, method: `/${name}/${method.name}` })),
    ),
  );

  it("finds the 64-bit fields of the requests (the candidate ids at least)", () => {
    const found = longFields.map((f) => `${f.method} ${f.path}`);
    expect(found).toContain("/skillengine.v1.SkillEngine/PromoteCandidate id");
    expect(found).toContain("/skillengine.v1.SkillEngine/DismissCandidate id");
  });

  it("answers every extreme 64-bit value in every request field without INTERNAL", async () => {
    const answers: string[] = [];
    for (const field of longFields) {
      for (const value of EXTREMES[field.type] ?? []) {
        const error = await send(field.method, field.encode(value));
        const code = error?.code ?? status.OK;
        answers.push(`${field.method} ${field.path}=${value}: ${status[code]}`);
        expect([status.INTERNAL, status.UNKNOWN], `${field.method} ${field.path}=${value}: ${error?.details}`).not.toContain(code);
      }
    }
    expect(answers.length).toBeGreaterThanOrEqual(4);
  });

  it("names the field of an id beyond 2^53 − 1, and answers NOT_FOUND for an unknown id within range", async () => {
    const promote = longFields.find((f) => f.method.endsWith("/PromoteCandidate") && f.path === "id");
    const error = await send(promote?.method ?? "", promote?.encode(U64_MAX) ?? Buffer.alloc(0));
    expect(error?.code).toBe(status.INVALID_ARGUMENT);
    expect(error?.details).toBe(
      "id: 18446744073709551615 is out of range: 64-bit integers in requests must lie within ±9007199254740991 (2^53 − 1)",
    );
    const unknown = await rpcError(engine.client.call(engine.client.raw.dismissCandidate, { id: Number.MAX_SAFE_INTEGER }));
    expect(unknown.code).toBe(status.NOT_FOUND);
  });

  it("answers INVALID_ARGUMENT to bytes that are no message at all, naming the message", async () => {
    const garbage: Array<[string, Buffer]> = [
      ["a varint that never ends", Buffer.alloc(11, 0xff)],
      ["wire type 7", Buffer.from([0x0f])],
      ["a string longer than the message", Buffer.from([0x0a, 0x05, 0x61])],
    ];
    for (const method of [
      "/skillengine.v1.SkillEngine/RouteSkills",
      "/skillengine.v1.SkillEngine/RegisterSkill",
      "/skillengine.v1.Playbook/GetPlaybookContext",
    ]) {
      for (const [what, bytes] of garbage) {
        const error = await send(method, bytes);
        expect(error?.code, `${method}: ${what}`).toBe(status.INVALID_ARGUMENT);
        expect(error?.details, `${method}: ${what}`).toMatch(/^request: cannot be decoded as skillengine\.v1\.\w+Request: /);
      }
    }
  });
});

/** Every 64-bit field reachable from `type` (nested messages, repeated fields, map values), each with an encoder of a request that sets it. */
function longFieldsOf(type: protobuf.Type, seen: readonly string[]): Array<Omit<LongField, "method">> {
  if (seen.includes(type.fullName)) return []; // a recursive message: one level is enough
  const found: Array<Omit<LongField, "method">> = [];
  for (const field of type.fieldsArray) {
    if (field.type in EXTREMES) {
      found.push({ path: field.name, type: field.type, encode: (value) => wrapIn(field, scalar(field.type, value)) });
    } else if (field.resolvedType instanceof protobuf.Type) {
      for (const inner of longFieldsOf(field.resolvedType, [...seen, type.fullName])) {
        found.push({
          ...inner,
          path: `${field.name}.${inner.path}`,
          encode: (value) => wrapIn(field, lengthDelimited(inner.encode(value))),
        });
      }
    }
  }
  return found;
}

/**
 * `payload` (a wire value without its tag: a varint, 8 fixed bytes, or a length-delimited message)
 * as the field's one occurrence; a map field's value goes into an entry whose key is left at its
 * default (empty or zero).
 */
function wrapIn(field: protobuf.Field, payload: { wireType: number; bytes: Buffer }): Buffer {
  if (field instanceof protobuf.MapField) {
    const entry = Buffer.concat([tag(2, payload.wireType), payload.bytes]);
    return Buffer.concat([tag(field.id, 2), lengthDelimited(entry).bytes]);
  }
  return Buffer.concat([tag(field.id, payload.wireType), payload.bytes]);
}

function scalar(type: string, value: bigint): { wireType: number; bytes: Buffer } {
  const twos = BigInt.asUintN(64, value);
  if (type === "fixed64" || type === "sfixed64") {
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64LE(twos);
    return { wireType: 1, bytes };
  }
  const zigzag = type === "sint64" ? BigInt.asUintN(64, (value << 1n) ^ (value >> 63n)) : twos;
  return { wireType: 0, bytes: varint(zigzag) };
}

function lengthDelimited(message: Buffer): { wireType: number; bytes: Buffer } {
  return { wireType: 2, bytes: Buffer.concat([varint(BigInt(message.length)), message]) };
}

function tag(fieldNumber: number, wireType: number): Buffer {
  return varint(BigInt((fieldNumber << 3) | wireType));
}

function varint(value: bigint): Buffer {
  const bytes: number[] = [];
  let rest = value;
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    bytes.push(rest > 0n ? low | 0x80 : low);
  } while (rest > 0n);
  return Buffer.from(bytes);
}
