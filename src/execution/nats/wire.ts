import { headers, type MsgHdrs } from "@nats-io/transport-node";
import { Ajv, type JSONSchemaType } from "ajv";
import type { InfrastructureFault } from "../../errors/index.js";
import type { ExecutionResult, RunOutputFile, SandboxRunRequest } from "../sandbox-runner.js";
import { AGENT_ID_PATTERN } from "../../identity/index.js";

/**
 * What crosses the bus (docs/execution-hosts.md#messages), as JSON. A run carries everything the
 * runner needs (code, dependency files, folder, payload, input files): no file system is shared with
 * the control plane, and a result carries the run's output files (docs/execution-hosts.md#files).
 * Bytes travel in base64. Bumping {@link WIRE_VERSION} lets a runner refuse messages it does not know.
 */
export const WIRE_VERSION = 1;

/** One run request. */
export interface RunMessage {
  readonly v: number;
  /** The control plane's id for the run: logs on both sides, and what a cancellation names. */
  readonly id: string;
  readonly code: string;
  readonly payload: string;
  readonly purpose: "test" | "invoke";
  readonly skillName: string;
  readonly files: ReadonlyArray<{ readonly name: string; readonly content: string }>;
  /** Folder files, their bytes in base64. */
  readonly folder: ReadonlyArray<{ readonly path: string; readonly content: string }>;
  /**
   * The caller's files for `/sandbox/in/`, their bytes in base64. Sent only when there are some: a
   * runner of an earlier release still takes every run without files (it refuses a field it does not know).
   */
  readonly inputFiles?: ReadonlyArray<{ readonly path: string; readonly content: string }> | null;
  /**
   * The run's secrets, name → value (docs/security.md#declaring-and-delivering): they travel in the
   * request, so a deployment over the bus uses its TLS (docs/execution-hosts.md#security). Sent only
   * when there are some, like `inputFiles`; a runner never logs them.
   */
  readonly secrets?: Readonly<Record<string, string>> | null;
  /**
   * The hosts the version declared (docs/security.md#egress): the runner's own egress gateway lets
   * the run reach them and nothing else. Sent only when there are some.
   */
  readonly networkAllow?: readonly string[] | null;
}

/** An output file as it crosses the bus: its bytes in base64. */
export type WireOutputFile = Omit<RunOutputFile, "content"> & { readonly content: string };

/** What a runner sends back on the run's reply subject, in this order: accepted, alive…, then result or failed. */
export type ReplyMessage =
  | { readonly type: "accepted"; readonly runner: string; readonly cancel: string; readonly heartbeatMs: number }
  | { readonly type: "alive" }
  | { readonly type: "result"; readonly result: ExecutionResult }
  | {
      readonly type: "failed";
      readonly kind: "unavailable" | "cancelled" | "refused";
      readonly fault?: InfrastructureFault;
      readonly message: string;
    };

/** A runner's state, published every heartbeat. */
export interface RunnerStatus {
  readonly v: number;
  readonly runner: string;
  /** Runs it takes at once. */
  readonly slots: number;
  /** Runs it executes now. */
  readonly busy: number;
  readonly warmIdle: number;
  readonly awaitingRemoval: number;
  readonly engineReady: boolean;
  readonly engineDetail: string;
  /** True from the start of its shutdown: it takes nothing more. */
  readonly stopping: boolean;
  /** How often it beats: the control plane counts it gone after a few silent beats. */
  readonly heartbeatMs: number;
  /** Its last word: it has stopped and leaves the bus (the control plane forgets it at once). */
  readonly gone?: boolean;
}

/**
 * The header naming the agent a run is for (docs/execution-hosts.md#messages), so that a runner's queue
 * shares its slots among agents as the control plane's does. A header, not a field of the run: a runner
 * of an earlier release refuses a run with a field it does not know, and ignores a header.
 */
export const AGENT_HEADER = "Skill-Engine-Agent";

/** The agent of a run whose message names none (sent by a control plane of an earlier release). */
export const UNNAMED_AGENT = "(unnamed)";

/** The headers of a run's message. */
export function runHeaders(request: SandboxRunRequest): MsgHdrs {
  const runHeaders = headers();
  runHeaders.set(AGENT_HEADER, request.agentId);
  return runHeaders;
}

export function encodeRun(id: string, request: SandboxRunRequest): Uint8Array {
  const message: RunMessage = {
    v: WIRE_VERSION,
    id,
    code: request.code,
    payload: request.payload,
    purpose: request.purpose,
    skillName: request.skillName,
    files: (request.files ?? []).map((file) => ({ name: file.name, content: file.content })),
    folder: (request.folder ?? []).map((file) => ({ path: file.path, content: file.content.toString("base64") })),
    ...(request.inputFiles && request.inputFiles.length > 0
      ? { inputFiles: request.inputFiles.map((file) => ({ path: file.path, content: file.content.toString("base64") })) }
      : {}),
    ...(request.secrets && Object.keys(request.secrets).length > 0 ? { secrets: request.secrets } : {}),
    ...(request.networkAllow && request.networkAllow.length > 0 ? { networkAllow: request.networkAllow } : {}),
  };
  return encodeJson(message);
}

