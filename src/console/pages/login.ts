import { markup } from "../html.js";
import { page, type Viewer } from "../layout.js";

/** The sign-in form: a bearer token, as the RPCs take it, exchanged for a session cookie. */
export function loginPage(loginCsrf: string, problem = ""): string {
  const body = markup`${problem ? markup`<p class="error" id="login-error">${problem}</p>` : ""}
    <form method="post" action="/console/login" id="login-form">
      <input type="hidden" name="csrf" value="${loginCsrf}" />
      <p>
        <label>Bearer token <input type="password" name="token" id="token" autocomplete="off" size="50" required /></label>
      </p>
      <p><button type="submit" id="sign-in">Sign in</button></p>
      <p>
        <small
          >The token is one of SKILL_ENGINE_TOKENS_FILE / SKILL_ENGINE_TOKENS, the same one your agent sends as “authorization: Bearer …”.
          It stays on the server; the browser keeps only a session cookie.</small
        >
      </p>
    </form>`;
  return page("Sign in", "none", undefined, body);
}

/**
 * A failure, in words, with the way back: the layout's navigation (with who is signed in, when the
 * request had a session) and a link to the library, or to sign in.
 */
export function errorPage(status: number, message: string, viewer: Viewer | undefined): string {
  const signedIn = viewer !== undefined;
  const body = markup`<p class="error" id="error" data-status="${status}">${message}</p>
    <p><a href="${signedIn ? "/console/library" : "/console/login"}">${signedIn ? "Back to the library" : "Sign in"}</a></p>`;
  return page(`Error ${status}`, "none", viewer, body, { navigation: true });
}
