// The request a handler gets and the responses it answers with, the SPT envelope among them.

import type { Chunk, Request as WitRequest, Response } from "modhost:plugin/types@0.1.2";
import { invalid } from "./errors.js";

export type { Chunk, Response };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Bytes of `value`: a string as UTF-8, bytes as they are. */
export function toBytes(value: string | Uint8Array): Uint8Array {
  return typeof value === "string" ? encoder.encode(value) : value;
}

/** A request as `handle` (or a hook) gets it, with readers for its path, headers and body. Build one
 * for a test with `Request.get(url)` / `Request.post(url, body)`. */
export class Request {
  method: string;
  url: string;
  route: string;
  session: string | undefined;
  headers: Array<[string, string]>;
  body: Uint8Array;

  constructor(wit: WitRequest) {
    this.method = wit.method;
    this.url = wit.url;
    this.route = wit.route;
    this.session = wit.session;
    this.headers = wit.headers;
    this.body = wit.body;
  }

  /** A `GET` of `url` (path and query), for tests. */
  static get(url: string): Request {
    return new Request({ method: "GET", url, route: "", headers: [], body: new Uint8Array() });
  }

  /** A `POST` of `url` with `body` (a string is sent as UTF-8, an object as JSON), for tests. */
  static post(url: string, body: string | Uint8Array | object = new Uint8Array()): Request {
    const bytes = typeof body === "string" || body instanceof Uint8Array ? toBytes(body) : toBytes(JSON.stringify(body));
    return new Request({ method: "POST", url, route: "", headers: [], body: bytes });
  }

  /** This request with session `id` (24 lower-case hex digits on a real server). */
  withSession(id: string): Request {
    this.session = id;
    return this;
  }

  /** This request with one more header (its name in lower case). */
  withHeader(name: string, value: string): Request {
    this.headers = [...this.headers, [name.toLowerCase(), value]];
    return this;
  }

  /** The path: the url without its query. */
  path(): string {
    const q = this.url.indexOf("?");
    return q < 0 ? this.url : this.url.slice(0, q);
  }

  /** For a prefix route, the path after the prefix (`""` for an exact route). */
  rest(): string {
    const path = this.path();
    return path.startsWith(this.route) ? path.slice(this.route.length) : "";
  }

  /** The value of query parameter `name`, percent-decoded; `undefined` when absent. */
  query(name: string): string | undefined {
    const q = this.url.indexOf("?");
    if (q < 0) return undefined;
    for (const pair of this.url.slice(q + 1).split("&")) {
      const eq = pair.indexOf("=");
      const key = decodeURIComponent((eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, " "));
      if (key === name) return eq < 0 ? "" : decodeURIComponent(pair.slice(eq + 1).replace(/\+/g, " "));
    }
    return undefined;
  }

  /** The first header named `name` (any case), `undefined` when absent. */
  header(name: string): string | undefined {
    const lower = name.toLowerCase();
    return this.headers.find(([n]) => n === lower)?.[1];
  }

  /** The body as UTF-8 text. */
  text(): string {
    return decoder.decode(this.body);
  }

  /** The body as JSON; a body that does not parse throws `invalid` (answers 400). */
  json<T = unknown>(): T {
    try {
      return JSON.parse(this.text()) as T;
    } catch (e) {
      throw invalid(`the request body is not JSON: ${(e as Error).message}`);
    }
  }

  /** The WIT record, as the host passes it. */
  toWit(): WitRequest {
    const { method, url, route, session, headers, body } = this;
    return { method, url, route, session, headers, body };
  }
}

const JSON_TYPE: [string, string] = ["content-type", "application/json"];

/** A response of `body` (a string as UTF-8) with `status` and `headers`. */
export function respond(body: string | Uint8Array, status = 200, headers: Array<[string, string]> = [JSON_TYPE]): Response {
  return { status, headers, body: [{ tag: "bytes", val: toBytes(body) }] };
}

/** `value` as JSON. */
export function json(value: unknown, status = 200): Response {
  return respond(JSON.stringify(value), status);
}

/** Plain text. */
export function text(body: string, status = 200): Response {
  return respond(body, status, [["content-type", "text/plain; charset=utf-8"]]);
}

const OK_HEAD = '{"err":0,"errmsg":null,"data":';

/** `{"err":0,"errmsg":null,"data":<data>}`: a success as the SPT client reads it. */
export function ok(data: unknown): Response {
  return respond(OK_HEAD + JSON.stringify(data ?? null) + "}");
}

/** `{"err":0,"errmsg":null,"data":<json>}` from text that is already JSON. */
export function okJson(jsonText: string): Response {
  return respond(OK_HEAD + jsonText + "}");
}

/** `{"err":0,"errmsg":null,"data":<the db value at path>}`, spliced in by the host: the value never
 * passes through the mod (a 4 MiB table costs the mod nothing). */
export function okDb(path: string): Response {
  return {
    status: 200,
    headers: [JSON_TYPE],
    body: [
      { tag: "bytes", val: toBytes(OK_HEAD) },
      { tag: "db", val: path },
      { tag: "bytes", val: toBytes("}") },
    ],
  };
}

/** `{"err":0,"errmsg":null,"data":null}`. */
export function okNull(): Response {
  return okJson("null");
}

/** `{"err":<code>,"errmsg":<message>,"data":null}`: a refusal the game client shows, not a failure
 * (the request answers 200). A code of 0 would read as success, so it becomes 1. */
export function error(code: number, message: string): Response {
  return respond(JSON.stringify({ err: code === 0 ? 1 : code, errmsg: message, data: null }));
}

/** The SPT envelope, read back (for tests). */
export interface Envelope<T = unknown> {
  err: number;
  errmsg: string | null;
  data: T | null;
}

/** A response's body as text, a db reference shown as `<db:path>` (for tests and logs). */
export function bodyText(response: Response): string {
  return response.body.map((c) => (c.tag === "bytes" ? decoder.decode(c.val) : `<db:${c.val}>`)).join("");
}

/** A response's body as JSON (for tests); one with a db reference throws `invalid`. */
export function bodyJson<T = unknown>(response: Response): T {
  if (response.body.some((c) => c.tag === "db")) {
    throw invalid(`the body holds a db reference, which only the host reads: ${bodyText(response)}`);
  }
  return JSON.parse(bodyText(response)) as T;
}
