//! Every answer in the deep shape of SPT's models: a player goes through the launcher, the boot, the
//! menu, an inventory action and a raid on a new root (the generated database), and each route's
//! answer is checked at every depth against the SPT model its callback writes (`modhost_tests::shapes`,
//! the trees in `tests/data/spt-shapes.json`, read from SPT's `Models/` by `spt-shapes`): every member
//! SPT always writes is there, and every member there has the JSON kind SPT writes. Big dictionaries
//! (`/client/items`, `/client/locale/en`) are checked entry by entry.
//!
//! Adding a route is one line in [`routes`] (or, for one that needs a raid or an item, in the test
//! beside the call): its path, body and model, in `modhost_tests::shapes`'s syntax.

use super::emulator::{A, Player, emulator, move_to};
use modhost_tests::client::{Call, send};
use modhost_tests::shapes::Shapes;
use serde_json::{Value, json};
use std::net::SocketAddr;

/// How an answer is framed.
#[derive(Clone, Copy)]
enum Form {
    /// `{"err", "errmsg", "data"}`: SPT's `GetBodyResponseData<T>`.
    Envelope,
    /// The model itself.
    Bare,
}

/// A route, its body and the SPT model of its answer.
struct Route {
    path: String,
    body: Value,
    model: &'static str,
    form: Form,
}

fn env(path: &str, body: Value, model: &'static str) -> Route {
    Route { path: path.to_owned(), body, model, form: Form::Envelope }
}

fn bare(path: &str, body: Value, model: &'static str) -> Route {
    Route { path: path.to_owned(), body, model, form: Form::Bare }
}

/// The routes a player with a profile calls, each with the model SPT's callback answers (from the
/// callbacks and controllers its routers name; `any` where SPT answers an anonymous object or null).
fn routes(trader: &str) -> Vec<Route> {
    vec![
        // The launcher (bare).
        bare("/launcher/server/connect", json!({}), "ConnectResponse"),
        bare("/launcher/profile/info", json!({}), "MiniProfile"),
        bare("/launcher/profiles", json!({}), "[MiniProfile]"),
        bare("/launcher/v2/ping", json!({}), "LauncherV2PingResponse"),
        bare("/launcher/v2/types", json!({}), "LauncherV2TypesResponse"),
        bare("/launcher/v2/version", json!({}), "LauncherV2VersionResponse"),
        bare("/launcher/v2/mods", json!({}), "LauncherV2ModsResponse"),
        bare("/launcher/v2/profiles", json!({}), "LauncherV2ProfilesResponse"),
        // The boot.
        env("/client/game/mode", json!({"sessionMode": "pve"}), "GameModeResponse"),
        env("/client/game/start", json!({}), "GameStartResponse"),
        env("/client/game/config", json!({}), "GameConfigResponse"),
        env("/client/game/keepalive", json!({}), "GameKeepAliveResponse"),
        env("/client/settings", json!({}), "SettingsBase"),
        env("/client/globals", json!({}), "Globals"),
        env("/client/items", json!({}), "{TemplateItem}"),
        env("/client/customization", json!({}), "{CustomizationItem}"),
        env("/client/account/customization", json!({}), "[string]"),
        env("/client/languages", json!({}), "{string}"),
        env("/client/locale/en", json!({}), "{string}"),
        env("/client/trading/api/traderSettings", json!({}), "[TraderBase]"),
        env("/client/game/profile/list", json!({}), "[PmcData]"),
        env("/client/game/profile/nickname/reserved", json!({}), "string"),
        env("/client/profile/status", json!({}), "GetProfileStatusResponseData"),
        // The menu.
        env("/client/notifier/channel/create", json!({}), "NotifierChannel"),
        env("/client/weather", json!({}), "WeatherData"),
        env("/client/locations", json!({}), "LocationsGenerateAllResponse"),
        env("/client/handbook/templates", json!({}), "HandbookBase"),
        env("/client/hideout/areas", json!({}), "[HideoutArea]"),
        env("/client/hideout/qte/list", json!({}), "[QteData]"),
        env("/client/hideout/settings", json!({}), "HideoutSettingsBase"),
        env("/client/hideout/production/recipes", json!({}), "HideoutProductionData"),
        env("/client/hideout/customization/offer/list", json!({}), "HideoutCustomisation"),
        env("/client/customization/storage", json!({}), "[CustomisationStorage]"),
        env("/client/builds/list", json!({}), "UserBuilds"),
        env("/client/friend/list", json!({}), "GetFriendListDataResponse"),
        env("/client/mail/dialog/list", json!({"limit": 30, "offset": 0}), "[DialogueInfo]"),
        env("/client/chatServer/list", json!({"VersionId": "bgkidft87ddd", "Id": "0"}), "[ChatServer]"),
        env("/client/server/list", json!({}), "[ServerDetails]"),
        env("/client/match/group/current", json!({}), "CurrentGroupResponse"),
        env("/client/checkVersion", json!({}), "CheckVersionResponse"),
        env("/client/quest/list", json!({"completed": true}), "[Quest]"),
        env("/client/repeatalbeQuests/activityPeriods", json!({}), "[PmcDataRepeatableQuest]"),
        env("/client/achievement/list", json!({}), "GetAchievementsResponse"),
        env("/client/achievement/statistic", json!({}), "CompletedAchievementsResponse"),
        env("/client/prestige/list", json!({}), "Prestige"),
        env("/client/survey", json!({}), "SurveyResponseData"),
        env("/client/items/prices", json!({}), "{number}"),
        env(&format!("/client/trading/api/getTrader/{trader}"), json!({}), "TraderBase"),
        env(&format!("/client/trading/api/getTraderAssort/{trader}"), json!({}), "TraderAssort"),
        env(&format!("/client/items/prices/{trader}"), json!({}), "GetItemPricesResponse"),
        // Before a raid.
        env("/client/localGame/weather", json!({}), "GetLocalWeatherResponseData"),
        env("/client/insurance/items/list/cost", json!({"traders": [], "items": []}), "{{number}}"),
    ]
}

