//! What the launcher and the client's boot read from the database, generated small in SPT's shape:
//!
//! - `templates.profiles`: the editions a player registers with (SPT's `templates/profiles.json`: each
//!   key an edition, each holding `descriptionLocaleKey` and a `bear` and `usec` start: `character`,
//!   `suits`, `dialogues`, `trader`, `equipmentBuilds`, `weaponbuilds`);
//! - `templates.customization` (heads, bodies, feet, hands, voices under their `Node`s) and
//!   `templates.character` (the customization ids a player may wear);
//! - `settings` (the client's `settings.json`: its `config` timings and limits);
//! - `locales.menu.en`, `locales.server.en` (the server's own strings: edition descriptions and the
//!   release notes' texts);
//! - `server` (`server.json`: the address SPT binds);
//! - `globals.config.exp.level.exp_table` (the experience per level the launcher's profile card reads);
//! - Prapor's whole `base` (what `/client/trading/api/traderSettings` answers);
//! - `configs.core` and `configs.trader`: not SPT database but its `configs/core.json` and
//!   `configs/trader.json`, the few members the launcher and boot read (versions, the server's name,
//!   whether a wipe is allowed, the BSG logging and release settings, modded traders), kept where
//!   SPT's folder layout would put them.

use crate::{ROUBLES, TRADER, put};
use serde_json::{Map, Value, json};

/// The editions generated, with the locale key of each one's description.
const EDITIONS: [(&str, &str, &str); 2] = [
    ("Standard", "launcher-profile_standard", "Same as live, basic stash size (10x30), 500,000 roubles"),
    ("Edge Of Darkness", "launcher-profile-edgeofdarkness", "Larger stash size (10x68), extra equipment"),
];

/// Customization templates: (id, name, parent node, body part, sides).
const CUSTOMIZATION: [(&str, &str, &str, &str, &[&str]); 6] = [
    ("5cc084dd14c02e000b0550a3", "Usec_Body_Default", BODY, "Body", &["Usec"]),
    ("5cc085e214c02e000c6bea67", "Usec_Feet_Default", FEET, "Feet", &["Usec"]),
    ("5cde95d97d6c8b647a3769b0", "Bear_Body_Default", BODY, "Body", &["Bear"]),
    ("5cc085bb14c02e000e67a5c5", "Bear_Feet_Default", FEET, "Feet", &["Bear"]),
    ("5cc2e4d014c02e000d0115f8", "Head_Default", HEAD, "Head", &["Usec", "Bear"]),
    ("5cc2e68f14c02e28b47de290", "Hands_Default", HANDS, "Hands", &["Usec", "Bear"]),
];
const ROOT: &str = "5cbdb4a2e2b501000d352ae2";
const BODY: &str = "5cc0868e14c02e000c6bea68";
const FEET: &str = "5cc0869814c02e000a4cad94";
const HEAD: &str = "5cc0869d14c02e000a4cad95";
const HANDS: &str = "5cc086a314c02e000c6bea69";

/// Adds the launcher's and the boot's tables to `db` (the whole document).
pub(crate) fn add(db: &mut Map<String, Value>) {
    put(db, &["templates", "customization"], customization());
    let wearable: Vec<&str> = CUSTOMIZATION.iter().map(|(id, ..)| *id).collect();
    put(db, &["templates", "character"], json!(wearable));
    put(db, &["templates", "profiles"], profiles());
    put(db, &["settings"], settings());
    put(
        db,
        &["locales", "menu", "en"],
        json!({"menu": {
            "Play": "Play", "Character": "Character", "Trade": "Trade", "Hideout": "Hideout",
            "Settings": "Settings", "Exit": "Exit", "Loading": "Loading", "OK": "OK", "Cancel": "Cancel",
        }}),
    );
    put(db, &["locales", "server", "en"], server_locale());
    put(db, &["server"], json!({"ip": "127.0.0.1", "port": 6969}));
    // SPT's 79 levels grow from 1000 to a few million; this curve has the same start and shape.
    let exp_table: Vec<Value> =
        (0..79u64).map(|level| json!({"exp": if level == 0 { 0 } else { 1000 * level * level }})).collect();
    put(db, &["globals", "config", "exp", "level", "exp_table"], json!(exp_table));
    put(db, &["traders", TRADER, "base"], prapor());
    put(
        db,
        &["configs", "core"],
        json!({
            "sptVersion": "4.0.0",
            "projectName": "SPT",
            "compatibleTarkovVersion": "0.16.0.36625",
            "serverName": "modhost",
            "allowProfileWipe": true,
            "bsgLogging": {"verbosity": 6, "sendToServer": false},
            "release": {"betaDisclaimerTimeoutDelay": 30},
        }),
    );
    put(db, &["configs", "trader", "moddedTraders"], json!({"clothingService": []}));
}

