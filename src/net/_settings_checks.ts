/**
 * What a network call's settings may hold, checked before any call, whether
 * they come from a config (which names the line) or from a script (which
 * gets a TypeError as the target is built): a placeholder is a field's name
 * alone (`{{input}}`, `{{metadata.topic}}`), as template.ts fills it, never
 * `expected`; an `http` target reads `${NAME}` in header values only; a chat
 * call's `params` ask for one whole JSON reply. Anything else would reach the
 * service as written, or fail every case once paid for.
 *
 * @module
 */

import { clip } from "../base/terminal.ts";
import { pathText } from "../base/place.ts";
import {
  ENV_VARIABLES,
  schemePlaceholders,
  standIn,
  URL_PLACEHOLDERS,
  urlCredentials,
} from "./_url_secrets.ts";

/**
 * The header that carries an API key to `url`: Azure OpenAI's `api-key`
 * when the URL names an `api-version` in its query (as only Azure's API
 * asks), as Azure's SDKs send it; else `authorization`. Here, not beside
 * the endpoint's URL (`_api_url.ts`, loaded with the first call), because
 * the config's checks ask it at start.
 *
 * @param url The endpoint's URL (or the base URL it is made from).
 * @returns The header's name, lower case.
 */
export function keyHeaderName(url: string): "api-key" | "authorization" {
  const query = url.split("#")[0]!.split("?")[1] ?? "";
  return new URLSearchParams(query).has("api-version")
    ? "api-key"
    : "authorization";
}

/** A setting that cannot be sent as meant: where, and why. */
export interface SettingsProblem {
  /** The setting's path (in the config, or in the settings given). */
  path: PropertyKey[];
  /** What is wrong, after the path in the message. */
  detail: string;
}

/** A text's problem, or `undefined`. */
export type TextCheck = (text: string) => string | undefined;

/** A placeholder naming `expected` or a path below it. */
const EXPECTED = /\{\{\s*(expected(?:\.[\w-]+)*)\s*\}\}/;

/** A header's name, an HTTP token (RFC 9110). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A content type that says JSON, as evalpipe sends its bodies. */
const JSON_TYPE = /^\s*application\/json\s*(?:;.*)?$/i;

/** A placeholder evalpipe fills, whole. */
const PLACEHOLDER = /^\{\{\s*[A-Za-z_][\w-]*(?:\.[\w-]+)*\s*\}\}$/;

/** What looks like template syntax: `{{ ... }}` and `{% ... %}`. */
const SYNTAX = /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g;

/** `${NAME}`, as fillEnv reads it in a header value: the first, for `exec`. */
const VARIABLE = new RegExp(ENV_VARIABLES.source);

const FIELD_ALONE =
  "a placeholder is a field's name alone, as {{input}} or {{metadata.topic}}";

const expected: TextCheck = (text) => {
  const name = EXPECTED.exec(text)?.[1];
  return name === undefined
    ? undefined
    : `names {{${name}}}, which a target is never given: expected is the answer key, for scorers only`;
};

