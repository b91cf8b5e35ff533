// welcome-pack-ts: examples/welcome-pack in TypeScript, on the SDK (sdk-js/). A mod that works with
// the game (`plugins/emulator`) through all four ways mods work together: its configuration, a hook
// on a game route, a game event, and a call into the game.
//
// Build: `npm ci && npm run build` (or `make polyglot`) → target/polyglot/welcome-pack-ts.wasm, a
// component of the `full` world. Test: `npm test` (under `modhost test-runner`; MODHOST names the
// binary, target/release/modhost by default).
//
// - Config (`config.default.json`, checked against `config.schema.json`; a player overrides it in
//   `<root>/mods/welcome-pack-ts/config.json`): the starter `gifts` and the `blocked_nicknames`.
// - Hook: before the game's `/client/game/profile/create`, refuses a blocked nickname in the game's
//   place, with the envelope the client shows for a refused nickname (err 226, SPT's
//   `NicknameNotValid`).
// - Event: on the game's `profile.created` (only when its `source`, set by the host, is the game),
//   gives the new profile the starter gifts…
// - Call: …through the game's `give-item`, and remembers what it gave (once per session).
// - `GET /welcome-pack-ts/gifts`: the ids this session was given, `[]` before.

import { ModError, Router, answer, calls, config, error, log, ok, proceed, store, type Event, type Request, type Verdict } from "@modhost/sdk";

/** The game's route a new player's nickname arrives on. */
export const CREATE = "/client/game/profile/create";
/** SPT's `BackendErrorCodes.NicknameNotValid`, what its client shows for a refused nickname. */
export const NICKNAME_NOT_VALID = 226;
/** The game's mod id: the only source of `profile.created` this mod believes. */
export const GAME = "emulator";

/** One starter gift: the payload of the game's `give-item`. */
export interface Gift {
  tpl: string;
  count: number;
}

/** The configuration, every field defaulted (the mod also works with no configuration at all). */
export interface Settings {
  gifts: Gift[];
  blocked_nicknames: string[];
}

/** What `config.default.json` says (a test keeps the two equal). */
export const DEFAULTS: Settings = {
  gifts: [{ tpl: "5449016a4bdc2d6f028b456f", count: 1 }],
  blocked_nicknames: ["admin", "moderator", "server"],
};

/** The configuration, over the defaults; a field of the wrong shape is `invalid`. */
export function loadSettings(): Settings {
  const raw = config.get<Partial<Settings>>("");
  const settings: Settings = { ...DEFAULTS, ...raw };
  const gifts = settings.gifts.map((g) => ({ tpl: g.tpl, count: g.count ?? 1 }));
  if (!gifts.every((g) => typeof g.tpl === "string" && Number.isInteger(g.count))) {
    throw new ModError("invalid", `the configured gifts are not {tpl, count}: ${JSON.stringify(settings.gifts)}`);
  }
  return { gifts, blocked_nicknames: settings.blocked_nicknames };
}

/** The store key of what `session` was given. */
const givenKey = (session: string) => `given.${session}`;

/** Refuses a blocked nickname in the game's place; anything else (a body that does not parse
 * included) goes on to the game, which has its own checks and answers. */
export function screen(settings: Settings, request: Request): Verdict {
  let nickname: string;
  try {
    nickname = String(request.json<{ nickname?: unknown }>().nickname ?? "").trim();
  } catch {
    return proceed();
  }
  if (settings.blocked_nicknames.some((b) => b.trim().toLowerCase() === nickname.toLowerCase())) {
    return answer(error(NICKNAME_NOT_VALID, "that nickname is reserved on this server"));
  }
  return proceed();
}

/** Gives each gift through the game (for the event's session: a call carries it); answers the new
 * item ids. A gift the game refuses (`invalid`) is logged and skipped; any other failure is the
 * handler's error, which the host logs. */
function give(gifts: Gift[]): string[] {
  const ids: string[] = [];
  for (const gift of gifts) {
    try {
      ids.push(...calls.call<{ ids: string[] }>(GAME, "give-item", gift).ids);
    } catch (e) {
      if (e instanceof ModError && e.tag === "invalid") {
        log.warn(`gift ${gift.tpl} x${gift.count} refused: ${e.reason}`);
      } else {
        throw e;
      }
    }
  }
  return ids;
}

/** On `profile.created`: the gifts, once per session, when the game says so. */
export function welcome(event: Event): void {
  if (event.source !== GAME) {
    log.warn(`profile.created from mod \`${event.source}\`, not the game: no gift`);
    return;
  }
  if (event.session === undefined) {
    log.warn("profile.created without a session: no gift");
    return;
  }
  if (store.get(givenKey(event.session)) !== undefined) return;
  const ids = give(loadSettings().gifts);
  store.set(givenKey(event.session), ids);
}

export const router = new Router()
  .route("/welcome-pack-ts/gifts", (request) => {
    if (request.session === undefined) return error(1, "gifts are per session: send one");
    return ok(store.get<string[]>(givenKey(request.session)) ?? []);
  })
  .before(CREATE, (request) => screen(loadSettings(), request))
  .on("profile.created", welcome);

// The `full` world's exports: the routes, and the hook and the event through `guest`.
const exported = router.exports();
export const routes = exported.routes;
export const init = exported.init;
export const handle = exported.handle;
export const guest = exported.guest;
export const realtime = exported.realtime;
