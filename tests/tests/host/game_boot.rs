//! The SPT launcher and the client's boot, over the wire, in the order they call: register, login
//! (plain text), the launcher's other calls, then the boot with the session login handed out. Each
//! answer is checked for the shape the launcher or the client reads: its keys, their kinds, and
//! whether it comes bare or in the envelope.

use crate::emulator::emulator;
use modhost_tests::client::{Call, Reply, send};
use serde_json::{Value, json};
use std::net::SocketAddr;

/// One call with a JSON body (and a session, when given); the answer whatever its status.
async fn call(addr: SocketAddr, path: &str, session: Option<&str>, body: Value) -> Reply {
    let mut request = Call::post(path, body.to_string().as_bytes());
    if let Some(session) = session {
        request = request.session(session);
    }
    send(addr, &request).await.unwrap()
}

/// A bare JSON answer (200).
async fn bare(addr: SocketAddr, path: &str, session: Option<&str>, body: Value) -> Value {
    let reply = call(addr, path, session, body).await;
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    let value = reply.json();
    assert!(
        value.get("err").is_none() || value.get("data").is_none(),
        "{path} answers bare, not the envelope: {value}"
    );
    value
}

/// A plain-text answer (200).
async fn text(addr: SocketAddr, path: &str, body: Value) -> String {
    let reply = call(addr, path, None, body).await;
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    reply.text()
}

/// An enveloped answer (200, `err` 0): its `data`.
async fn data(addr: SocketAddr, path: &str, session: &str, body: Value) -> Value {
    let reply = call(addr, path, Some(session), body).await;
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    let envelope = reply.json();
    assert_eq!(envelope["err"], 0, "{path}: {envelope}");
    assert!(envelope.as_object().unwrap().contains_key("data"), "{path}: {envelope}");
    envelope["data"].clone()
}

/// An enveloped error: its code.
async fn refused(addr: SocketAddr, path: &str, session: &str, body: Value) -> (i64, String) {
    let reply = call(addr, path, Some(session), body).await;
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    let envelope = reply.json();
    (envelope["err"].as_i64().unwrap(), envelope["errmsg"].as_str().unwrap_or_default().to_owned())
}

fn is_id(id: &str) -> bool {
    id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> =
        value.as_object().unwrap_or_else(|| panic!("an object: {value}")).keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys
}

async fn register(addr: SocketAddr, username: &str, password: &str) -> String {
    let body = json!({"username": username, "password": password, "edition": "Standard"});
    text(addr, "/launcher/profile/register", body).await
}

async fn login(addr: SocketAddr, username: &str, password: &str) -> String {
    text(addr, "/launcher/profile/login", json!({"username": username, "password": password})).await
}

