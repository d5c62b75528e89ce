import { type CallOptions, credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { SkillEngineClient } from "../../gen/skillengine/v1/skill_engine.js";

export type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => unknown;

/** The generated client with one promise-returning call helper that always sets a deadline. */
export interface Rpc {
  readonly raw: SkillEngineClient;
  call<Req, Res>(method: UnaryMethod<Req, Res>, request: Req): Promise<Res>;
  close(): void;
}

export function connect(address: string, timeoutMs: number): Rpc {
  const raw = new SkillEngineClient(address, credentials.createInsecure());
  return {
    raw,
    call: <Req, Res>(method: UnaryMethod<Req, Res>, request: Req): Promise<Res> =>
      new Promise<Res>((resolve, reject) => {
        method.call(raw, request, new Metadata(), { deadline: Date.now() + timeoutMs }, (error, response) =>
          error ? reject(error) : resolve(response),
        );
      }),
    close: () => raw.close(),
  };
}

export function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === "number" && "metadata" in error;
}

/** `NOT_FOUND` for 5, and so on. */
export function codeName(code: number): string {
  return (status as unknown as Record<number, string | undefined>)[code] ?? `CODE_${code}`;
}

/** `NOT_FOUND: skill "x" not found` — the code name and the server's details. */
export function describeRpcError(error: ServiceError): string {
  return `${codeName(error.code)}: ${(error.details || error.message).trim()}`;
}
