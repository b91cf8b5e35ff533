// The router: which function answers which route, the hooks, topics, functions, sockets and timers
// the mod declares, and the exports componentize-js needs (`router.exports()`).

import type * as guest from "modhost:plugin/guest@0.1.2";
import type * as realtime from "modhost:plugin/realtime@0.1.2";
import type { Message } from "modhost:plugin/sockets@0.1.2";
import type { MatchKind, Request as WitRequest, Response, Route } from "modhost:plugin/types@0.1.2";
import { ModError, failed, notFound } from "./errors.js";
import { decodeJson, log } from "./host.js";
import { Request, toBytes } from "./http.js";

const decoder = new TextDecoder();

/** A route handler. Throw a `ModError` (`notFound(...)`, `invalid(...)`) to answer its status. */
export type Handler = (request: Request) => Response;

/** What a before-hook decides: go on, go on changed, or answer in the owner's place. */
export type Verdict = guest.Verdict;
/** Go on with the request as it is. */
export const proceed = (): Verdict => ({ tag: "proceed" });
/** Answer `response` instead of the owner. */
export const answer = (response: Response): Verdict => ({ tag: "answer", val: response });
/** Go on with the request's headers and/or body replaced. */
export const edit = (change: { headers?: Array<[string, string]>; body?: string | Uint8Array }): Verdict => ({
  tag: "edit",
  val: { headers: change.headers, body: change.body === undefined ? undefined : toBytes(change.body) },
});

/** What an after-hook changes (`undefined`: nothing). A body may be a string. */
export interface ResponseEdit {
  status?: number;
  headers?: Array<[string, string]>;
  body?: string | Uint8Array | guest.Chunk[];
}

/** An event a subscriber hears. */
export class Event {
  constructor(
    readonly topic: string,
    readonly payload: Uint8Array,
    /** The emitting mod's id, set by the host: check it before acting. */
    readonly source: string = "",
    readonly session: string | undefined = undefined,
  ) {}
  text(): string {
    return decoder.decode(this.payload);
  }
  json<T = unknown>(): T {
    return decodeJson<T>(this.payload, `the payload of \`${this.topic}\``);
  }
}

/** A call into one of the mod's functions. */
export class Invocation {
  constructor(
    readonly function_: string,
    readonly payload: Uint8Array,
    readonly caller: string = "",
    readonly session: string | undefined = undefined,
  ) {}
  text(): string {
    return decoder.decode(this.payload);
  }
  json<T = unknown>(): T {
    return decodeJson<T>(this.payload, `the payload of \`${this.function_}\``);
  }
}

/** A fired timer. */
export interface Fired {
  name: string;
  /** The one-shot timer's id (`undefined` for a periodic one). */
  id?: string;
  session?: string;
  payload: Uint8Array;
  dueMs: bigint;
  lateMs: bigint;
}

/** A hook's placement: `prefix` matches every path starting with it; among unordered mods a higher
 * `priority` runs first; an after-hook reads the answer's body only with `body`. */
export interface HookOptions {
  prefix?: boolean;
  priority?: number;
  body?: boolean;
}

/** A websocket route's handlers. */
export interface SocketHandlers {
  accept?: (connection: string, request: Request) => Response | undefined;
  message?: (connection: string, message: string | Uint8Array) => void;
  close?: (connection: string, code: number, reason: string) => void;
}

type Before = (request: Request) => Verdict;
type After = (request: Request, answer: Response) => ResponseEdit | undefined | void;

interface HookEntry {
  path: string;
  kind: MatchKind;
  phase: guest.Phase;
  priority: number;
  body: boolean;
  run: Before | After;
}

/** The exports of the `plugin` world. */
export interface PluginExports {
  routes(): Route[];
  init(): void;
  handle(request: WitRequest): Response;
}

/** The exports of the `full` world. */
export interface FullExports extends PluginExports {
  guest: typeof guest;
  realtime: typeof realtime;
}

/** Runs `f`, turning whatever it throws into a `ModError` (an unexpected exception is logged with
 * its stack and answered as `failed`, a 500, rather than trapping). */
function guarded<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (!(e instanceof ModError) && !ModError.isVariant((e as { payload?: unknown } | null)?.payload) && !ModError.isVariant(e)) {
      log.error(`${what} threw: ${(e as Error)?.stack ?? String(e)}`);
    }
    throw ModError.from(e);
  }
}

/** Maps routes to handlers and declares the mod's hooks, topics, functions, sockets and timers:
 *
 * ```ts
 * const router = new Router()
 *   .route("/my-mod/hello", (req) => ok({ hi: req.session ?? null }))
 *   .prefix("/my-mod/files/", (req) => ok(req.rest()));
 * const exported = router.exports();
 * export const routes = exported.routes, init = exported.init, handle = exported.handle;
 * ```
 *
 * The host does the matching (exact beats prefix, the longest prefix wins, the query is ignored) and
 * names the route that matched; `router.call(request)` matches the same way, for tests. */