fn customization() -> Value {
    let mut table = Map::new();
    let node = |id: &str, name: &str, parent: &str| {
        json!({"_id": id, "_name": name, "_parent": parent, "_type": "Node", "_props": {
            "AvailableAsDefault": false, "Description": "", "Name": "", "ProfileVersions": [], "ShortName": "",
            "Side": ["Usec", "Bear", "Savage"],
        }})
    };
    table.insert(ROOT.into(), node(ROOT, "Customization", ""));
    for (id, name) in [(BODY, "Body"), (FEET, "Feet"), (HEAD, "Head"), (HANDS, "Hands")] {
        table.insert(id.into(), node(id, name, ROOT));
    }
    for (id, name, parent, part, sides) in CUSTOMIZATION {
        table.insert(
            id.into(),
            json!({"_id": id, "_name": name, "_parent": parent, "_type": "Item", "_proto": "5cdea33e7d6c8b0474535dac",
                "_props": {
                    "AvailableAsDefault": true, "Description": name, "Name": name, "ShortName": name,
                    "ProfileVersions": [], "Side": sides, "BodyPart": part, "IntegratedArmorVest": false,
                    "Prefab": {"path": format!("assets/content/characters/character/prefabs/{}.bundle", name.to_lowercase()), "rcid": ""},
                    "WatchPosition": {"x": 0, "y": 0, "z": 0}, "WatchPrefab": {"path": "", "rcid": ""},
                    "WatchRotation": {"x": 0, "y": 0, "z": 0},
                }}),
        );
    }
    Value::Object(table)
}

fn profiles() -> Value {
    let mut table = Map::new();
    for (n, (edition, key, _)) in EDITIONS.iter().enumerate() {
        let side = |side: &str, body: &str, feet: &str| {
            json!({
                "character": character(side, body, feet, 500_000 * (n as u64 + 1)),
                "suits": [body, feet],
                "dialogues": {},
                "equipmentBuilds": {},
                "weaponbuilds": {},
                "trader": {
                    "initialLoyaltyLevel": {"default": 1},
                    "initialStanding": {"default": 0},
                    "initialSalesSum": 0,
                    "jaegerUnlocked": false,
                    "lockedByDefaultOverride": [],
                },
            })
        };
        table.insert(
            (*edition).into(),
            json!({
                "descriptionLocaleKey": key,
                "bear": side("Bear", "5cde95d97d6c8b647a3769b0", "5cc085bb14c02e000e67a5c5"),
                "usec": side("Usec", "5cc084dd14c02e000b0550a3", "5cc085e214c02e000c6bea67"),
            }),
        );
    }
    Value::Object(table)
}