#[tokio::test]
async fn the_launcher_then_the_boot_in_client_order() {
    let server = emulator().await;
    let addr = server.addr;

    // The launcher finds the server.
    assert_eq!(bare(addr, "/launcher/ping", None, json!({})).await, json!("pong!"));
    let connect = bare(addr, "/launcher/server/connect", None, json!({})).await;
    assert_eq!(keys(&connect), ["backendUrl", "editions", "name", "profileDescriptions"]);
    assert!(connect["backendUrl"].as_str().unwrap().starts_with("http://"), "{connect}");
    assert!(connect["name"].is_string());
    let editions: Vec<&str> = connect["editions"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
    assert!(editions.contains(&"Standard"), "{connect}");
    for edition in &editions {
        let description = connect["profileDescriptions"][*edition].as_str().unwrap();
        assert!(!description.is_empty() && !description.starts_with("launcher-"), "a text, not its key: {description}");
    }
    assert!(bare(addr, "/launcher/server/version", None, json!({})).await.is_string());
    assert!(
        bare(addr, "/launcher/profile/compatibleTarkovVersion", None, json!({}))
            .await
            .as_str()
            .unwrap()
            .starts_with("0.")
    );
    assert_eq!(bare(addr, "/launcher/server/loadedServerMods", None, json!({})).await, json!({}));

    // Register, then log in: plain text both.
    assert_eq!(register(addr, "Runner", "hunter2").await, "OK");
    assert_eq!(register(addr, "rUNNER", "other").await, "FAILED", "a username is taken whatever its case");
    assert_eq!(login(addr, "Runner", "wrong").await, "FAILED");
    assert_eq!(login(addr, "Nobody", "hunter2").await, "FAILED");
    let session = login(addr, "Runner", "hunter2").await;
    assert!(is_id(&session), "login answers the account id as plain text: {session:?}");
    assert_eq!(login(addr, "runner", "hunter2").await, session, "the name is found whatever its case");
    let s = session.as_str();

    let info = bare(addr, "/launcher/profile/get", None, json!({"username": "Runner", "password": "hunter2"})).await;
    assert_eq!(keys(&info), ["aid", "edition", "id", "scavId", "username", "wipe"], "no password comes back");
    assert_eq!(
        (info["id"].as_str(), info["username"].as_str(), info["edition"].as_str()),
        (Some(s), Some("Runner"), Some("Standard"))
    );
    assert!(is_id(info["scavId"].as_str().unwrap()) && info["aid"].is_u64() && info["wipe"] == true, "{info}");
    assert_eq!(
        bare(addr, "/launcher/profile/get", None, json!({"username": "Runner", "password": "x"})).await,
        Value::Null
    );

    let card = bare(addr, "/launcher/profile/info", Some(s), json!({})).await;
    let card_keys = [
        "currexp",
        "currlvl",
        "edition",
        "hasPassword",
        "maxlvl",
        "nextlvl",
        "nickname",
        "prevexp",
        "profileId",
        "side",
        "sptData",
        "username",
    ];
    assert_eq!(keys(&card), card_keys);
    assert_eq!(
        (card["nickname"].as_str(), card["side"].as_str(), card["currlvl"].as_i64()),
        (Some("unknown"), Some("unknown"), Some(0))
    );
    assert_eq!((card["profileId"].as_str(), card["hasPassword"].as_bool()), (Some(s), Some(true)));
    assert_eq!(card["maxlvl"], 78, "the generated table has SPT's 79 levels");
    assert_eq!(card["nextlvl"], 1000, "SPT's experience to reach level 2");
    assert!(card["sptData"]["mods"].is_array() && card["sptData"]["version"].is_string(), "{card}");
    let cards = bare(addr, "/launcher/profiles", None, json!({})).await;
    assert_eq!(cards.as_array().unwrap().len(), 1, "{cards}");
    assert_eq!(cards[0]["username"], "Runner");
    assert_eq!(bare(addr, "/launcher/server/serverModsUsedByProfile", Some(s), json!({})).await, json!([]));

    // The client plugins' settings: bare values.
    assert!(bare(addr, "/singleplayer/settings/version", Some(s), json!({})).await["Version"].is_string());
    assert_eq!(bare(addr, "/singleplayer/bundles", Some(s), json!({})).await, json!([]));
    assert_eq!(bare(addr, "/singleplayer/moddedTraders", Some(s), json!({})).await, json!({"clothingService": []}));
    let logging = bare(addr, "/singleplayer/enableBSGlogging", Some(s), json!({})).await;
    assert!(logging["verbosity"].is_u64() && logging["sendToServer"].is_boolean(), "{logging}");
    let release = bare(addr, "/singleplayer/release", Some(s), json!({})).await;
    for text in [
        "betaDisclaimerText",
        "betaDisclaimerAcceptText",
        "serverModsLoadedText",
        "clientModsLoadedText",
        "releaseSummaryText",
    ] {
        assert!(release[text].is_string(), "{text}: {release}");
    }
    assert_eq!((release["isBeta"].as_bool(), release["isModdable"].as_bool()), (Some(false), Some(true)));
    assert!(release["betaDisclaimerTimeoutDelay"].is_u64(), "{release}");
    let logged = data(addr, "/singleplayer/log", s, json!({"Source": "plugin", "Level": 3, "Message": "hello"})).await;
    assert_eq!(logged, Value::Null);

    // The boot: enveloped.
    assert_eq!(data(addr, "/client/menu/locale/en", s, json!({})).await["menu"]["Play"], "Play");
    assert_eq!(data(addr, "/client/menu/locale/zz", s, json!({})).await["menu"]["Play"], "Play", "English otherwise");
    let mode = data(addr, "/client/game/mode", s, json!({"sessionMode": "pve"})).await;
    assert_eq!(keys(&mode), ["backendUrl", "gameMode"]);
    assert_eq!(mode["gameMode"], "pve");
    assert_eq!(
        data(addr, "/client/game/version/validate", s, json!({"version": {}, "develop": true})).await,
        Value::Null
    );
    assert_eq!(data(addr, "/client/languages", s, json!({})).await["en"], "English");
    let config = data(addr, "/client/game/config", s, json!({})).await;
    assert_eq!(
        keys(&config),
        [
            "backend",
            "isGameSynced",
            "lang",
            "languages",
            "ndaFree",
            "purchasedGames",
            "reportAvailable",
            "sessionMode",
            "taxonomy",
            "totalInGame",
            "twitchEventMember",
            "useProtobuf",
            "utc_time",
        ],
        "no profile yet: SPT leaves out aid and activeProfileId"
    );
    assert_eq!(keys(&config["backend"]), ["Lobby", "Main", "Messaging", "RagFair", "Trading"]);
    assert_eq!(config["purchasedGames"], json!({"eft": true, "arena": false}));
    assert_eq!(config["sessionMode"], "pve");
    assert!(data(addr, "/client/game/start", s, json!({})).await["utc_time"].is_u64());
    let items = data(addr, "/client/items", s, json!({})).await;
    assert_eq!(items["5449016a4bdc2d6f028b456f"]["_props"]["StackMaxSize"], 500000);
    let customization = data(addr, "/client/customization", s, json!({})).await;
    let wearable = data(addr, "/client/account/customization", s, json!({})).await;
    assert!(!wearable.as_array().unwrap().is_empty());
    for id in wearable.as_array().unwrap() {
        assert_eq!(customization[id.as_str().unwrap()]["_type"], "Item", "{id}");
    }
    assert!(data(addr, "/client/globals", s, json!({})).await["config"].is_object());
    let traders = data(addr, "/client/trading/api/traderSettings", s, json!({})).await;
    let traders = traders.as_array().unwrap();
    assert!(traders.iter().any(|t| t["nickname"] == "Prapor"), "{traders:?}");
    for trader in traders {
        assert!(
            trader["_id"].is_string() && trader["currency"].is_string() && trader["loyaltyLevels"].is_array(),
            "{trader}"
        );
    }
    assert!(traders.windows(2).all(|w| w[0]["_id"].as_str() < w[1]["_id"].as_str()), "in id order");
    assert!(data(addr, "/client/settings", s, json!({})).await["config"]["KeepAliveInterval"].is_u64());
    assert_eq!(
        data(addr, "/client/game/profile/list", s, json!({})).await,
        json!([]),
        "a new account has no character"
    );
    assert!(data(addr, "/client/locale/en", s, json!({})).await["5449016a4bdc2d6f028b456f Name"].is_string());
    assert_eq!(data(addr, "/client/game/keepalive", s, json!({})).await["msg"], "OK");

    // The character.
    assert_eq!(data(addr, "/client/game/profile/nickname/reserved", s, json!({})).await, "Runner");
    assert_eq!(refused(addr, "/client/game/profile/nickname/validate", s, json!({"nickname": "ab"})).await.0, 226);
    let valid = data(addr, "/client/game/profile/nickname/validate", s, json!({"nickname": "Runner"})).await;
    assert_eq!(valid, json!({"status": "ok"}));
    let create =
        json!({"side": "Bear", "nickname": "Runner", "headId": "5cc2e4d014c02e000d0115f8", "voiceId": "Bear_2"});
    let uid = data(addr, "/client/game/profile/create", s, create).await["uid"].as_str().unwrap().to_owned();
    assert!(is_id(&uid));
    let list = data(addr, "/client/game/profile/list", s, json!({})).await;
    let list = list.as_array().unwrap();
    assert!((1..=2).contains(&list.len()), "the PMC, then the scav when there is one: {list:?}");
    let pmc = &list[0];
    assert_eq!(pmc["_id"], uid.as_str());
    assert_eq!(pmc["savage"], info["scavId"], "the PMC names the account's scav");
    assert_eq!((pmc["Info"]["Nickname"].as_str(), pmc["Info"]["Side"].as_str()), (Some("Runner"), Some("Bear")));
    assert_eq!(pmc["Info"]["Voice"], "Bear_2");
    assert_eq!(pmc["Customization"]["Head"], "5cc2e4d014c02e000d0115f8");
    let inventory = &pmc["Inventory"];
    let ids: Vec<&str> = inventory["items"].as_array().unwrap().iter().map(|i| i["_id"].as_str().unwrap()).collect();
    assert!(ids.iter().all(|id| is_id(id) && !id.starts_with("tpl0")), "fresh ids, not the template's: {ids:?}");
    for member in ["equipment", "stash", "questRaidItems", "questStashItems", "sortingTable"] {
        assert!(ids.contains(&inventory[member].as_str().unwrap()), "{member} names one of the items");
    }
    for item in inventory["items"].as_array().unwrap() {
        if let Some(parent) = item["parentId"].as_str() {
            assert!(ids.contains(&parent), "{item}: its parent is one of the items");
        }
    }
    let config = data(addr, "/client/game/config", s, json!({})).await;
    assert_eq!(config["activeProfileId"], uid.as_str());
    assert!(config["aid"].is_u64(), "{config}");
    assert_eq!(data(addr, "/client/game/profile/select", s, json!({"uid": uid})).await, json!({"status": "ok"}));
    let status = data(addr, "/client/profile/status", s, json!({})).await;
    assert_eq!(status["maxPveCountExceeded"], false);
    let profiles = status["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 2, "{status}");
    assert_eq!((&profiles[0]["profileid"], profiles[1]["profileid"].as_str()), (&info["scavId"], Some(uid.as_str())));
    for profile in profiles {
        assert_eq!(keys(profile), ["ip", "port", "profileid", "sid", "status"]);
        assert_eq!(profile["status"], "Free");
    }
    let settings = json!({"memberCategory": 2, "squadInviteRestriction": true});
    assert_eq!(data(addr, "/client/profile/settings", s, settings).await, true);
    let pmc = data(addr, "/client/game/profile/list", s, json!({})).await[0].clone();
    assert_eq!(
        (&pmc["Info"]["SelectedMemberCategory"], &pmc["Info"]["SquadInviteRestriction"]),
        (&json!(2), &json!(true))
    );
    assert_eq!(data(addr, "/client/game/logout", s, json!({})).await, json!({"status": "ok"}));

    // The launcher's card shows the character now.
    let card = bare(addr, "/launcher/profile/info", Some(s), json!({})).await;
    assert_eq!(keys(&card), card_keys);
    assert_eq!(
        (card["nickname"].as_str(), card["side"].as_str(), card["currlvl"].as_i64()),
        (Some("Runner"), Some("Bear"), Some(1))
    );
    assert_eq!((card["prevexp"].as_i64(), card["nextlvl"].as_i64()), (Some(0), Some(1000)));

    // Another account cannot take the nickname; all of it survives a restart.
    assert_eq!(register(addr, "Second", "").await, "OK");
    let other = login(addr, "Second", "").await;
    assert!(is_id(&other));
    assert_eq!(
        refused(addr, "/client/game/profile/nickname/validate", &other, json!({"nickname": "RUNNER"})).await.0,
        225
    );
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let server = again.start().await.unwrap();
    assert_eq!(login(server.addr, "Runner", "hunter2").await, session);
    assert_eq!(data(server.addr, "/client/game/profile/list", s, json!({})).await[0]["_id"], uid.as_str());
    let cards = bare(server.addr, "/launcher/profiles", None, json!({})).await;
    assert_eq!(cards.as_array().unwrap().len(), 2, "{cards}");
}

#[tokio::test]
async fn accounts_change_their_name_password_and_edition_and_go() {
    let server = emulator().await;
    let addr = server.addr;
    assert_eq!(register(addr, "Alpha", "one").await, "OK");
    assert_eq!(register(addr, "Beta", "two").await, "OK");
    let alpha = login(addr, "Alpha", "one").await;

    // A password change: the old one no longer opens the account.
    let change = |name: &str, password: &str, to: &str| json!({"username": name, "password": password, "change": to});
    assert_eq!(text(addr, "/launcher/profile/change/password", change("Alpha", "bad", "new")).await, "FAILED");
    assert_eq!(text(addr, "/launcher/profile/change/password", change("Alpha", "one", "new")).await, "OK");
    assert_eq!(login(addr, "Alpha", "one").await, "FAILED");
    assert_eq!(login(addr, "Alpha", "new").await, alpha);

    // A rename: not onto another account's name; the old name is free afterwards.
    assert_eq!(text(addr, "/launcher/profile/change/username", change("Alpha", "new", "BETA")).await, "FAILED");
    assert_eq!(text(addr, "/launcher/profile/change/username", change("Alpha", "new", "Gamma")).await, "OK");
    assert_eq!(login(addr, "Alpha", "new").await, "FAILED");
    assert_eq!(login(addr, "Gamma", "new").await, alpha);
    assert_eq!(register(addr, "Alpha", "x").await, "OK", "the old name was released");

    // A wipe: the character goes (its nickname with it), the edition changes, the game asks for a new one.
    let create = json!({"side": "Usec", "nickname": "Ghost"});
    let first =
        data(addr, "/client/game/profile/create", &alpha, create.clone()).await["uid"].as_str().unwrap().to_owned();
    let wipe = json!({"username": "Gamma", "password": "new", "edition": "Edge Of Darkness"});
    assert_eq!(text(addr, "/launcher/profile/change/wipe", wipe).await, "OK");
    assert_eq!(data(addr, "/client/game/profile/list", &alpha, json!({})).await, json!([]));
    let card = bare(addr, "/launcher/profile/info", Some(&alpha), json!({})).await;
    assert_eq!((card["nickname"].as_str(), card["edition"].as_str()), (Some("unknown"), Some("Edge Of Darkness")));
    let second = data(addr, "/client/game/profile/create", &alpha, create).await["uid"].as_str().unwrap().to_owned();
    assert_ne!(first, second);
    let pmc = data(addr, "/client/game/profile/list", &alpha, json!({})).await[0].clone();
    let roubles =
        pmc["Inventory"]["items"].as_array().unwrap().iter().find(|i| i["_tpl"] == "5449016a4bdc2d6f028b456f").cloned();
    assert_eq!(roubles.unwrap()["upd"]["StackObjectsCount"], 1_000_000, "the edition's own start");

    // A removal needs the password; afterwards the account, its character and its card are gone.
    let remove = |password: &str| json!({"username": "Gamma", "password": password});
    assert_eq!(bare(addr, "/launcher/profile/remove", None, remove("bad")).await, false);
    assert_eq!(bare(addr, "/launcher/profile/remove", None, remove("new")).await, true);
    assert_eq!(login(addr, "Gamma", "new").await, "FAILED");
    let cards = bare(addr, "/launcher/profiles", None, json!({})).await;
    let names: Vec<&str> = cards.as_array().unwrap().iter().map(|c| c["username"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 2, "{cards}");
    assert!(!names.contains(&"Gamma"), "{cards}");
    assert_eq!(call(addr, "/launcher/profile/info", Some(&alpha), json!({})).await.status, 404);
    let retaken = data(
        addr,
        "/client/game/profile/nickname/validate",
        &login(addr, "Beta", "two").await,
        json!({"nickname": "Ghost"}),
    )
    .await;
    assert_eq!(retaken, json!({"status": "ok"}), "the removed character's nickname is free");
}

#[tokio::test]
async fn the_launcher_v2_routes_wrap_their_answers() {
    let server = emulator().await;
    let addr = server.addr;
    assert_eq!(bare(addr, "/launcher/v2/ping", None, json!({})).await, json!({"Response": "Pong!"}));
    assert!(bare(addr, "/launcher/v2/types", None, json!({})).await["Response"]["Standard"].is_string());
    let body = json!({"username": "Vee", "password": "pw", "edition": "Standard"});
    let registered = bare(addr, "/launcher/v2/register", None, body).await;
    assert_eq!(registered["Response"], true);
    assert_eq!(registered["Profiles"][0]["username"], "Vee");
    assert_eq!(
        bare(addr, "/launcher/v2/login", None, json!({"username": "Vee", "password": "pw"})).await["Response"],
        true
    );
    assert_eq!(
        bare(addr, "/launcher/v2/login", None, json!({"username": "Vee", "password": "no"})).await["Response"],
        false
    );
    let version = bare(addr, "/launcher/v2/version", None, json!({})).await;
    assert!(version["Response"]["SptVersion"].is_string() && version["Response"]["EftVersion"].is_string());
    assert_eq!(bare(addr, "/launcher/v2/mods", None, json!({})).await, json!({"Response": {}}));
    let session = login(addr, "Vee", "pw").await;
    let file = bare(addr, "/launcher/v2/profile", Some(&session), json!({})).await;
    assert_eq!(file["Response"]["info"]["username"], "Vee");
    assert!(file["Response"]["characters"].is_object(), "{file}");
    let change = json!({"username": "Vee", "password": "pw", "change": "pw2"});
    assert_eq!(bare(addr, "/launcher/v2/passwordChange", None, change).await["Response"], true);
    let removed = bare(addr, "/launcher/v2/remove", None, json!({"username": "Vee", "password": "pw2"})).await;
    assert_eq!((removed["Response"].as_bool(), removed["Profiles"].as_array().map(Vec::len)), (Some(true), Some(0)));
}

#[tokio::test]
async fn malformed_and_refused_launcher_and_boot_bodies_get_clear_errors() {
    let server = emulator().await;
    let addr = server.addr;
    // Bodies the route cannot read: 400 naming the route.
    for path in ["/launcher/profile/register", "/launcher/profile/login", "/launcher/v2/login", "/singleplayer/log"] {
        for body in [&b"not json"[..], b"[1,2]", b""] {
            let reply = send(addr, &Call::post(path, body)).await.unwrap();
            assert_eq!(reply.status, 400, "{path} {body:?}: {}", reply.text());
            let route = path.trim_start_matches('/').split_once('/').unwrap().1;
            assert!(reply.text().contains(route), "{path}: the answer names the route: {}", reply.text());
        }
    }
    // Inputs that cannot make an account: 400 saying why; nothing registered.
    let cases = [
        (json!({"username": "", "password": "x"}), "username"),
        (json!({"username": "n".repeat(65), "password": "x"}), "username"),
        (json!({"username": "Ok", "password": "p".repeat(129)}), "password"),
        (json!({"username": "Ok", "password": "x", "edition": "Gold"}), "edition"),
    ];
    for (body, why) in cases {
        let reply = call(addr, "/launcher/profile/register", None, body.clone()).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.text());
        assert!(reply.text().contains(why), "{body}: {}", reply.text());
    }
    assert_eq!(bare(addr, "/launcher/profiles", None, json!({})).await, json!([]));
    // A body over what the route reads is refused whole.
    let huge = json!({"username": "u".repeat(1 << 20), "password": ""});
    assert_eq!(call(addr, "/launcher/profile/register", None, huge).await.status, 413);
    // The card of a session that is no account, and no session at all: 404, never a 5xx.
    let stranger = "d0d0d0d0d0d0d0d0d0d0d0d0";
    assert_eq!(call(addr, "/launcher/profile/info", Some(stranger), json!({})).await.status, 404);
    assert_eq!(call(addr, "/launcher/profile/info", None, json!({})).await.status, 404);
    // Boot routes with bad bodies.
    let reply = call(addr, "/client/game/profile/nickname/validate", Some(stranger), json!({"nickname": 5})).await;
    assert_eq!(reply.status, 400, "{}", reply.text());
    let reply = call(addr, "/client/profile/settings", Some(stranger), json!({"memberCategory": "gold"})).await;
    assert_eq!(reply.status, 400, "{}", reply.text());
    assert_eq!(data(addr, "/client/profile/settings", stranger, json!({})).await, false, "no character to change");
}