export class Router {
  #routes: Array<{ path: string; kind: MatchKind; handler: Handler }> = [];
  #init: (() => void) | undefined;
  #hooks: HookEntry[] = [];
  #subscriptions: Array<{ topic: string; run: (event: Event) => void }> = [];
  #functions: Array<{ name: string; run: (call: Invocation) => Uint8Array }> = [];
  #sockets: Array<{ path: string; kind: MatchKind; handlers: SocketHandlers }> = [];
  #periodic: Array<{ name: string; everyS: number }> = [];
  #timers: Array<{ name: string; run: (timer: Fired) => void }> = [];

  /** Answer requests whose path is exactly `path`. */
  route(path: string, handler: Handler): this {
    this.#routes.push({ path, kind: "exact", handler });
    return this;
  }

  /** Answer requests whose path starts with `prefix` (`request.rest()` is the rest). */
  prefix(prefix: string, handler: Handler): this {
    this.#routes.push({ path: prefix, kind: "prefix", handler });
    return this;
  }

  /** Run `f` once at load, before any request (it may patch the db). A throw disables the mod. */
  onInit(f: () => void): this {
    this.#init = f;
    return this;
  }

  /** A hook before the owner of `path` (another mod's route); needs `hook = ["<path>"]` under
   * `[grants]`. One hook per path and phase. */
  before(path: string, hook: Before, options: HookOptions = {}): this {
    return this.#hook(path, "before", hook, options);
  }

  /** A hook after the owner of `path`: it sees the answer (its body only with `body: true`) and
   * returns what to change, or nothing. */
  after(path: string, hook: After, options: HookOptions = {}): this {
    return this.#hook(path, "after", hook, options);
  }

