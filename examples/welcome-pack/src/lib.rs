//! welcome-pack: a mod that works with the game (`plugins/emulator`) through all four ways mods
//! work together: its configuration, a hook on a game route, a game event, and a call into the game.
//!
//! Run it with the server (from the repository root):
//!
//! ```sh
//! cargo build --release --target wasm32-wasip2 --target-dir target/wasm-guests -p welcome-pack
//! mkdir -p modhost-data/mods/welcome-pack
//! cp examples/welcome-pack/{mod.toml,config.default.json,config.schema.json} modhost-data/mods/welcome-pack/
//! cp target/wasm-guests/wasm32-wasip2/release/welcome_pack.wasm modhost-data/mods/welcome-pack/welcome-pack.wasm
//! make run
//! ```
//!
//! Test it: `cd examples/welcome-pack && cargo test --release` (see `.cargo/config.toml`).
//!
//! What it does:
//! - **Config** (`config.default.json`, checked against `config.schema.json`; a player overrides it in
//!   `<root>/mods/welcome-pack/config.json`): the starter `gifts` and the `blocked_nicknames`.
//! - **Hook**: before the game's `/client/game/profile/create`, refuses a blocked nickname in the
//!   game's place, with the envelope the client shows for a refused nickname (err 226, SPT's
//!   `NicknameNotValid`).
//! - **Event**: on the game's `profile.created`, gives the new profile the starter gifts… (only when
//!   the event's `source`, which the host sets to the emitting mod's id, is the game: a mod the
//!   player granted the topic could emit it too)
//! - **Call**: …through the game's `give-item`, and remembers what it gave (once per session).
//! - `GET /welcome-pack/gifts`: the ids this session was given, `[]` before.

use modhost_sdk::{Event, Request, Response, Result, Router, Verdict, calls, config, envelope, export, log, store};
use serde::{Deserialize, Serialize};

/// The game's route a new player's nickname arrives on.
const CREATE: &str = "/client/game/profile/create";
/// SPT's `BackendErrorCodes.NicknameNotValid`, what its client shows for a refused nickname.
const NICKNAME_NOT_VALID: i32 = 226;
/// The game's mod id: the only source of `profile.created` this mod believes.
const GAME: &str = "emulator";

fn router() -> Router {
    Router::new().route("/welcome-pack/gifts", gifts).before(CREATE, screen_nickname).on("profile.created", welcome)
}

/// The configuration: `config.default.json` with the player's file merged over it. Every field
/// has a default, so the mod also works with no configuration at all (as under the test runner).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Settings {
    gifts: Vec<Gift>,
    blocked_nicknames: Vec<String>,
}

impl Default for Settings {
    /// What `config.default.json` says (a test keeps the two equal).
    fn default() -> Self {
        Settings {
            gifts: vec![Gift { tpl: "5449016a4bdc2d6f028b456f".into(), count: 1 }],
            blocked_nicknames: vec!["admin".into(), "moderator".into(), "server".into()],
        }
    }
}

impl Settings {
    fn load() -> Result<Settings> {
        config::get("")
    }
}

/// One starter gift: the payload of the game's `give-item`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Gift {
    tpl: String,
    #[serde(default = "one")]
    count: u32,
}

fn one() -> u32 {
    1
}

/// What the game's `give-item` answers.
#[derive(Debug, Deserialize)]
struct Given {
    ids: Vec<String>,
}

/// The store key of what `session` was given.
fn given_key(session: &str) -> String {
    format!("given.{session}")
}

/// The before-hook on [`CREATE`].
fn screen_nickname(req: &Request) -> Result<Verdict> {
    Ok(screen(&Settings::load()?, req))
}

/// Refuses a blocked nickname in the game's place; anything else (a body that does not parse
/// included) goes on to the game, which has its own checks and answers.
fn screen(settings: &Settings, req: &Request) -> Verdict {
    #[derive(Deserialize)]
    struct Create {
        #[serde(default)]
        nickname: String,
    }
    let Ok(create) = req.json::<Create>() else { return Verdict::Proceed };
    let nickname = create.nickname.trim();
    if settings.blocked_nicknames.iter().any(|b| b.trim().eq_ignore_ascii_case(nickname)) {
        return Verdict::Answer(envelope::error(NICKNAME_NOT_VALID, "that nickname is reserved on this server"));
    }
    Verdict::Proceed
}

/// On `profile.created`: the gifts, once per session, when the game says so. The host sets the
/// event's source to the mod that emitted it; any other source is ignored, whatever it sent.
fn welcome(event: &Event) -> Result<()> {
    if event.source() != GAME {
        log::warn(&format!("profile.created from mod `{}`, not the game: no gift", event.source()));
        return Ok(());
    }
    let Some(session) = event.session() else {
        log::warn("profile.created without a session: no gift");
        return Ok(());
    };
    if store::get::<Vec<String>>(&given_key(session))?.is_some() {
        return Ok(());
    }
    let ids = give(&Settings::load()?.gifts)?;
    store::set(&given_key(session), &ids)?;
    Ok(())
}