/// A start character in SPT's `PmcData` shape: the ids are the template's own, which a new profile
/// replaces.
fn character(side: &str, body: &str, feet: &str, roubles: u64) -> Value {
    let part = |max: u32| json!({"Health": {"Current": max, "Maximum": max}});
    json!({
        "_id": "pmc00000000000000000000a", "aid": 0, "savage": null,
        "Info": {
            "Nickname": "", "LowerNickname": "", "Side": side, "Voice": format!("{side}_1"), "Level": 1,
            "Experience": 0, "RegistrationDate": 0, "GameVersion": "standard", "MemberCategory": 0,
            "SelectedMemberCategory": 0, "SquadInviteRestriction": false, "Bans": [], "BannedState": false,
            "BannedUntil": 0, "IsStreamerModeAvailable": false, "lockedMoveCommands": true,
            "HasCoopExtension": false, "HasPveGame": true, "PrestigeLevel": 0,
        },
        "Customization": {
            "Head": "5cc2e4d014c02e000d0115f8", "Body": body, "Feet": feet, "Hands": "5cc2e68f14c02e28b47de290",
            "Voice": format!("{side}_1"), "DogTag": "",
        },
        "Health": {
            "Hydration": {"Current": 100, "Maximum": 100},
            "Energy": {"Current": 100, "Maximum": 100},
            "Temperature": {"Current": 36.6, "Maximum": 40},
            "BodyParts": {
                "Head": part(35), "Chest": part(85), "Stomach": part(70), "LeftArm": part(60),
                "RightArm": part(60), "LeftLeg": part(65), "RightLeg": part(65),
            },
            "UpdateTime": 0, "Immortal": false,
        },
        "Inventory": {
            "items": [
                {"_id": "tpl000000000000000000001", "_tpl": "55d7217a4bdc2d86028b456d"},
                {"_id": "tpl000000000000000000002", "_tpl": "627a4e6b255f7527fb05a0f6",
                 "parentId": "tpl000000000000000000001", "slotId": "Pockets"},
                {"_id": "tpl000000000000000000003", "_tpl": crate::STASH},
                {"_id": "tpl000000000000000000004", "_tpl": "5963866286f7747bf429b572"},
                {"_id": "tpl000000000000000000005", "_tpl": "5963866b86f7747bfa6d1e0c"},
                {"_id": "tpl000000000000000000006", "_tpl": "602543c13fee350cd564d032"},
                {"_id": "tpl000000000000000000007", "_tpl": ROUBLES, "parentId": "tpl000000000000000000003",
                 "slotId": "hideout", "location": {"x": 0, "y": 0, "r": "Horizontal"},
                 "upd": {"StackObjectsCount": roubles}},
            ],
            "equipment": "tpl000000000000000000001", "stash": "tpl000000000000000000003",
            "questRaidItems": "tpl000000000000000000004", "questStashItems": "tpl000000000000000000005",
            "sortingTable": "tpl000000000000000000006", "hideoutAreaStashes": {}, "fastPanel": {},
            "favoriteItems": [],
        },
        "Skills": {"Common": [], "Mastering": [], "Points": 0},
        "Stats": {"Eft": {"OverallCounters": {"Items": []}, "TotalInGameTime": 0}},
        "Encyclopedia": {}, "TaskConditionCounters": {}, "InsuredItems": [],
        "Hideout": {"Areas": [], "Improvements": {}, "Customization": {}, "MannequinPoses": {}, "Production": {}, "Seed": "0"},
        "Bonuses": [], "Notes": {"Notes": []}, "Quests": [], "RagfairInfo": {"rating": 0.2, "isRatingGrowing": true, "offers": []},
        "TradersInfo": {}, "UnlockedInfo": {"unlockedProductionRecipe": []}, "moneyTransferLimitData": {},
        "WishList": {}, "Achievements": {}, "Prestige": {}, "karmaValue": 0.2,
    })
}

fn settings() -> Value {
    json!({"config": {
        "AFKTimeoutSeconds": 604800, "AdditionalRandomDelaySeconds": 13, "ClientSendRateLimit": 120,
        "CriticalRetriesCount": 1, "DefaultRetriesCount": 1, "FirstCycleDelaySeconds": 20,
        "FramerateLimit": {"MaxFramerateGameLimit": 144, "MaxFramerateLobbyLimit": 60, "MinFramerateLimit": 30},
        "GroupStatusButtonInterval": 7, "GroupStatusInterval": 60, "KeepAliveInterval": 140,
        "LobbyKeepAliveInterval": 1, "Mark502and504AsNonImportant": true, "NVidiaHighlights": false,
        "NetworkStateView": {"LossThreshold": 10, "RttThreshold": 100}, "NextCycleDelaySeconds": 60,
        "PingServerResultSendInterval": -1, "PingServersInterval": 10,
        "ReleaseProfiler": {"Enabled": false, "MaxRecords": 100, "RecordTriggerValue": 2000},
        "RequestConfirmationTimeouts": [0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 18.8],
        "RequestsMadeThroughLobby": ["/client/mail/msg/send"], "SecondCycleDelaySeconds": 40,
        "ShouldEstablishLobbyConnection": false, "TurnOffLogging": false, "WeaponOverlapDistanceCulling": 50,
        "WebDiagnosticsEnabled": false, "WsReconnectionDelays": [500, 3000, 5000],
    }})
}