/** Syntax of other template languages (filters, tags) evalpipe would send as written. */
export const unfilled: TextCheck = (text) => {
  if (!text.includes("{{") && !text.includes("{%")) return undefined;
  for (const [syntax] of text.matchAll(SYNTAX)) {
    if (PLACEHOLDER.test(syntax)) continue;
    const why = syntax.startsWith("{%")
      ? "tags ({% %}) are not supported"
      : syntax.includes("|")
      ? 'filters ("|") are not supported'
      : "it is not a field's name";
    return `has ${
      clip(syntax, 60)
    }, which evalpipe would send as written: ${why}; ${FIELD_ALONE}`;
  }
  const rest = text.replace(SYNTAX, "");
  const open = rest.search(/\{\{|\{%/);
  if (open < 0) return undefined;
  const opener = rest.slice(open, open + 2);
  return `has ${
    clip(rest.slice(open), 60)
  }, which evalpipe would send as written: no "${
    opener === "{{" ? "}}" : "%}"
  }" closes "${opener}"; ${FIELD_ALONE}`;
};

const placeholderInHeader: TextCheck = (text) => {
  const syntax = /\{\{[\s\S]*?\}\}/.exec(text)?.[0];
  return syntax === undefined
    ? undefined
    : `has ${
      clip(syntax, 60)
    }, which evalpipe would send as written: a header value reads \${NAME} (an environment variable) only; put case fields in "url" or "body"`;
};

const variableOutsideHeaders: TextCheck = (text) => {
  const variable = VARIABLE.exec(text)?.[0];
  return variable === undefined
    ? undefined
    : `has ${variable}, which evalpipe would send as written: only header values read environment variables; send the secret in a header, e.g. headers: { authorization: "Bearer ${variable}" }`;
};

/**
 * The first problem of a target's templates: `{{expected}}` anywhere
 * (openai's `system` and `prompt`, http's `url`, `headers` and `body`), then
 * syntax evalpipe does not fill, then, for `http`, a placeholder in a header,
 * a `${NAME}` outside the headers, a `url` no filling makes a URL, one that
 * lets a case choose the host of a secret, or a user name or password in it
 * beside an `authorization` header.
 *
 * @param target A target's settings, with its `type`.
 * @param at Their path in the config (`[]` for a script's).
 * @returns The problem, or `undefined`.
 */
export function targetTemplateProblem(
  target: unknown,
  at: readonly PropertyKey[],
): SettingsProblem | undefined {
  if (!isObject(target)) return undefined;
  return firstProblem(
    target,
    at,
    ["system", "prompt", "url", "headers", "body"],
    expected,
  ) ??
    firstProblem(target, at, ["system", "prompt", "url", "body"], unfilled) ??
    (target.type === "http"
      ? firstProblem(target, at, ["headers"], placeholderInHeader) ??
        firstProblem(target, at, ["url", "body"], variableOutsideHeaders) ??
        unreadableUrl(target, at) ??
        otherScheme(target, at, "url") ??
        caseChosenHost(target, at) ??
        basicAuthBeside(target, at, "url")
      : undefined);
}

/**
 * An http target's `url` with each placeholder filled and URL-encoded, as
 * the target fills it for a case.
 *
 * @param url The `url` setting.
 * @param value What fills a placeholder, given it and its index.
 * @returns The URL.
 */
export function fillUrl(
  url: string,
  value: (placeholder: string, n: number) => string,
): string {
  let n = 0;
  return url.replace(
    URL_PLACEHOLDERS,
    (placeholder) => encodeURIComponent(value(placeholder, n++)),
  );
}

/**
 * What stands for a case's field to find it in a parsed host: lower-case
 * letters, which a host's IDNA mapping keeps as they are.
 */
const MARK = "evalpipecasefield";

/**
 * An http target's `url` as a URL parser reads it once a case fills it:
 * with digits for its placeholders (one may be a port), else with letters
 * (one may end a name after digits, `999.{{x}}`); `undefined` when neither
 * reads.
 */
function readUrl(url: string): URL | undefined {
  return URL.parse(standIn(url, () => "1")) ??
    URL.parse(standIn(url, () => MARK)) ?? undefined;
}

/**
 * An http target's `url` that a URL parser cannot read however a case fills
 * it (a port above 65535, a space in the host): fetch would refuse it for
 * every case, each a target error, where the config's line can say so once.
 */
function unreadableUrl(
  target: Record<string, unknown>,
  at: readonly PropertyKey[],
): SettingsProblem | undefined {
  if (typeof target.url !== "string" || readUrl(target.url) !== undefined) {
    return undefined;
  }
  return {
    path: [...at, "url"],
    detail:
      "is no URL a URL parser can read, so no case could be sent: check its scheme (http:// or https://), its host and its port (at most 65535)",
  };
}

/**
 * A URL (an http target's `url`, an OpenAI-compatible API's `base_url`)
 * whose scheme is not http or https, as read once a case fills it (a
 * placeholder in the scheme reads as http, and is checked as each case
 * fills it, `schemeOf`): fetch refuses `ftp:` or `ws:` for every case,
 * each retried, answers a `data:` URL itself and reads a `file:` URL's
 * file on this machine.
 */
function otherScheme(
  settings: Record<string, unknown>,
  at: readonly PropertyKey[],
  field: "url" | "base_url",
): SettingsProblem | undefined {
  const url = settings[field];
  if (typeof url !== "string") return undefined;
  const read = readUrl(url);
  const detail = read === undefined ? undefined : schemeOf(read.href);
  return detail === undefined ? undefined : { path: [...at, field], detail };
}

/**
 * The scheme of a URL a case filled, when it is not http or https: the
 * error of that case's call, before it is sent (`http{{metadata.s}}://`
 * filled with "" or "s" is sent; with "ftp" or "file", not).
 *
 * @param url The URL, filled.
 * @returns The problem, or `undefined`.
 */
export function schemeOf(url: string): string | undefined {
  const scheme = URL.parse(url)?.protocol;
  return scheme === undefined || scheme === "http:" || scheme === "https:"
    ? undefined
    : `has the scheme ${
      JSON.stringify(clip(scheme, 20))
    }, which evalpipe does not call: it sends to http:// and https:// URLs only`;
}

/**
 * A URL (an http target's `url`, an OpenAI-compatible API's `base_url`)
 * with a user name or password, which fetch sends as Basic auth in the
 * `authorization` header, beside an `authorization` header of the
 * config's own or, for `base_url`, an `api_key_env` whose key goes there
 * as `Bearer …` (not Azure's `api-key`): fetch sends both, joined
 * (`Basic …, Bearer …`), in that one header, and a service reads the
 * first, or neither.
 */
function basicAuthBeside(
  settings: Record<string, unknown>,
  at: readonly PropertyKey[],
  field: "url" | "base_url",
): SettingsProblem | undefined {
  const url = settings[field];
  if (typeof url !== "string") return undefined;
  const header = isObject(settings.headers)
    ? Object.keys(settings.headers).find((name) =>
      name.toLowerCase() === "authorization"
    )
    : undefined;
  const key = field === "base_url" &&
    typeof settings.api_key_env === "string" &&
    keyHeaderName(url) === "authorization";
  if (header === undefined && !key) return undefined;
  const parsed = readUrl(url);
  if (
    parsed === undefined || (parsed.username === "" && parsed.password === "")
  ) {
    return undefined;
  }
  const beside = header !== undefined
    ? JSON.stringify(pathText([...at, "headers", header]))
    : `${
      JSON.stringify(pathText([...at, "api_key_env"]))
    }, whose key goes there as "Bearer …"`;
  return {
    path: [...at, field],
    detail:
      `has a user name or password, which is sent as Basic auth in the authorization header, beside ${beside}: the service would get both in that one header; keep one, the ${field}'s "user:password@" or ${
        header !== undefined ? "the header" : '"api_key_env"'
      }`,
  };
}

/**
 * An http target whose URL lets a case choose the host (`{{metadata.host}}`
 * as the host, or as its end) while the headers carry a `${NAME}` secret,
 * the URL a password (sent as Basic auth) or its query a credential (`?key=`):
 * the dataset, which is not trusted, could send the secret anywhere. A
 * placeholder before a fixed domain (`{{metadata.region}}.api.example.com`)
 * stays inside it. The host is the one a URL parser reads once the
 * placeholders are filled, not the text between "://" and "/": a "\" ends
 * it as "/" does, tabs and newlines are dropped, "http:{{x}}" and
 * "http:///{{x}}" name the host {{x}}, a "。" is a dot. What fills a
 * placeholder is URL-encoded, so it never ends the host, and the parse of a
 * few fillings decides for all: letters find a placeholder in a host read
 * as a name, digits one in a host read as an IP address; one in the scheme
 * is "http" (a digit there is no URL, and the host it goes with was read
 * as none). A placeholder in the scheme beside such a secret is refused
 * too, for the scheme's own sake: a case's "http" would send the secret
 * unencrypted.
 */
function caseChosenHost(
  target: Record<string, unknown>,
  at: readonly PropertyKey[],
): SettingsProblem | undefined {
  const url = target.url;
  if (typeof url !== "string") return undefined;
  const placeholders = url.match(URL_PLACEHOLDERS) ?? [];
  if (placeholders.length === 0) return undefined;
  const read = (fill: (n: number) => string) =>
    URL.parse(standIn(url, fill)) ?? undefined;
  const ones = read(() => "1");
  const reads = [ones];
  let chosen: { placeholder: string; shown: string } | undefined;
  for (const [n, placeholder] of placeholders.entries()) {
    const marked = read((m) => m === n ? MARK : "1");
    const twos = read((m) => m === n ? "2" : "1");
    reads.push(marked, twos);
    const host = marked?.hostname ?? "";
    const after = host.slice(host.lastIndexOf(MARK) + MARK.length);
    // A name must end in a fixed domain of two labels at least after the
    // case's part (`{{x}}.com` is any .com); an IP address may not vary.
    const free = host.includes(MARK)
      ? !/^\.[^.]+\.[^.]+/.test(after.replace(/^[^.]*/, ""))
      : ones !== undefined && twos !== undefined &&
        ones.hostname !== twos.hostname;
    if (free && chosen === undefined) {
      chosen = {
        placeholder,
        shown: host.includes(MARK) ? `${placeholder}${after}` : placeholder,
      };
    }
  }
  // A scheme a case fills may be "http" where "https" was meant: the
  // secret would cross the network unencrypted.
  const scheme = chosen === undefined && schemePlaceholders(url) > 0
    ? url.match(URL_PLACEHOLDERS)![0]
    : undefined;
  if (chosen === undefined && scheme === undefined) return undefined;
  const header = isObject(target.headers)
    ? Object.values(target.headers).find((v) =>
      typeof v === "string" && VARIABLE.test(v)
    ) as string | undefined
    : undefined;
  // A password in the URL's userinfo goes out as Basic auth to the host
  // as surely as a header's ${NAME} does.
  const sends = header !== undefined
    ? `the headers send ${VARIABLE.exec(header)![0]}`
    : reads.some((parsed) => parsed !== undefined && parsed.password !== "")
    ? "the URL sends a password"
    : queryCredential(ones, read(() => "2"));
  if (sends === undefined) return undefined;
  if (chosen === undefined) {
    return {
      path: [...at, "url"],
      detail: `lets a case choose the scheme (${
        clip(scheme!, 60)
      }) while ${sends}: a dataset could send the secret unencrypted, over http://; write the scheme, as in https://`,
    };
  }
  return {
    path: [...at, "url"],
    detail: `lets a case choose the host (${
      clip(chosen.shown, 60)
    }, as a URL parser reads it) while ${sends}: a dataset could send the secret to any host; fix the domain, as in https://{{metadata.region}}.api.example.com`,
  };
}

/**
 * What `sends` says of the parameter of a URL's query that sends a
 * credential the config wrote (`key` of `?key=AIza…`, a parameter
 * {@linkcode urlCredentials} knows), not one a case fills: the same in the
 * URL read with every placeholder "1" and with every one "2". It goes to
 * the host as surely as a header's `${NAME}` does, and is named. A plain
 * word (`?key=opensesame`) counts here though messages show it: it may be
 * a password, and missing one is worse than refusing `?code=python`.
 */
function queryCredential(
  ones: URL | undefined,
  twos: URL | undefined,
): string | undefined {
  if (ones === undefined || twos === undefined) return undefined;
  const fixed = new Set(urlCredentials(`http://h/${twos.search}`));
  for (const pair of ones.search.slice(1).split("&")) {
    const eq = pair.indexOf("=");
    if (eq < 1) continue;
    if (urlCredentials(`http://h/?${pair}`).some((s) => fixed.has(s))) {
      return `the URL's query sends a credential (${
        clip(pair.slice(0, eq), 40)
      }=)`;
    }
  }
  return undefined;
}

/**
 * The first problem of the `headers` of a call to an OpenAI-compatible API
 * (an `openai` target's, a judge's, `semantic_similarity`'s): a placeholder,
 * which would be sent as written; `content-type`, which evalpipe sets (the
 * body it sends is JSON); and, beside `api_key_env`, the header the key goes
 * in (`authorization`, or Azure's `api-key`), which would send two keys, one
 * of them silently dropped. Without `api_key_env`, that header is how a key
 * of another form is sent (`authorization: "Bearer ${GATEWAY_TOKEN}"`).
 * Then a `base_url` with a `${NAME}` or a `{{field}}`, which no call
 * fills (a key in a URL's path, as Telegram's `/bot<TOKEN>/`, has no
 * place), one whose scheme is not http or https, and one with a user
 * name or password beside the key or an `authorization` header: fetch
 * would send both in that one header.
 *
 * @param settings A target's, judge's or scorer's settings.
 * @param at Their path in the config (`[]` for a script's).
 * @returns The problem, or `undefined`.
 */
export function apiHeadersProblem(
  settings: unknown,
  at: readonly PropertyKey[],
): SettingsProblem | undefined {
  if (!isObject(settings)) return undefined;
  return firstProblem(settings, at, ["base_url"], unfilledBaseUrl) ??
    headersProblem(settings, at) ??
    otherScheme(settings, at, "base_url") ??
    basicAuthBeside(settings, at, "base_url");
}

/** A `base_url`'s `${NAME}` or `{{field}}`, sent as written. */
const unfilledBaseUrl: TextCheck = (text) => {
  const variable = VARIABLE.exec(text)?.[0];
  if (variable !== undefined) {
    return `has ${variable}, which evalpipe would send as written: a base_url reads no environment variable; send the key with "api_key_env" or in a header (headers: { authorization: "Bearer ${variable}" })`;
  }
  const syntax = /\{\{[\s\S]*?\}\}/.exec(text)?.[0];
  return syntax === undefined
    ? undefined
    : `has ${
      clip(syntax, 60)
    }, which evalpipe would send as written: a base_url is the same for every case and fills no placeholder`;
};

/** The problem of `apiHeadersProblem`'s headers, or `undefined`. */
function headersProblem(
  settings: Record<string, unknown>,
  at: readonly PropertyKey[],
): SettingsProblem | undefined {
  if (!isObject(settings.headers)) return undefined;
  const placeholder = firstProblem(settings, at, ["headers"], (text) => {
    const syntax = /\{\{[\s\S]*?\}\}/.exec(text)?.[0];
    return syntax === undefined
      ? undefined
      : `has ${
        clip(syntax, 60)
      }, which evalpipe would send as written: a header value reads \${NAME} (an environment variable) only`;
  });
  if (placeholder !== undefined) return placeholder;
  const keyName = typeof settings.api_key_env === "string"
    ? keyHeaderName(
      typeof settings.base_url === "string" ? settings.base_url : "",
    )
    : undefined;
  const seen = new Set<string>();
  for (const [name, value] of Object.entries(settings.headers)) {
    const lower = name.toLowerCase();
    const path = [...at, "headers", name];
    if (!HEADER_NAME.test(name)) {
      return {
        path,
        detail:
          "is no header name: a name is letters, digits and !#$%&'*+-.^_`|~, no space or colon",
      };
    }
    if (seen.has(lower)) {
      return {
        path,
        detail:
          "is given twice: header names are the same in any case; keep one",
      };
    }
    seen.add(lower);
    // The value evalpipe sends anyway (a config written for the embeddings'
    // headers before they refused it keeps working).
    if (
      lower === "content-type" && typeof value === "string" &&
      JSON_TYPE.test(value)
    ) continue;
    if (lower === "content-type") {
      return {
        path,
        detail:
          'is set by evalpipe: the body it sends is JSON ("application/json"); drop it',
      };
    }
    if (lower === keyName) {
      return {
        path,
        detail:
          `would send a second key: "api_key_env" sends its variable in the ${keyName} header; drop one of them (a gateway's token goes in a header of its own, or here without "api_key_env")`,
      };
    }
  }
  return undefined;
}

/**
 * The `params` of a chat call (an `openai` target's, a judge's) whose answer
 * evalpipe could not read: `stream: true` answers server-sent events, not
 * the one JSON reply read, so every case would fail once paid for; `n` above
 * 1 pays for choices of which only the first is read.
 *
 * @param settings A target's or a judge's settings.
 * @param at Their path in the config (`[]` for a script's).
 * @returns The problem, or `undefined`.
 */
export function paramsProblem(
  settings: unknown,
  at: readonly PropertyKey[],
): SettingsProblem | undefined {
  if (!isObject(settings) || !isObject(settings.params)) return undefined;
  const { stream, n } = settings.params;
  const problem = (key: string, value: unknown, why: string) => ({
    path: [...at, "params", key],
    detail: `is ${JSON.stringify(value)}: ${why}`,
  });
  if (stream !== undefined && stream !== false) {
    return problem(
      "stream",
      stream,
      "evalpipe reads each reply whole, as one JSON answer, and a streamed one comes as server-sent events; drop it",
    );
  }
  if (n !== undefined && n !== 1) {
    return problem(
      "n",
      n,
      "evalpipe reads only the first choice of a reply, and the others would be paid for; drop it, or run several epochs (epochs: N)",
    );
  }
  return undefined;
}

/**
 * Refuses settings a script gave a target or a judge, as a config naming
 * them would be refused at its line.
 *
 * @param built What is being built (`httpTarget`), for the message.
 * @param problem The first problem of its settings, if any.
 * @throws {TypeError} `httpTarget's "url" has ${TOKEN}, which …`.
 */
export function refuseSettings(
  built: string,
  problem: SettingsProblem | undefined,
): void {
  if (problem === undefined) return;
  throw new TypeError(
    `${built}'s ${JSON.stringify(pathText(problem.path))} ${problem.detail}`,
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/**
 * The first string under `fields` of `settings` that `check` finds a
 * problem in, with its path.
 *
 * @param settings The settings.
 * @param at Their path.
 * @param fields The fields to look in, in this order, strings nested
 *   anywhere below them included.
 * @param check The check of one string.
 * @returns The problem, or `undefined`.
 */
export function firstProblem(
  settings: Record<string, unknown>,
  at: readonly PropertyKey[],
  fields: readonly string[],
  check: TextCheck,
): SettingsProblem | undefined {
  const search = (
    value: unknown,
    path: PropertyKey[],
  ): SettingsProblem | undefined => {
    if (typeof value === "string") {
      const detail = check(value);
      return detail !== undefined ? { path, detail } : undefined;
    }
    if (!isObject(value)) return undefined;
    for (const [k, v] of Object.entries(value)) {
      const found = search(v, [...path, Array.isArray(value) ? Number(k) : k]);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  for (const field of fields) {
    if (!Object.hasOwn(settings, field)) continue;
    const found = search(settings[field], [...at, field]);
    if (found !== undefined) return found;
  }
  return undefined;
}