/// Gives each gift through the game (for the event's session: a call carries it); answers the new
/// item ids. A gift the game refuses is logged and skipped (a template the player's db lacks, say);
/// any other failure is the handler's error, which the host logs.
fn give(gifts: &[Gift]) -> Result<Vec<String>> {
    let mut ids = Vec::new();
    for gift in gifts {
        match calls::call::<Given>(GAME, "give-item", gift) {
            Ok(given) => ids.extend(given.ids),
            Err(modhost_sdk::Error::Invalid(why)) => {
                log::warn(&format!("gift {} x{} refused: {why}", gift.tpl, gift.count))
            }
            Err(other) => return Err(other),
        }
    }
    Ok(ids)
}

/// `GET /welcome-pack/gifts`: what this session was given.
fn gifts(req: &Request) -> Result<Response> {
    let Some(session) = req.session() else {
        return Ok(envelope::error(1, "gifts are per session: send one"));
    };
    let ids: Vec<String> = store::get(&given_key(session))?.unwrap_or_default();
    Ok(envelope::ok(&ids))
}

export!(router());

#[cfg(test)]
mod tests {
    use super::*;
    use modhost_sdk::Error;
    use modhost_sdk::envelope::Envelope;

    const SESSION: &str = "0123456789abcdef01234567";

    fn create(nickname: &str) -> Request {
        Request::post(CREATE)
            .with_session(SESSION)
            .with_json_body(&serde_json::json!({"nickname": nickname, "side": "Bear"}))
    }

    #[test]
    fn the_shipped_defaults_are_the_built_in_ones() {
        let shipped: Settings =
            serde_json::from_str(include_str!("../config.default.json")).expect("config.default.json");
        assert_eq!(shipped, Settings::default());
    }

    #[test]
    fn the_config_reads_with_or_without_a_file() -> Result<()> {
        // Whatever the runner loads (the shipped defaults, or `{}`), it reads as settings.
        let settings = Settings::load()?;
        assert!(settings.gifts.iter().all(|g| (1..=100).contains(&g.count)), "{settings:?}");
        Ok(())
    }

    #[test]
    fn a_blocked_nickname_is_answered_in_the_games_place() -> Result<()> {
        let router = router();
        // Through the router, with the configured list (blocked by default).
        for nickname in ["admin", " Admin ", "MODERATOR"] {
            let Verdict::Answer(answer) = router.run_before(CREATE, &create(nickname))? else {
                panic!("{nickname:?} goes through");
            };
            let env: Envelope<serde_json::Value> = answer.body_json()?;
            assert_eq!((env.err, env.data), (NICKNAME_NOT_VALID, None), "{nickname:?}");
        }
        Ok(())
    }

    #[test]
    fn other_nicknames_and_odd_bodies_go_on_to_the_game() {
        let settings = Settings { blocked_nicknames: vec!["bob".into()], ..Settings::default() };
        for request in [create("admin"), create("bobby"), Request::post(CREATE).with_body(b"not json".to_vec())] {
            assert!(matches!(screen(&settings, &request), Verdict::Proceed), "{:?}", request.body());
        }
        assert!(matches!(screen(&settings, &create("BOB")), Verdict::Answer(_)));
    }

    #[test]
    fn without_the_game_the_gift_fails_and_nothing_is_remembered() -> Result<()> {
        // Under the test runner no other mod runs: the call answers not-found.
        let event = Event::new("profile.created", br#"{"session":"x","nickname":"Bob","side":"Bear"}"#.to_vec())
            .from("emulator")
            .with_session(SESSION);
        let outcome = router().run_event(&event);
        assert!(matches!(outcome, Err(Error::NotFound(_))), "{outcome:?}");
        let answer: Envelope<Vec<String>> =
            router().call(&Request::get("/welcome-pack/gifts").with_session(SESSION))?.body_json()?;
        assert_eq!((answer.err, answer.data), (0, Some(vec![])));
        Ok(())
    }

    #[test]
    fn an_event_from_another_mod_than_the_game_gives_nothing() -> Result<()> {
        // From the game, the gift is tried (and fails here, where the game is not running); from
        // anyone else, nothing is called and nothing remembered.
        for source in ["forger", ""] {
            let event = Event::new("profile.created", b"{}".to_vec()).from(source).with_session(SESSION);
            router().run_event(&event)?;
        }
        let answer: Envelope<Vec<String>> =
            router().call(&Request::get("/welcome-pack/gifts").with_session(SESSION))?.body_json()?;
        assert_eq!(answer.data, Some(vec![]));
        Ok(())
    }

    #[test]
    fn a_session_already_given_to_is_not_given_again() -> Result<()> {
        let session = "89abcdef0123456789abcdef";
        store::set(&given_key(session), &["old-gift"])?;
        let event = Event::new("profile.created", b"{}".to_vec()).from(GAME).with_session(session);
        router().run_event(&event)?; // no call made: it would fail here
        let answer: Envelope<Vec<String>> =
            router().call(&Request::get("/welcome-pack/gifts").with_session(session))?.body_json()?;
        assert_eq!(answer.data, Some(vec!["old-gift".to_owned()]));
        Ok(())
    }
}