/** Relative, plain segments: no leading "/", no "." or ".." segment, no empty segment, no NUL. */
const RELATIVE_PATH = "^(?!/)(?!.*//)(?!(.*/)?\\.\\.?(/|$))[^\\u0000]+$";

const runSchema: JSONSchemaType<RunMessage> = {
  type: "object",
  required: ["v", "id", "code", "payload", "purpose", "skillName", "files", "folder"],
  additionalProperties: false,
  properties: {
    v: { type: "integer", const: WIRE_VERSION },
    id: { type: "string", minLength: 1, maxLength: 200 },
    code: { type: "string" },
    payload: { type: "string" },
    purpose: { type: "string", enum: ["test", "invoke"] },
    skillName: { type: "string", minLength: 1, maxLength: 200 },
    files: {
      type: "array",
      items: {
        type: "object",
        required: ["name", "content"],
        additionalProperties: false,
        // The run directory's own rules (run-directories.ts), checked here so a bad message is refused before any work.
        properties: { name: { type: "string", pattern: "^[A-Za-z_][A-Za-z0-9_-]{0,63}\\.py$" }, content: { type: "string" } },
      },
    },
    folder: {
      type: "array",
      items: {
        type: "object",
        required: ["path", "content"],
        additionalProperties: false,
        properties: {
          // Relative, plain segments: no leading "/", no "." or ".." segment, no empty segment, no NUL.
          path: { type: "string", maxLength: 512, pattern: RELATIVE_PATH },
          content: { type: "string", contentEncoding: "base64" },
        },
      },
    },
    networkAllow: {
      type: "array",
      nullable: true,
      // The control plane's rules (docs/security.md#egress); the runner parses each entry again.
      items: { type: "string", maxLength: 260 },
      maxItems: 32,
    },
    secrets: {
      type: "object",
      nullable: true,
      required: [],
      // The control plane's rules (docs/security.md#declaring-and-delivering), checked again on the runner.
      propertyNames: { type: "string", pattern: "^[A-Z_][A-Z0-9_]{0,63}$" },
      additionalProperties: { type: "string", maxLength: 65536 },
      maxProperties: 32,
    },
    inputFiles: {
      type: "array",
      nullable: true,
      items: {
        type: "object",
        required: ["path", "content"],
        additionalProperties: false,
        // The shape only; the run directory's writer checks each name again (docs/files.md#input-files).
        properties: {
          path: { type: "string", maxLength: 1024, pattern: RELATIVE_PATH },
          content: { type: "string", contentEncoding: "base64" },
        },
      },
    },
  },
};
const validateRun = new Ajv({ allErrors: false }).compile(runSchema);

/**
 * The run request in `data` (its agent from `headers`), or the reason it is not one. The runner's own
 * checks (file names, folder paths, sizes) still apply when the run directory is written: this only
 * checks the shape.
 */
export function decodeRun(
  data: Uint8Array,
  headers?: MsgHdrs,
): { run: RunMessage; request: Omit<SandboxRunRequest, "signal"> } | { problem: string } {
  const parsed = parseJson(data);
  if (parsed === undefined) return { problem: "not JSON" };
  if (!validateRun(parsed)) {
    const first = validateRun.errors?.[0];
    return { problem: `${first?.instancePath || "the message"} ${first?.message ?? "is malformed"}` };
  }
  return {
    run: parsed,
    request: {
      code: parsed.code,
      payload: parsed.payload,
      purpose: parsed.purpose,
      skillName: parsed.skillName,
      agentId: agentOf(headers),
      ...(parsed.files.length > 0 ? { files: parsed.files } : {}),
      ...(parsed.folder.length > 0
        ? { folder: parsed.folder.map((file) => ({ path: file.path, content: Buffer.from(file.content, "base64") })) }
        : {}),
      ...(parsed.inputFiles && parsed.inputFiles.length > 0
        ? { inputFiles: parsed.inputFiles.map((file) => ({ path: file.path, content: Buffer.from(file.content, "base64") })) }
        : {}),
      ...(parsed.secrets && Object.keys(parsed.secrets).length > 0 ? { secrets: parsed.secrets } : {}),
      ...(parsed.networkAllow && parsed.networkAllow.length > 0 ? { networkAllow: parsed.networkAllow } : {}),
    },
  };
}

