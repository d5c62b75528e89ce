import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { ControlPlane } from "../control/index.js";
import type { SkillSources } from "../sources/index.js";
import { UnauthenticatedError } from "../errors/index.js";
import { type Authenticator, type Caller, LOCAL_CALLER } from "../identity/index.js";
import type { LearningService } from "../learning/index.js";
import type { HostAllowList } from "../observability/index.js";
import type { PlaybookService } from "../playbook/index.js";
import { loadAssets, type StaticAsset } from "./assets.js";
import { httpErrorOf, isLoopback } from "./http-status.js";
import type { Viewer } from "./layout.js";
import {
  CANDIDATE_ACTIONS,
  type CandidateAction,
  candidateConfirmPage,
  candidatesPage,
  catalogPage,
  confirmPage,
  diffPage,
  errorPage,
  libraryPage,
  loginPage,
  parseLibraryQuery,
  playbookPage,
  pruneResultPage,
  runAction,
  runCandidateAction,
  SKILL_ACTIONS,
  type SkillAction,
  skillHref,
  skillPage,
  sourcesPage,
} from "./pages/index.js";
import { type ConsoleSession, parseCookies, randomToken, SESSION_COOKIE, SessionStore, tokensMatch } from "./sessions.js";

export interface ConsoleOptions {
  /** The control plane's use cases: the same ones the RPCs call. */
  readonly control: ControlPlane;
  readonly playbook: PlaybookService;
  /** Candidates, promotion and dismissal: the use cases of ListCandidates, PromoteCandidate, DismissCandidate. */
  readonly learning: LearningService;
  /** The skill folders: ListSkillSources' use case. */
  readonly sources: SkillSources;
  /** The bearer tokens of the gRPC API; with none configured the console is the local agent's, on loopback only. */
  readonly authenticator: Authenticator;
  /**
   * The host names the port answers to (SKILL_ENGINE_HTTP_ALLOWED_HOSTS). The port refuses any other
   * `Host` before the console sees the request; the console refuses a form whose `Origin` names another
   * (docs/console.md#csrf-and-confirmation).
   */
  readonly allowedHosts: HostAllowList;
  readonly logger: Logger;
  /** A session unused this long is signed out. @default 8 hours */
  readonly sessionIdleMs?: number;
}

/** The console's request handler, mounted on the metrics port's HTTP server under /console. */
export interface OperatorConsole {
  /** True when the request is the console's (its path starts with /console); the answer is then under way. */
  handle(request: IncomingMessage, response: ServerResponse): boolean;
}

const LOGIN_COOKIE = "se_console_login";
const MAX_SESSIONS = 1_000;
const MAX_FORM_BYTES = 16 * 1024;
const DEFAULT_IDLE_MS = 8 * 60 * 60 * 1000;

/** Every answer: nothing from elsewhere, no framing, no caching, no referrer (docs/console.md#security). */
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
} as const;

