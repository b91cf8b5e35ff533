// welcome-pack-ts's tests, the Rust welcome-pack's own: `npm test` runs them under
// `modhost test-runner` (a generated db, a scratch store, this folder's mod.toml and config).

import { Event, ModError, Request, assert, assertEqual, assertThrows, bodyJson, store, test, tests, type Envelope } from "@modhost/sdk";
import { CREATE, DEFAULTS, GAME, NICKNAME_NOT_VALID, loadSettings, router, screen } from "./mod.js";
// esbuild bundles the shipped defaults in, as the Rust test's include_str! does.
import shipped from "../config.default.json";

const SESSION = "0123456789abcdef01234567";

const create = (nickname: string) => Request.post(CREATE, { nickname, side: "Bear" }).withSession(SESSION);

function gifts(session: string): Envelope<string[]> {
  return bodyJson<Envelope<string[]>>(router.call(Request.get("/welcome-pack-ts/gifts").withSession(session)));
}

test("the shipped defaults are the built-in ones", () => {
  assertEqual(shipped, DEFAULTS);
});

test("the config reads with or without a file", () => {
  const settings = loadSettings();
  assert(settings.gifts.every((g) => g.count >= 1 && g.count <= 100), JSON.stringify(settings));
});

test("a blocked nickname is answered in the game's place", () => {
  for (const nickname of ["admin", " Admin ", "MODERATOR"]) {
    const verdict = router.runBefore(CREATE, create(nickname));
    assert(verdict.tag === "answer", `${JSON.stringify(nickname)} goes through`);
    const env = bodyJson<Envelope>(verdict.val);
    assertEqual([env.err, env.data], [NICKNAME_NOT_VALID, null], nickname);
  }
});

test("other nicknames and odd bodies go on to the game", () => {
  const settings = { ...DEFAULTS, blocked_nicknames: ["bob"] };
  for (const request of [create("admin"), create("bobby"), Request.post(CREATE, "not json")]) {
    assertEqual(screen(settings, request).tag, "proceed", request.text());
  }
  assertEqual(screen(settings, create("BOB")).tag, "answer");
});

test("without the game the gift fails and nothing is remembered", () => {
  // Under the test runner no other mod runs: the call answers not-found.
  const event = new Event("profile.created", new TextEncoder().encode('{"nickname":"Bob"}'), GAME, SESSION);
  const thrown = assertThrows(() => router.runEvent(event), "the gift did not fail");
  assert(thrown instanceof ModError && thrown.tag === "not-found", String(thrown));
  assertEqual(gifts(SESSION), { err: 0, errmsg: null, data: [] });
});

test("an event from another mod than the game gives nothing", () => {
  for (const source of ["forger", ""]) {
    router.runEvent(new Event("profile.created", new TextEncoder().encode("{}"), source, SESSION));
  }
  assertEqual(gifts(SESSION).data, []);
});

test("a session already given to is not given again", () => {
  const session = "89abcdef0123456789abcdef";
  store.set(`given.${session}`, ["old-gift"]);
  router.runEvent(new Event("profile.created", new TextEncoder().encode("{}"), GAME, session)); // no call made: it would fail here
  assertEqual(gifts(session).data, ["old-gift"]);
});

export const run = tests();
