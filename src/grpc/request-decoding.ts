import path from "node:path";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";
import protobuf from "protobufjs";
import { errorMessage, InvalidArgumentError } from "../errors/index.js";

/**
 * A request whose bytes could not be decoded into our types (docs/security.md#request-decoding).
 * grpc-js answers INTERNAL when a deserializer throws, so the deserializer returns this instead and
 * the call's handler (unary-call.ts) answers INVALID_ARGUMENT with {@link UndecodableRequest.error}.
 */
export class UndecodableRequest {
  constructor(readonly error: InvalidArgumentError) {}
}

/** 64-bit integer types: the generated code decodes them into JavaScript numbers (forceLong=number). */
const LONG_TYPES: ReadonlySet<string> = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The service definition with every request deserializer made total: bytes the generated decoder
 * refuses (a malformed message, or a 64-bit integer outside ±(2^53 − 1), which a JavaScript number
 * cannot hold exactly) become an {@link UndecodableRequest} naming the field where it can.
 * `api` is the proto files' reflection ({@link loadApiTypes}), used only to explain a refusal.
 */
export function withTotalDecoding<D extends ServiceDefinition>(definition: D, api: protobuf.Root): D {
  const wrapped: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(definition) as Array<[string, MethodDefinition<unknown, unknown>]>) {
    wrapped[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer): unknown => {
        try {
          return method.requestDeserialize(bytes);
        } catch (error) {
          return new UndecodableRequest(explainRefusal(api, method.path, bytes, error));
        }
      },
    };
  }
  return wrapped as D;
}

/** Reflection of the proto files under `protoRoot` (google/protobuf imports come with protobufjs). */
export function loadApiTypes(protoRoot: string, files: readonly string[]): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (target.startsWith("google/protobuf/") ? target : path.join(protoRoot, target));
  root.loadSync([...files], { keepCase: true });
  root.resolveAll();
  return root;
}

/**
 * Why the generated decoder refused `bytes`: a 64-bit field out of range, named by its path
 * (`id`, `steps[0].candidate_id`), when the reflection decoder reads the same bytes; otherwise the
 * decoder's own reason (truncated message, bad wire type) under the message's name.
 */
function explainRefusal(api: protobuf.Root, methodPath: string, bytes: Buffer, error: unknown): InvalidArgumentError {
  const type = requestTypeOf(api, methodPath);
  const typeName = type?.fullName.replace(/^\./, "") ?? "the request message";
  if (type) {
    try {
      const decoded = type.toObject(type.decode(bytes), { longs: String });
      const outOfRange = firstUnsafeLong(type, decoded, "");
      if (outOfRange) {
        return new InvalidArgumentError(
          outOfRange.path,
          `${outOfRange.value} is out of range: 64-bit integers in requests must lie within ±${Number.MAX_SAFE_INTEGER} (2^53 − 1)`,
          { cause: error },
        );
      }
    } catch {
      // Not even the lenient reflection decoder reads it: the generated decoder's reason stands.
    }
  }
  return new InvalidArgumentError("request", `cannot be decoded as ${typeName}: ${errorMessage(error)}`, { cause: error });
}

function requestTypeOf(api: protobuf.Root, methodPath: string): protobuf.Type | undefined {
  const [, service, method] = /^\/([^/]+)\/([^/]+)$/.exec(methodPath) ?? [];
  if (service === undefined || method === undefined) return undefined;
  try {
    return api.lookupService(service).methods[method]?.resolvedRequestType ?? undefined;
  } catch {
    return undefined;
  }
}

/** The first 64-bit value (depth first, nested messages, repeated fields and maps included) beyond ±(2^53 − 1). */
function firstUnsafeLong(
  type: protobuf.Type,
  message: Record<string, unknown>,
  prefix: string,
): { path: string; value: string } | undefined {
  for (const field of type.fieldsArray) {
    const value = message[field.name];
    if (value === undefined || value === null) continue;
    const entries: Array<[string, unknown]> =
      field instanceof protobuf.MapField
        ? Object.entries(value as Record<string, unknown>).map(([key, v]) => [`${prefix}${field.name}[${key}]`, v])
        : field.repeated
          ? (value as unknown[]).map((v, i) => [`${prefix}${field.name}[${i}]`, v])
          : [[`${prefix}${field.name}`, value]];
    for (const [at, v] of entries) {
      if (LONG_TYPES.has(field.type) && isUnsafe(v)) return { path: at, value: String(v) };
      if (field.resolvedType instanceof protobuf.Type && typeof v === "object" && v !== null) {
        const inner = firstUnsafeLong(field.resolvedType, v as Record<string, unknown>, `${at}.`);
        if (inner) return inner;
      }
    }
  }
  return undefined;
}

function isUnsafe(value: unknown): boolean {
  if (typeof value !== "string" && typeof value !== "number") return false;
  try {
    const n = BigInt(value);
    return n > MAX_SAFE || n < -MAX_SAFE;
  } catch {
    return false;
  }
}