/** The agent a run's headers name; a missing or malformed name counts as one agent of its own, {@link UNNAMED_AGENT}. */
function agentOf(headers: MsgHdrs | undefined): string {
  const agentId = headers?.get(AGENT_HEADER) ?? "";
  return AGENT_ID_PATTERN.test(agentId) ? agentId : UNNAMED_AGENT;
}

/** A reply from a runner, or undefined when it is not one (a runner of another version, a stray message). */
export function decodeReply(data: Uint8Array): ReplyMessage | undefined {
  const parsed = parseJson(data) as Partial<Record<string, unknown>> | undefined;
  if (!parsed || typeof parsed !== "object") return undefined;
  switch (parsed.type) {
    case "accepted":
      return typeof parsed.runner === "string" && typeof parsed.cancel === "string" && isPositive(parsed.heartbeatMs)
        ? (parsed as ReplyMessage)
        : undefined;
    case "alive":
      return { type: "alive" };
    case "result":
      return isResult(parsed.result) ? { type: "result", result: resultFromWire(parsed.result) } : undefined;
    case "failed":
      return typeof parsed.message === "string" && ["unavailable", "cancelled", "refused"].includes(String(parsed.kind))
        ? (parsed as ReplyMessage)
        : undefined;
    default:
      return undefined;
  }
}

export function decodeStatus(data: Uint8Array): RunnerStatus | undefined {
  const parsed = parseJson(data) as Partial<RunnerStatus> | undefined;
  if (!parsed || typeof parsed !== "object" || parsed.v !== WIRE_VERSION || typeof parsed.runner !== "string") return undefined;
  const counts = [parsed.slots, parsed.busy, parsed.warmIdle, parsed.awaitingRemoval];
  if (!counts.every((n) => typeof n === "number" && Number.isInteger(n) && n >= 0)) return undefined;
  if (typeof parsed.engineReady !== "boolean" || typeof parsed.stopping !== "boolean" || !isPositive(parsed.heartbeatMs)) return undefined;
  return { ...(parsed as RunnerStatus), engineDetail: String(parsed.engineDetail ?? "") };
}

/** A reply as it crosses the bus: a result's output files in base64 (see {@link encodeResultReply} for one that must fit). */
export function encodeReply(message: ReplyMessage): Uint8Array {
  if (message.type !== "result") return encodeJson(message);
  return encodeJson({ type: "result", result: resultToWire(message.result) });
}

/** The result with its files' bytes in base64, as {@link encodeReply} sends it. */
export function resultToWire(result: ExecutionResult): WireResult {
  const { outputFiles, ...rest } = result;
  if (outputFiles === undefined) return rest;
  return { ...rest, outputFiles: outputFiles.map((file) => ({ ...file, content: file.content.toString("base64") })) };
}

/** An ExecutionResult with its output files' bytes in base64. */
export type WireResult = Omit<ExecutionResult, "outputFiles"> & { readonly outputFiles?: readonly WireOutputFile[] };

function resultFromWire(result: WireResult): ExecutionResult {
  const { outputFiles, ...rest } = result;
  if (outputFiles === undefined) return rest;
  return { ...rest, outputFiles: outputFiles.map((file) => ({ ...file, content: Buffer.from(file.content, "base64") })) };
}

export function encodeJson(value: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(value));
}

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

function isPositive(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value > 0;
}

function isResult(value: unknown): value is WireResult {
  if (!value || typeof value !== "object") return false;
  const r = value as Record<string, unknown>;
  if (r.outputFiles !== undefined && !(Array.isArray(r.outputFiles) && r.outputFiles.every(isWireOutputFile))) return false;
  if (r.fileWarnings !== undefined && !(Array.isArray(r.fileWarnings) && r.fileWarnings.every((w) => typeof w === "string"))) return false;
  if (r.networkWarnings !== undefined && !(Array.isArray(r.networkWarnings) && r.networkWarnings.every((w) => typeof w === "string"))) {
    return false;
  }
  return (
    typeof r.exitCode === "number" &&
    typeof r.stdout === "string" &&
    typeof r.stderr === "string" &&
    typeof r.durationMs === "number" &&
    typeof r.success === "boolean" &&
    typeof r.timedOut === "boolean" &&
    typeof r.oomKilled === "boolean" &&
    typeof r.stdoutTruncated === "boolean" &&
    typeof r.stderrTruncated === "boolean" &&
    typeof r.errorSummary === "string"
  );
}

function isWireOutputFile(value: unknown): value is WireOutputFile {
  if (!value || typeof value !== "object") return false;
  const f = value as Record<string, unknown>;
  return (
    typeof f.path === "string" &&
    typeof f.sizeBytes === "number" &&
    typeof f.sha256 === "string" &&
    typeof f.content === "string" &&
    typeof f.truncated === "boolean" &&
    typeof f.mediaType === "string"
  );
}