/** Builds the console (docs/console.md); loads its static files once. */
export async function createConsole(options: ConsoleOptions): Promise<OperatorConsole> {
  const assets = await loadAssets();
  const sessions = new SessionStore(options.sessionIdleMs ?? DEFAULT_IDLE_MS, MAX_SESSIONS);
  const handler = new ConsoleHandler(options, assets, sessions);
  return {
    handle(request, response) {
      const path = (request.url ?? "").split("?")[0] ?? "";
      if (path !== "/console" && !path.startsWith("/console/")) return false;
      handler.serve(request, response).catch((error: unknown) => {
        options.logger.error({ err: error, path }, "console request failed");
        if (!response.headersSent) send(response, 500, errorPage(500, "internal error: the service log has the details", undefined));
        else response.destroy();
      });
      return true;
    },
  };
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

class ConsoleHandler {
  constructor(
    private readonly options: ConsoleOptions,
    private readonly assets: ReadonlyMap<string, StaticAsset>,
    private readonly sessions: SessionStore,
  ) {}

  private get local(): boolean {
    return !this.options.authenticator.enabled;
  }

  async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://console.invalid");
    const path = url.pathname;
    const method = request.method ?? "GET";
    if (this.local && !isLoopback(request.socket.remoteAddress)) {
      // Without tokens everyone is the local agent, an admin: only this machine may be that.
      send(response, 403, errorPage(403, "no tokens are configured, so the console answers only on loopback (127.0.0.1, ::1)", undefined));
      return;
    }
    if (method === "GET" && path.startsWith("/console/static/")) {
      const asset = this.assets.get(path.slice("/console/static/".length));
      if (!asset) return send(response, 404, errorPage(404, "no such file", undefined));
      response.writeHead(200, { ...SECURITY_HEADERS, "cache-control": "max-age=3600", "content-type": asset.contentType }).end(asset.body);
      return;
    }
    if (path === "/console/login") return this.login(request, response, method);

    const cookies = parseCookies(request.headers.cookie);
    let session = this.sessions.get(cookies.get(SESSION_COOKIE));
    if (!session && this.local) {
      session = this.sessions.create(undefined);
      response.setHeader("set-cookie", sessionCookie(session.id));
    }
    if (!session) {
      if (method === "GET") return redirect(response, "/console/login");
      return send(response, 401, errorPage(401, "sign in first: the session is missing or has expired", undefined));
    }
    let caller: Caller;
    try {
      // Re-checked on every request, so a token revoked (SIGHUP reload) signs its sessions out.
      caller = this.local ? LOCAL_CALLER : this.options.authenticator.authenticate(`Bearer ${session.token ?? ""}`);
    } catch (error) {
      if (!(error instanceof UnauthenticatedError)) throw error;
      this.sessions.delete(session.id);
      if (method === "GET") return redirect(response, "/console/login");
      return send(response, 401, errorPage(401, "your token is no longer valid: sign in again", undefined));
    }
    const viewer: Viewer = { caller, csrf: session.csrf, local: this.local };
    try {
      if (method === "POST") {
        const form = await readForm(request);
        this.checkForm(request, session, form);
        await this.post(response, viewer, session, path, form);
        return;
      }
      if (method !== "GET") throw new HttpError(405, `${method} is not served here: the console answers GET and POST`);
      await this.get(response, viewer, path, url.searchParams);
    } catch (error) {
      if (error instanceof HttpError) return send(response, error.status, errorPage(error.status, error.message, viewer));
      const { status, message, unexpected } = httpErrorOf(error);
      if (unexpected) this.options.logger.error({ err: error, path, agent: caller.agentId }, "console request failed");
      send(response, status, errorPage(status, message, viewer));
    }
  }

  private async get(response: ServerResponse, viewer: Viewer, path: string, params: URLSearchParams): Promise<void> {
    const { control, playbook } = this.options;
    if (path === "/console" || path === "/console/") return redirect(response, "/console/library");
    if (path === "/console/library") return send(response, 200, libraryPage(control, viewer, parseLibraryQuery(params)));
    if (path === "/console/catalog") return send(response, 200, catalogPage(control.queries, this.options.sources, viewer));
    if (path === "/console/playbook") return send(response, 200, playbookPage(playbook, viewer));
    if (path === "/console/sources") return send(response, 200, sourcesPage(this.options.sources, viewer));
    if (path === "/console/candidates") {
      const done = params.get("done");
      const finished =
        done !== null && (CANDIDATE_ACTIONS as readonly string[]).includes(done)
          ? { action: done as CandidateAction, id: idParam(params) }
          : undefined;
      return send(response, 200, candidatesPage(this.options.learning, viewer, finished));
    }
    if (path === "/console/candidates/confirm") {
      const action = candidateActionParam(params.get("action"));
      return send(response, 200, candidateConfirmPage(this.options.learning, viewer, idParam(params), action));
    }
    const skill = skillRoute(path);
    if (skill?.rest === "") {
      const done = params.get("done");
      const action = done !== null && (SKILL_ACTIONS as readonly string[]).includes(done) ? (done as SkillAction) : undefined;
      return send(response, 200, await skillPage(control, viewer, skill.name, action));
    }
    if (skill?.rest === "/diff") {
      return send(
        response,
        200,
        await diffPage(control.queries, viewer, skill.name, versionParam(params, "from"), versionParam(params, "to")),
      );
    }
    if (skill?.rest === "/confirm") {
      const action = actionParam(params.get("action"));
      const version = action === "rollback" ? versionParam(params, "version") : undefined;
      return send(response, 200, await confirmPage(control.queries, viewer, skill.name, action, version));
    }
    throw new HttpError(
      404,
      `nothing at ${path}: the console has /console/library, /console/catalog, /console/sources, /console/candidates and /console/playbook`,
    );
  }

  private async post(
    response: ServerResponse,
    viewer: Viewer,
    session: ConsoleSession,
    path: string,
    form: URLSearchParams,
  ): Promise<void> {
    if (path === "/console/logout") {
      this.sessions.delete(session.id);
      response.setHeader("set-cookie", `${SESSION_COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0`);
      return redirect(response, this.local ? "/console/library" : "/console/login");
    }
    if (path === "/console/playbook/prune") {
      const dryRun = form.get("dry_run") !== "no";
      if (!dryRun) requireConfirmation(form);
      return send(response, 200, await pruneResultPage(this.options.playbook, viewer, dryRun));
    }
    if (path === "/console/candidates/actions") {
      requireConfirmation(form);
      const action = candidateActionParam(form.get("action"));
      const id = idParam(form);
      const overrides = { name: form.get("name") ?? "", description: form.get("description") ?? "" };
      await runCandidateAction(this.options.learning, viewer, id, action, overrides);
      this.options.logger.info({ candidate: id, action, agent: viewer.caller.agentId }, "console candidate action");
      return redirect(response, `/console/candidates?done=${action}&id=${id}`);
    }
    const skill = skillRoute(path);
    if (skill?.rest === "/actions") {
      requireConfirmation(form);
      const action = actionParam(form.get("action"));
      const version = action === "rollback" ? versionParam(form, "version") : undefined;
      await runAction(this.options.control, viewer, skill.name, action, version);
      this.options.logger.info({ skill: skill.name, action, version, agent: viewer.caller.agentId }, "console action");
      // Post/redirect/get: a reload of the result does not repeat the action.
      return redirect(response, `${skillHref(skill.name)}?done=${action}`);
    }
    throw new HttpError(404, `nothing to post to at ${path}`);
  }

  private async login(request: IncomingMessage, response: ServerResponse, method: string): Promise<void> {
    if (this.local) return redirect(response, "/console/library");
    if (method === "GET") return this.loginForm(response, "", 200);
    if (method !== "POST") return send(response, 405, errorPage(405, "sign in with the form", undefined));
    const form = await readForm(request).catch(() => new URLSearchParams());
    // Login CSRF: a double-submit token, the cookie and the field must match.
    if (!tokensMatch(parseCookies(request.headers.cookie).get(LOGIN_COOKIE) ?? "", form.get("csrf") ?? undefined)) {
      return this.loginForm(response, "the sign-in form expired: try again", 403);
    }
    const token = (form.get("token") ?? "").trim();
    let caller: Caller;
    try {
      caller = this.options.authenticator.authenticate(`Bearer ${token}`);
    } catch (error) {
      if (!(error instanceof UnauthenticatedError)) throw error;
      this.options.logger.warn({ remote: request.socket.remoteAddress }, "console sign-in refused");
      return this.loginForm(response, "that token is not valid (unknown or revoked)", 401);
    }
    const session = this.sessions.create(token);
    this.options.logger.info({ agent: caller.agentId, admin: caller.admin }, "console sign-in");
    response.setHeader("set-cookie", [
      sessionCookie(session.id),
      `${LOGIN_COOKIE}=; Path=/console/login; HttpOnly; SameSite=Strict; Max-Age=0`,
    ]);
    redirect(response, "/console/library");
  }

  private loginForm(response: ServerResponse, problem: string, status: number): void {
    const token = randomToken();
    response.setHeader("set-cookie", `${LOGIN_COOKIE}=${token}; Path=/console/login; HttpOnly; SameSite=Strict`);
    send(response, status, loginPage(token, problem));
  }

  /**
   * Every POST: the session's synchronizer token, and, when the browser says where the form came from,
   * one of the configured hosts. Never the request's own `Host`: under DNS rebinding the attacker's
   * page names its own host in both. "null" is what a browser sends for the console's own forms
   * (its pages are served with `Referrer-Policy: no-referrer`), so it stands on the token alone.
   */
  private checkForm(request: IncomingMessage, session: ConsoleSession, form: URLSearchParams): void {
    if (!tokensMatch(session.csrf, form.get("csrf") ?? undefined)) {
      throw new HttpError(403, "the form's CSRF token is missing or wrong: reload the page and try again");
    }
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== "null" && !this.options.allowedHosts.allowsOrigin(origin)) {
      throw new HttpError(
        403,
        `a form from ${origin} may not act here: the console takes forms from ${this.options.allowedHosts.describe()}`,
      );
    }
  }
}