/// Calls `route` on `session` and checks its answer; adds each failure, prefixed with the route.
async fn check(shapes: &Shapes, addr: SocketAddr, session: &str, route: &Route, failures: &mut Vec<String>) -> Value {
    let reply = send(addr, &Call::post(&route.path, route.body.to_string().as_bytes()).session(session))
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", route.path));
    assert_eq!(reply.status, 200, "{}: {}", route.path, reply.text());
    let answer: Value = serde_json::from_slice(&reply.body())
        .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {}", route.path, reply.text()));
    let model = match route.form {
        Form::Envelope => {
            assert_eq!(answer["err"], 0, "{}: {answer}", route.path);
            format!("GetBodyResponseData<{}>", route.model)
        }
        Form::Bare => route.model.to_owned(),
    };
    for line in shapes.check(&model, &answer, "").lines() {
        // A route called twice (the profile list before and after the raid) fails once per failure.
        let line = format!("{} ({}): {line}", route.path, route.model);
        if !failures.contains(&line) {
            failures.push(line);
        }
    }
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_has_the_deep_shape_of_spts_models() {
    let shapes = Shapes::load();
    let server = emulator().await;
    let addr = server.addr;
    let mut failures = Vec::new();

    // The launcher: register and log in; the session is the account's.
    let account = json!({"username": "shaper", "password": "hunter22", "edition": "Standard"});
    let register = send(addr, &Call::post("/launcher/profile/register", account.to_string().as_bytes())).await.unwrap();
    assert_eq!(register.text(), "OK");
    let session =
        send(addr, &Call::post("/launcher/profile/login", account.to_string().as_bytes())).await.unwrap().text();
    assert_eq!(session.len(), 24, "login answered {session:?}");

    // A character, made and selected as the client does.
    let created = env(
        "/client/game/profile/create",
        json!({"side": "Usec", "nickname": "Shaper", "headId": "5cde96047d6c8b20b577f016", "voiceId": "5fc1223595572123ae7384a2"}),
        "CreateProfileResponse",
    );
    let uid = check(&shapes, addr, &session, &created, &mut failures).await["data"]["uid"].as_str().unwrap().to_owned();
    let select = env("/client/game/profile/select", json!({"uid": uid}), "SelectProfileResponse");
    check(&shapes, addr, &session, &select, &mut failures).await;
    let traders = check(
        &shapes,
        addr,
        &session,
        &env("/client/trading/api/traderSettings", json!({}), "[TraderBase]"),
        &mut failures,
    )
    .await;
    let trader = traders["data"][0]["_id"].as_str().expect("a trader").to_owned();

    let table = routes(&trader);
    for route in &table {
        check(&shapes, addr, &session, route, &mut failures).await;
    }

    // An item event, applied and refused: SPT's `ItemEventRouterResponse` either way.
    let player = Player::new(addr, A, "Mover").await;
    for action in [
        move_to(&player.roubles, &player.stash, "hideout", 9, 67),
        move_to(&player.roubles, &player.stash, "hideout", 10, 0),
    ] {
        let moving =
            env("/client/game/profile/items/moving", json!({"data": [action], "tm": 1}), "ItemEventRouterResponse");
        check(&shapes, addr, A, &moving, &mut failures).await;
    }

    // A raid: start, bots, end, and the profile it leaves.
    let locations = check(
        &shapes,
        addr,
        &session,
        &env("/client/locations", json!({}), "LocationsGenerateAllResponse"),
        &mut failures,
    )
    .await;
    let map = locations["data"]["locations"]
        .as_object()
        .and_then(|all| all.values().find_map(|l| l["Id"].as_str()))
        .expect("a location")
        .to_owned();
    let start = env(
        "/client/match/local/start",
        json!({"location": map, "playerSide": "Pmc", "timeVariant": "CURR", "mode": "PVE_OFFLINE"}),
        "StartLocalRaidResponseData",
    );
    let started = check(&shapes, addr, &session, &start, &mut failures).await;
    let bots = json!({"conditions": [{"Role": "assault", "Limit": 2, "Difficulty": "normal"}]});
    check(&shapes, addr, &session, &env("/client/game/bot/generate", bots, "[BotBase]"), &mut failures).await;
    let list =
        check(&shapes, addr, &session, &env("/client/game/profile/list", json!({}), "[PmcData]"), &mut failures).await;
    let profile = list["data"].as_array().unwrap().iter().find(|p| p["_id"] == uid.as_str()).unwrap().clone();
    let end = json!({"serverId": started["data"]["serverId"], "results": {"result": "Survived", "exitName": "Gate 3",
        "playTime": 600, "profile": profile}});
    check(&shapes, addr, &session, &env("/client/match/local/end", end, "any"), &mut failures).await;
    check(&shapes, addr, &session, &env("/client/game/profile/list", json!({}), "[PmcData]"), &mut failures).await;

    assert!(
        failures.is_empty(),
        "{} answers differ from SPT's models (commit {}):\n{}",
        failures.len(),
        shapes.commit,
        failures.join("\n")
    );
}