  #hook(path: string, phase: guest.Phase, run: Before | After, o: HookOptions): this {
    if (this.#hooks.some((h) => h.path === path && h.phase === phase)) {
      throw new Error(`a second ${phase}-hook on \`${path}\`: one per path and phase`);
    }
    this.#hooks.push({ path, kind: o.prefix ? "prefix" : "exact", phase, priority: o.priority ?? 0, body: !!o.body && phase === "after", run });
    return this;
  }

  /** Hear the events on `topic` (from other mods; check `event.source`). */
  on(topic: string, handler: (event: Event) => void): this {
    this.#subscriptions.push({ topic, run: handler });
    return this;
  }

  /** Provide function `name` to other mods: it gets the call and answers a value, sent as JSON
   * (bytes are sent as they are). */
  provide(name: string, fn: (call: Invocation) => unknown): this {
    if (this.#functions.some((f) => f.name === name)) throw new Error(`a second function \`${name}\``);
    this.#functions.push({
      name,
      run: (call) => {
        const out = fn(call);
        return out instanceof Uint8Array ? out : toBytes(JSON.stringify(out ?? null));
      },
    });
    return this;
  }

  /** A websocket route (exact, or `prefix: true`): accept or refuse a connection, hear its messages
   * and its close. */
  socket(path: string, handlers: SocketHandlers, options: { prefix?: boolean } = {}): this {
    this.#sockets.push({ path, kind: options.prefix ? "prefix" : "exact", handlers });
    return this;
  }

  /** A periodic timer `name` firing every `seconds`, run by `handler`. */
  every(name: string, seconds: number, handler: (timer: Fired) => void): this {
    this.#periodic.push({ name, everyS: seconds });
    return this.onTimer(name, handler);
  }

  /** Run `handler` when timer `name` fires (one-shot timers come from `timers.schedule`). */
  onTimer(name: string, handler: (timer: Fired) => void): this {
    this.#timers.push({ name, run: handler });
    return this;
  }

  // For tests: the host's side, without a host.

  /** Answers `request` as the host would: matches its path (exact beats prefix, longest prefix,
   * query ignored) and runs the handler. No route: throws `not-found`. */
  call(request: Request): Response {
    const path = request.path();
    const exact = this.#routes.find((r) => r.kind === "exact" && r.path === path);
    const prefix = this.#routes
      .filter((r) => r.kind === "prefix" && path.startsWith(r.path))
      .sort((a, b) => b.path.length - a.path.length)[0];
    const route = exact ?? prefix;
    if (!route) throw notFound(`no route of this mod matches \`${path}\``);
    request.route = route.path;
    return guarded(`route ${route.path}`, () => route.handler(request));
  }

  /** Runs the init function, as the host does at load. */
  runInit(): void {
    if (this.#init) guarded("init", this.#init);
  }

  /** Runs the before-hook on `hook` (its declared path). */
  runBefore(hook: string, request: Request): Verdict {
    const h = this.#hooks.find((h) => h.path === hook && h.phase === "before");
    if (!h) throw notFound(`this mod has no before-hook on \`${hook}\``);
    return guarded(`before-hook ${hook}`, () => (h.run as Before)(request));
  }

  /** Runs the after-hook on `hook` with the answer so far. */
  runAfter(hook: string, request: Request, response: Response): ResponseEdit | undefined {
    const h = this.#hooks.find((h) => h.path === hook && h.phase === "after");
    if (!h) throw notFound(`this mod has no after-hook on \`${hook}\``);
    return guarded(`after-hook ${hook}`, () => (h.run as After)(request, response) ?? undefined);
  }

  /** Delivers `event` to this mod's handlers of its topic. */
  runEvent(event: Event): void {
    const handlers = this.#subscriptions.filter((s) => s.topic === event.topic);
    if (handlers.length === 0) throw notFound(`this mod does not hear \`${event.topic}\``);
    guarded(`event ${event.topic}`, () => handlers.forEach((s) => s.run(event)));
  }

  /** Runs the function `call` names; answers its bytes. */
  runFunction(call: Invocation): Uint8Array {
    const f = this.#functions.find((f) => f.name === call.function_);
    if (!f) throw notFound(`this mod provides no function \`${call.function_}\``);
    return guarded(`function ${call.function_}`, () => f.run(call));
  }

  /** Runs the handler of timer `fired.name`. */
  runTimer(fired: Fired): void {
    const t = this.#timers.filter((t) => t.name === fired.name);
    if (t.length === 0) throw notFound(`this mod has no timer \`${fired.name}\``);
    guarded(`timer ${fired.name}`, () => t.forEach((h) => h.run(fired)));
  }

  /** What the mod exports, for componentize-js: `routes`, `init` and `handle` (the `plugin` world),
   * and `guest` and `realtime` (the `full` world's). Export each by name from the mod's module. */
  exports(): FullExports {
    const host = (what: string) => failed(`the host ran ${what} here but this mod has none`);
    const guestExports: typeof guest = {
      declare: () => ({
        hooks: this.#hooks.map((h) => ({ route: { path: h.path, kind: h.kind }, phase: h.phase, priority: h.priority, body: h.body })),
        subscriptions: [...new Set(this.#subscriptions.map((s) => s.topic))],
        functions: this.#functions.map((f) => f.name),
      }),
      before: (hook, request) => {
        if (!this.#hooks.some((h) => h.path === hook && h.phase === "before")) throw host(`before-hook \`${hook}\``);
        return this.runBefore(hook, new Request(request));
      },
      after: (hook, request, response) => {
        if (!this.#hooks.some((h) => h.path === hook && h.phase === "after")) throw host(`after-hook \`${hook}\``);
        const change = this.runAfter(hook, new Request(request), response);
        if (!change || (change.status === undefined && change.headers === undefined && change.body === undefined)) return undefined;
        const body = change.body === undefined || Array.isArray(change.body) ? change.body : [{ tag: "bytes" as const, val: toBytes(change.body) }];
        return { status: change.status, headers: change.headers, body };
      },
      onEvent: (e) => {
        if (!this.#subscriptions.some((s) => s.topic === e.topic)) throw host(`event \`${e.topic}\``);
        this.runEvent(new Event(e.topic, e.payload, e.source, e.session));
      },
      invoke: (c) => {
        if (!this.#functions.some((f) => f.name === c.function)) throw host(`function \`${c.function}\``);
        return this.runFunction(new Invocation(c.function, c.payload, c.caller, c.session));
      },
    };
    // A connection id is `<index>-<secret>`: the index of its route in `declareRealtime`'s list.
    const socketOf = (connection: string) => {
      const index = Number.parseInt(connection.split("-")[0] ?? "", 10);
      const socket = Number.isInteger(index) ? this.#sockets[index] : undefined;
      if (!socket) throw host(`a socket route for connection \`${connection}\``);
      return socket.handlers;
    };
    const realtimeExports: typeof realtime = {
      declareRealtime: () => ({
        sockets: this.#sockets.map((s) => ({ path: s.path, kind: s.kind })),
        timers: this.#periodic.map((p) => ({ name: p.name, everyS: p.everyS })),
      }),
      accept: (connection, request) => {
        const req = new Request(request);
        const socket = this.#sockets.find((s) => s.path === req.route);
        if (!socket) throw host(`socket route \`${req.route}\``);
        const refusal = guarded(`accept ${req.route}`, () => socket.handlers.accept?.(connection, req));
        return refusal ? { tag: "refuse", val: refusal } : { tag: "accept" };
      },
      onMessage: (connection, message: Message) => {
        const handlers = socketOf(connection);
        guarded("socket message", () => handlers.message?.(connection, message.val));
      },
      onClose: (connection, code, reason) => {
        const handlers = socketOf(connection);
        guarded("socket close", () => handlers.close?.(connection, code, reason));
      },
      onTimer: (timer) => this.runTimer(timer),
    };
    return {
      routes: () => this.#routes.map((r) => ({ path: r.path, kind: r.kind })),
      init: () => this.runInit(),
      handle: (request) => {
        const route = this.#routes.find((r) => r.path === request.route);
        if (!route) throw failed(`the host routed \`${request.route}\` here but this mod has no such route`);
        return guarded(`route ${route.path}`, () => route.handler(new Request(request)));
      },
      guest: guestExports,
      realtime: realtimeExports,
    };
  }
}
