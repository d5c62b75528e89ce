import { credentials, Metadata } from "@grpc/grpc-js";
import type { UnaryMethod } from "../../src/cli/skillctl/client.js";
import { type AddLessonRequest, type AddLessonResponse, PlaybookClient } from "../../src/gen/skillengine/v1/playbook.js";

/** Promise-returning wrappers over the generated Playbook client. */
export interface TestPlaybookClient {
  raw: PlaybookClient;
  /** Any RPC: `playbook.call(playbook.raw.listLessons, {...})`. */
  call<Req, Res>(method: UnaryMethod<Req, Res>, request: Req, deadlineMs?: number): Promise<Res>;
  /** AddLesson with sensible defaults for every field not given. */
  add(request: Partial<AddLessonRequest> & { trigger: string; correctPattern: string }): Promise<AddLessonResponse>;
  close(): void;
}

/** A Playbook client of the engine on `port`; with `token`, every call carries `authorization: Bearer <token>`. */
export function connectPlaybook(port: number, token?: string): TestPlaybookClient {
  const raw = new PlaybookClient(`127.0.0.1:${port}`, credentials.createInsecure());
  const metadata = (): Metadata => {
    const m = new Metadata();
    if (token !== undefined) m.set("authorization", `Bearer ${token}`);
    return m;
  };
  const call = <Req, Res>(method: UnaryMethod<Req, Res>, request: Req, deadlineMs = 60_000): Promise<Res> =>
    new Promise<Res>((resolve, reject) => {
      method.call(raw, request, metadata(), { deadline: Date.now() + deadlineMs }, (error, response) =>
        error ? reject(error) : resolve(response),
      );
    });
  return {
    raw,
    call,
    add: (request) =>
      call<AddLessonRequest, AddLessonResponse>(raw.addLesson, {
        antiPattern: "",
        domains: ["coding"],
        confidence: 0.5,
        source: "self-play",
        sourceChallengeHash: "challenge-1",
        challengeText: "",
        visibility: 0,
        ...request,
      }),
    close: () => raw.close(),
  };
}
