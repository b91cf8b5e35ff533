//! `/client/raid/configuration`: the raid settings the client chose, kept as SPT's `RaidSettings`
//! (`Models/Eft/Match/GetRaidConfigurationRequestData.cs`) and nothing else. The game reads only the
//! bots' difficulty from it (`wavesSettings.botDifficulty`), but a mod may read more; what is stored is
//! SPT's members, each bounded, so a client cannot park an arbitrary document in the store.

use crate::input;
use crate::profile;
use modhost_sdk::{Request, Response, Result, envelope, store};
use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The body's size cap: the client's settings are well under a kilobyte.
const MAX_BODY: usize = 16 << 10;
/// The longest text member (a map name, an enum's name, a key id).
const MAX_TEXT: usize = 64;
/// The most entries of `onlinePveRaidStates` (one per map in SPT).
const MAX_STATES: usize = 64;

/// An enum member as C# writes it: its name, or its number.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum Word {
    Number(i64),
    #[serde(deserialize_with = "short")]
    Text(String),
}

fn short<'de, D: Deserializer<'de>>(deserializer: D) -> std::result::Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    if text.chars().count() > MAX_TEXT {
        return Err(D::Error::custom(format_args!("a text member has at most {MAX_TEXT} characters")));
    }
    Ok(text)
}

fn short_opt<'de, D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<String>, D::Error> {
    short(deserializer).map(Some)
}

fn states<'de, D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<BTreeMap<String, bool>>, D::Error> {
    let map = BTreeMap::<String, bool>::deserialize(deserializer)?;
    if map.len() > MAX_STATES || map.keys().any(|k| k.chars().count() > MAX_TEXT) {
        return Err(D::Error::custom(format_args!(
            "onlinePveRaidStates has at most {MAX_STATES} maps, each named in at most {MAX_TEXT} characters"
        )));
    }
    Ok(Some(map))
}

/// SPT's `RaidSettings` with `GetRaidConfigurationRequestData`'s members; unknown members are dropped.
#[derive(Serialize, Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase")]
struct RaidSettings {
    #[serde(default, deserialize_with = "short_opt", skip_serializing_if = "Option::is_none")]
    key_id: Option<String>,
    #[serde(default, deserialize_with = "states", skip_serializing_if = "Option::is_none")]
    online_pve_raid_states: Option<BTreeMap<String, bool>>,
    #[serde(default, deserialize_with = "short_opt", skip_serializing_if = "Option::is_none")]
    location: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    is_location_transition: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    time_variant: Option<Word>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metabolism_disabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    time_and_weather_settings: Option<TimeAndWeather>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bot_settings: Option<BotSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    waves_settings: Option<WavesSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    side: Option<Word>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    raid_mode: Option<Word>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    players_spawn_place: Option<Word>,
    #[serde(default, rename = "CanShowGroupPreview", skip_serializing_if = "Option::is_none")]
    can_show_group_preview: Option<bool>,
    #[serde(default, rename = "MaxGroupCount", skip_serializing_if = "Option::is_none")]
    max_group_count: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    transition_type: Option<Word>,
}

#[derive(Serialize, Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase")]
struct TimeAndWeather {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    is_random_time: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    is_random_weather: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cloudiness_type: Option<Word>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rain_type: Option<Word>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fog_type: Option<Word>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    wind_type: Option<Word>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    time_flow_type: Option<Word>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hour_of_day: Option<i64>,
}

#[derive(Serialize, Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase")]
struct BotSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    is_scav_wars: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bot_amount: Option<Word>,
}

#[derive(Serialize, Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase")]
struct WavesSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bot_amount: Option<Word>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bot_difficulty: Option<Word>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    is_bosses: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    is_tagged_and_cursed: Option<bool>,
}

/// `/client/raid/configuration`: SPT's members of the body, bounded, into `raidconfig.<uid>`; a body
/// that is no object, or a member of the wrong kind or over its bound, is refused (400) and nothing
/// is kept.
pub(super) fn configuration(req: &Request) -> Result<Response> {
    let settings: RaidSettings = input::parse(req, "raid/configuration", MAX_BODY)?;
    if let Some(uid) = profile::session_profile(req)? {
        store::set(&format!("raidconfig.{uid}"), &settings)?;
    }
    Ok(envelope::null())
}

/// The difficulty the raid configuration of profile `uid` chose, unless "as online".
pub(super) fn chosen_difficulty(uid: &str) -> Result<Option<String>> {
    let Some((chosen, _)) = store::doc_get::<Value>(&format!("raidconfig.{uid}"), "wavesSettings.botDifficulty")?
    else {
        return Ok(None);
    };
    Ok(chosen.as_str().filter(|d| !d.eq_ignore_ascii_case("asonline")).map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_spt_members_are_kept_and_each_is_bounded() {
        let body = r#"{"location":"bigmap","wavesSettings":{"botDifficulty":"Hard","x":[1,2]},"junk":{"a":[1]},
            "timeVariant":"CURR","side":1,"onlinePveRaidStates":{"bigmap":true}}"#;
        let kept: RaidSettings = serde_json::from_str(body).unwrap();
        let stored = serde_json::to_value(&kept).unwrap();
        assert_eq!(
            stored,
            serde_json::json!({"location": "bigmap", "wavesSettings": {"botDifficulty": "Hard"},
                "timeVariant": "CURR", "side": 1, "onlinePveRaidStates": {"bigmap": true}})
        );
        let long = format!(r#"{{"location":"{}"}}"#, "m".repeat(MAX_TEXT + 1));
        assert!(serde_json::from_str::<RaidSettings>(&long).is_err());
        let map: String = (0..=MAX_STATES).map(|n| format!(r#""m{n}":true"#)).collect::<Vec<_>>().join(",");
        let many = format!(r#"{{"onlinePveRaidStates":{{{map}}}}}"#);
        assert!(serde_json::from_str::<RaidSettings>(&many).is_err());
        assert!(serde_json::from_str::<RaidSettings>("[1]").is_err(), "not an object");
    }
}