function skillRoute(path: string): { name: string; rest: string } | undefined {
  const match = /^\/console\/skills\/([^/]+)(\/[a-z]+)?$/.exec(path);
  if (!match?.[1]) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(match[1]);
  } catch {
    return undefined;
  }
  return { name, rest: match[2] ?? "" };
}

function actionParam(value: string | null): SkillAction {
  if (value !== null && (SKILL_ACTIONS as readonly string[]).includes(value)) return value as SkillAction;
  throw new HttpError(400, `action: must be one of ${SKILL_ACTIONS.join(", ")}`);
}

function candidateActionParam(value: string | null): CandidateAction {
  if (value !== null && (CANDIDATE_ACTIONS as readonly string[]).includes(value)) return value as CandidateAction;
  throw new HttpError(400, `action: must be one of ${CANDIDATE_ACTIONS.join(", ")}`);
}

function idParam(params: URLSearchParams): number {
  const value = Number(params.get("id") ?? "");
  if (!Number.isSafeInteger(value) || value < 1) throw new HttpError(400, "id: must be a candidate id ≥ 1 (from the Candidates page)");
  return value;
}

function versionParam(params: URLSearchParams, name: string): number {
  const value = Number(params.get(name) ?? "");
  if (!Number.isInteger(value) || value < 1) throw new HttpError(400, `${name}: must be a version number ≥ 1`);
  return value;
}

function requireConfirmation(form: URLSearchParams): void {
  if (form.get("confirmed") !== "yes")
    throw new HttpError(400, "this action needs its confirmation step: use the button on the confirmation page");
}

function sessionCookie(id: string): string {
  // A session cookie (no Max-Age): it ends with the browser, and idle sessions end on the server.
  return `${SESSION_COOKIE}=${id}; Path=/console; HttpOnly; SameSite=Strict`;
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  const type = request.headers["content-type"] ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded"))
    throw new HttpError(415, "forms are sent as application/x-www-form-urlencoded");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new HttpError(413, "the form is too large");
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function send(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8" }).end(body);
}

function redirect(response: ServerResponse, location: string): void {
  response.writeHead(303, { ...SECURITY_HEADERS, location }).end();
}
