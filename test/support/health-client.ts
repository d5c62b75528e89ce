import {
  type ChannelCredentials,
  type Client,
  type ClientReadableStream,
  credentials,
  makeGenericClientConstructor,
  type ServiceError,
} from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";

/** A grpc.health.v1.Health client with promise-returning Check and a recording Watch. */
export interface HealthProbe {
  check(service?: string): Promise<string>;
  /** Opens a Watch stream; `statuses` collects every status it delivers, `ended` its end. */
  watch(service?: string): HealthWatch;
  close(): void;
}

export interface HealthWatch {
  readonly statuses: string[];
  /** The error (or undefined for a clean end) the stream ended with, once it has ended. */
  readonly ended: Promise<ServiceError | undefined>;
  cancel(): void;
}

interface RawHealthClient extends Client {
  check(request: { service: string }, callback: (error: ServiceError | null, response: { status: string }) => void): void;
  watch(request: { service: string }): ClientReadableStream<{ status: string }>;
}

export const SKILL_ENGINE_SERVICE = "skillengine.v1.SkillEngine";

export function healthProbe(port: number, channelCredentials: ChannelCredentials = credentials.createInsecure()): HealthProbe {
  const Health = makeGenericClientConstructor(healthService, "Health");
  const raw = new Health(`127.0.0.1:${port}`, channelCredentials) as unknown as RawHealthClient;
  return {
    check: (service = SKILL_ENGINE_SERVICE) =>
      new Promise<string>((resolve, reject) =>
        raw.check({ service }, (error, response) => (error ? reject(error) : resolve(response.status))),
      ),
    watch(service = SKILL_ENGINE_SERVICE) {
      const statuses: string[] = [];
      const stream = raw.watch({ service });
      stream.on("data", (message: { status: string }) => statuses.push(message.status));
      const ended = new Promise<ServiceError | undefined>((resolve) => {
        stream.on("error", (error: ServiceError) => resolve(error));
        stream.on("end", () => resolve(undefined));
      });
      return { statuses, ended, cancel: () => stream.cancel() };
    },
    close: () => raw.close(),
  };
}