fn server_locale() -> Value {
    let mut table = Map::new();
    for (_, key, text) in EDITIONS {
        table.insert(key.into(), text.into());
    }
    for (key, text) in [
        ("bleeding_edge_build", "BLEEDINGEDGE"),
        ("release-beta-disclaimer", "By pressing OK you agree that this is a test build."),
        ("release-beta-disclaimer-mods-enabled", "By pressing OK you agree that this is a test build with mods."),
        ("release-beta-disclaimer-accept", "User accepted the beta disclaimer"),
        ("release-server-mods-loaded", "One or more server mods are loaded."),
        ("release-server-mods-debug-message", "Server mods loaded"),
        ("release-plugins-loaded", "One or more client plugins are loaded."),
        ("release-plugins-loaded-debug-message", "Client mods loaded"),
        ("release-illegal-plugins-loaded", "One or more plugins that are not allowed were detected."),
        ("release-illegal-plugins-exception", "Client mods detected."),
        ("release-summary", ""),
    ] {
        table.insert(key.into(), text.into());
    }
    Value::Object(table)
}

/// Prapor's `base.json`, every member SPT's has (the values are his, rounded).
fn prapor() -> Value {
    let loyalty = |level: u32, sales: u64, standing: f64, buy: u32| {
        json!({"buy_price_coef": buy, "exchange_price_coef": 0, "heal_price_coef": 0, "insurance_price_coef": 16,
               "minLevel": level * 10 - 9, "minSalesSum": sales, "minStanding": standing, "repair_price_coef": 0})
    };
    json!({
        "_id": TRADER, "availableInRaid": false, "avatar": "/files/trader/avatar/59b91ca086f77469a81232e4.jpg",
        "balance_dol": 0, "balance_eur": 0, "balance_rub": 7_000_000, "buyer_up": false, "currency": "RUB",
        "customization_seller": false, "discount": 0, "discount_end": 0, "gridHeight": 160,
        "insurance": {"availability": true, "excluded_category": [], "max_return_hour": 36,
                      "max_storage_time": 96, "min_payment": 0, "min_return_hour": 24},
        "isCanTransferItems": false, "items_buy": {"category": ["5422acb9af1c889c16000029"], "id_list": []},
        "items_buy_prohibited": {"category": [], "id_list": []}, "location": "",
        "loyaltyLevels": [loyalty(1, 0, 0.0, 50), loyalty(2, 550_000, 0.2, 45), loyalty(3, 1_100_000, 0.35, 40),
                          loyalty(4, 1_500_000, 0.5, 35)],
        "medic": false, "name": "Pavel Yegorovich", "nextResupply": 0, "nickname": "Prapor",
        "prohibitedTransferableItems": {"category": [], "id_list": []},
        "repair": {"availability": true, "currency": ROUBLES, "currency_coefficient": 1, "excluded_category": [],
                   "excluded_id_list": [], "quality": 0},
        "sell_category": [], "sell_modifier_for_prohibited_items": 0, "surname": "Romanenko",
        "transferableItems": {"category": [], "id_list": []}, "unlockedByDefault": true,
    })
}

#[cfg(test)]
mod tests {
    use crate::database;

    #[test]
    fn the_boot_tables_are_in_spts_shape() {
        let db = database(3);
        let profiles = db["templates"]["profiles"].as_object().expect("editions");
        assert!(profiles.contains_key("Standard"));
        for edition in profiles.values() {
            let key = edition["descriptionLocaleKey"].as_str().expect("a description key");
            assert!(db["locales"]["server"]["en"][key].is_string(), "{key}");
            for side in ["bear", "usec"] {
                assert!(edition[side]["character"]["Inventory"]["items"].is_array());
            }
        }
        for id in db["templates"]["character"].as_array().expect("a list") {
            let id = id.as_str().expect("ids");
            assert_eq!(db["templates"]["customization"][id]["_type"], "Item", "{id}");
        }
        assert_eq!(db["globals"]["config"]["exp"]["level"]["exp_table"][1]["exp"], 1000);
        assert_eq!(db["traders"][crate::TRADER]["base"]["nickname"], "Prapor");
        assert!(db["settings"]["config"]["KeepAliveInterval"].is_number());
        assert!(db["globals"]["config"]["RagFair"].is_object(), "the base globals are kept");
    }
}
