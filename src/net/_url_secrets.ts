/**
 * The secrets a URL carries, apart from the templates: the config's checks,
 * which every run loads at its start, read them without loading
 * `template.ts` (which re-exports {@linkcode urlSecrets}).
 *
 * @module
 */

/**
 * Every `${NAME}` in a text, its NAME captured: an environment variable
 * `fillEnv` puts in a header value. Global, so for `replace` and
 * `matchAll` alone, which leave no `lastIndex` behind.
 */
export const ENV_VARIABLES = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The name of a query parameter that carries a credential, as some APIs
 * take their key (Google's `key`, Azure Functions' `code`, an Azure SAS
 * URL's `sig`, OAuth's `access_token`) and signed URLs their signature
 * (S3's `X-Amz-Signature`, `X-Amz-Credential` and `X-Amz-Security-Token`,
 * Cloud Storage's `X-Goog-…`); a SAS URL's `sv`, `se` or `sp` (a version, a
 * date, the rights) are no secret, and hidden would turn each such date
 * into `***`.
 */
export const CREDENTIAL_NAMES =
  "key|(?:x[-_]?)?api[-_]?key|apikey|(?:access|refresh|id|auth|api|session|security)[-_]?token|token|jwt|auth|sig|signature|secret|password|passwd|code|client[-_]?secret|private[-_]?key|subscription[-_]?key|awsaccesskeyid|x-amz-(?:signature|credential|security-token)|x-goog-(?:signature|credential)";
const CREDENTIAL_NAME = new RegExp(`^(?:${CREDENTIAL_NAMES})$`, "i");

/**
 * Whether a header's name says it carries a credential (`authorization`,
 * `x-api-key`, `apikey`, `x-auth-token`, `cookie`, `x-jwt`), read by its
 * words between "-" or "_": one that is or ends in `key`, `token`,
 * `secret`, a password, `cookie`, `signature` or `credential(s)`, or is
 * `auth`, `authorization`, `authentication`, `jwt` or `sig`. A word that
 * only holds one (`x-keyboard-layout`, `x-author`) says nothing of the
 * kind, nor does `session` alone: a gateway's tracing headers
 * (`Helicone-Session-Name`, `x-session-id`) name a session, and hidden,
 * a model's answer that said their value was not kept; a session's
 * credential is a `cookie` or an `x-session-token`.
 *
 * @param name The header's name, in any case.
 * @returns Whether its value is a credential's.
 *
 * @example
 * ```ts
 * import { credentialHeader } from "./_url_secrets.ts";
 * if (!credentialHeader("X-Api-Key")) throw new Error();
 * if (credentialHeader("x-keyboard-layout")) throw new Error();
 * if (credentialHeader("x-session-id")) throw new Error();
 * ```
 */
export function credentialHeader(name: string): boolean {
  return name.toLowerCase().split(/[-_]/).some((word) =>
    CREDENTIAL_WORD.test(word)
  );
}

const CREDENTIAL_WORD =
  /^(?:[a-z]*(?:key|keys|token|secret|password|passwd|pwd|cookie|signature|credentials?)|auth|authn|authz|authorization|authentication|jwt|sig)$/;

/**
 * The text a credential's header writes out in the config rather than
 * reads from a `${NAME}` (`authorization: "Bearer sk-…"`, `x-api-key:
 * "lit-…"`): each part between references, a leading scheme (`Bearer`,
 * `Basic`, `Token`, `Key`, `ApiKey`) and the spaces around it left out, unless it is a plain
 * word (`x-auth-mode: oauth`; see `WORD`) or shorter than 4 characters.
 *
 * @param name The header's name.
 * @param value Its value, as the config writes it.
 * @returns The values to hide, none for a header that is no credential's.
 *
 * @example
 * ```ts
 * import { writtenCredentials } from "./_url_secrets.ts";
 * const found = writtenCredentials("Authorization", "Bearer sk-lit-42");
 * if (found[0] !== "sk-lit-42") throw new Error();
 * ```
 */
export function writtenCredentials(name: string, value: string): string[] {
  if (!credentialHeader(name)) return [];
  const found: string[] = [];
  for (const part of value.split(ENV_VARIABLES_SPLIT)) {
    const text = part.replace(AUTH_SCHEME, "").trim();
    if (text.length >= 4 && !WORD.test(text)) found.push(text);
  }
  return found;
}

/**
 * A credential's leading scheme and the spaces after it (`Bearer `,
 * `Basic `, `Token `, fal.ai's `Key `, Elasticsearch's `ApiKey `): it is
 * shown, and what follows it is the secret, as a server's message says it.
 */
export const AUTH_SCHEME = /^\s*(?:Bearer|Basic|Token|Key|Api-?Key)\s+/i;

/** A `${NAME}` reference, to split a header's value at (no capture). */
const ENV_VARIABLES_SPLIT = /\$\{[A-Za-z_][A-Za-z0-9_]*\}/;

/**
 * A query value that is a setting, not a key: a word of fewer than 16
 * letters, all lower case or all upper case (`?code=python`, `?auth=true`,
 * `?key=EN`). No key, signature or token an API issues is that (they mix
 * cases, digits and signs, or run longer), and hidden, each such word
 * became `***` in every message and a model's answer that said it was not
 * kept. A value named a password or a secret is one whatever it is.
 */
const WORD = /^(?:[a-z]{1,15}|[A-Z]{1,15})$/;
const ALWAYS_SECRET = /^(?:password|passwd|secret|client[-_]?secret)$/i;

/**
 * Whether an environment variable's name looks like a key pasted in its
 * place (`api_key_env: gsk_…`, `${hf_…}`, a hex key): 24 characters or
 * more with letters and digits that are not words. A name's parts between
 * "_" or "-" are words in one case or capitalised and run together, ending
 * in digits (`OPENAI_API_KEY_PROD_2024`, `MyCompanyOpenAiKeyForTesting1`),
 * or a short upper-case code (`GPT4O`); a key's random letters and digits
 * are not. It lives here, beside the config's other checks of secrets,
 * for the record's config to be shortened without loading `template.ts`.
 *
 * @param name The variable's name, as the config writes it.
 * @returns Whether to show only its first four characters.
 *
 * @example
 * ```ts
 * import { keyLikeName } from "./_url_secrets.ts";
 * if (!keyLikeName("gsk_AbCdEf0123456789XYZsecretKEY01")) throw new Error();
 * if (keyLikeName("MyCompanyOpenAiKeyForTesting1")) throw new Error();
 * ```
 */
export function keyLikeName(name: string): boolean {
  return name.length >= 24 && /[0-9]/.test(name) && /[A-Za-z]/.test(name) &&
    !name.split(/[_-]/).every((part) =>
      NAME_WORDS.test(part) || SHORT_CODE.test(part)
    );
}

/** Words in one case, or capitalised and run together, then digits. */
const NAME_WORDS =
  /^[a-z]*(?:[A-Z][a-z]+|[A-Z]+(?=[A-Z][a-z]|[0-9]|$))*[0-9]*$/;
const SHORT_CODE = /^[A-Z][A-Z0-9]{0,11}$/;

/**
 * A placeholder in a URL, as an http target fills it (a global pattern:
 * `replace` and `match` read it whole; `exec` and `test` would keep its
 * place between calls).
 */
export const URL_PLACEHOLDERS = /\{\{\s*[\w.-]+\s*\}\}/g;

/**
 * The secrets a URL carries: in its userinfo, the password and the
 * `user:password` pair that goes out base64-encoded as Basic auth; in its
 * query, the value of each parameter that names a credential (`key`,
 * `api_key`, `access_token`, `token`, `sig`, `code`, ...), as written and
 * decoded, unless it is a plain word (`?code=python`; see `WORD`) of a
 * parameter that names no password or secret.
 *
 * @param url A URL.
 * @returns The values to hide (none when it has no password).
 *
 * @example
 * ```ts
 * import { urlSecrets } from "./_url_secrets.ts";
 * if (!urlSecrets("http://me:pw-1234@h/").includes("pw-1234")) throw new Error();
 * if (!urlSecrets("https://h/v1?key=AIza%2D99").includes("AIza-99")) throw new Error();
 * ```
 */
export function urlSecrets(url: string): string[] {
  return fixedSecrets(url, false);
}

/**
 * The credentials a URL sends, as {@linkcode urlSecrets} reads them but
 * with every value of a query credential, a plain word too
 * (`?key=opensesame`): what the host check keeps a case's host from. A
 * plain word is shown in messages, being no key an API issues, but one
 * may still be a password, and it goes to the host whatever it is.
 *
 * @param url A URL, placeholders and all.
 * @returns The values the URL sends to its host.
 *
 * @example
 * ```ts
 * import { urlCredentials } from "./_url_secrets.ts";
 * if (!urlCredentials("https://h/?key=opensesame").includes("opensesame")) throw new Error();
 * ```
 */
export function urlCredentials(url: string): string[] {
  return fixedSecrets(url, true);
}

/** A URL's secrets the config wrote; plain words too when `words`. */
function fixedSecrets(url: string, words: boolean): string[] {
  if (!url.includes("@") && !url.includes("=")) return [];
  if (!url.includes("{{")) return secretsOf(url, words);
  // An http target's URL before a case fills it: a placeholder where the
  // parser wants a port or a host (`127.0.0.1:{{metadata.port}}`) makes it
  // no URL, and its password and key were then hidden nowhere. Each is
  // read with a digit in its place, which parses wherever it stands; a value
  // a case fills in part (`?key=sk-{{metadata.k}}`) differs between two
  // digits and is no secret of the config's ("sk-1" would be hidden in
  // every message).
  const twos = new Set(secretsOf(standIn(url, () => "2"), words));
  return secretsOf(standIn(url, () => "1"), words).filter((s) => twos.has(s));
}

/**
 * What comes before a URL's first ":" when it is a scheme, placeholders
 * and all, after the spaces and controls a URL parser drops: what fills a
 * placeholder is URL-encoded and never makes a "/", "?" or space a scheme.
 */
const SCHEME = /^[\0- ]*(?:[a-z0-9+.-]|\{\{\s*[\w.-]+\s*\}\})*$/i;

/**
 * A URL with its placeholders read as `fill` says, and a scheme (what comes
 * before the URL's first ":", which no placeholder holds) that has one read
 * as "http" whole: a digit there made it no URL, and `http{{s}}:` read as
 * "httphttp:" was no special scheme, whose host is a path, where a case
 * filling it makes "http:" or "https:", which fetch sends with a host, a
 * password and a key. Text before a ":" that is no scheme
 * (`{{host}}/a?t=1:2`) is filled as the rest is, and stays no URL.
 *
 * @param url A URL with placeholders.
 * @param fill What stands for the placeholder at an index, outside the scheme.
 * @returns The URL.
 */
export function standIn(url: string, fill: (n: number) => string): string {
  const colon = url.indexOf(":");
  const inScheme = schemePlaceholders(url);
  let n = inScheme;
  const rest = (inScheme === 0 ? url : url.slice(colon)).replace(
    URL_PLACEHOLDERS,
    () => fill(n++),
  );
  return inScheme === 0 ? rest : `http${rest}`;
}

/**
 * How many placeholders a URL's scheme holds (`{{metadata.scheme}}://`,
 * `http{{metadata.s}}://`), as {@linkcode standIn} reads the scheme.
 *
 * @param url A URL with placeholders.
 * @returns The count, 0 when the scheme is written whole.
 */
export function schemePlaceholders(url: string): number {
  const colon = url.indexOf(":");
  const scheme = colon < 0 ? "" : url.slice(0, colon);
  return SCHEME.test(scheme) ? scheme.match(URL_PLACEHOLDERS)?.length ?? 0 : 0;
}

/** The secrets of a URL without placeholders; plain words too when `words`. */
function secretsOf(url: string, words: boolean): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    // Not a URL: the request fails later with its own message.
    if (!(error instanceof TypeError)) throw error;
    return [];
  }
  const found: string[] = [];
  if (parsed.password !== "") {
    const user = decodeURIComponent(parsed.username);
    const password = decodeURIComponent(parsed.password);
    found.push(password, parsed.password, `${user}:${password}`);
  }
  for (const pair of parsed.search.slice(1).split("&")) {
    const eq = pair.indexOf("=");
    const name = pair.slice(0, eq);
    if (eq < 1 || !CREDENTIAL_NAME.test(name)) continue;
    const written = pair.slice(eq + 1);
    if (written === "") continue;
    let decoded = written;
    try {
      decoded = decodeURIComponent(written.replaceAll("+", " "));
    } catch (error) {
      // A stray "%": the value is hidden as written.
      if (!(error instanceof URIError)) throw error;
    }
    if (!words && WORD.test(decoded) && !ALWAYS_SECRET.test(name)) continue;
    found.push(written);
    if (decoded !== written) found.push(decoded);
  }
  return found;
}
