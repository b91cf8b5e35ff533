//! The main menu's weather (SPT's `WeatherStaticRouter` → `WeatherCallbacks.GetWeather` →
//! `WeatherController.Generate`): today's season, the in-game time and a weather drawn from
//! `configs.weather`'s weighted tables (SPT's `configs/weather.json`; defaults when absent).

use crate::clock;
use modhost_sdk::{Request, Response, Result, db, envelope};
use serde::Deserialize;
use serde_json::json;

/// SPT's `Season` names, by number.
const SEASONS: [&str; 7] = ["SUMMER", "AUTUMN", "WINTER", "SPRING", "AUTUMN_LATE", "SPRING_EARLY", "STORM"];

#[derive(Deserialize, Default)]
struct Weighted {
    #[serde(default)]
    values: Vec<f64>,
    #[serde(default)]
    weights: Vec<f64>,
}

#[derive(Deserialize, Default, Clone, Copy)]
struct MinMax {
    #[serde(default)]
    min: f64,
    #[serde(default)]
    max: f64,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SeasonValues {
    #[serde(default)]
    clouds: Weighted,
    #[serde(default)]
    wind_speed: Weighted,
    #[serde(default)]
    wind_direction: Weighted,
    #[serde(default)]
    wind_gustiness: MinMax,
    #[serde(default)]
    rain: Weighted,
    #[serde(default)]
    rain_intensity: MinMax,
    #[serde(default)]
    fog: Weighted,
    #[serde(default)]
    temp: DayNight,
    #[serde(default)]
    pressure: MinMax,
}

#[derive(Deserialize, Default)]
struct DayNight {
    #[serde(default)]
    day: MinMax,
    #[serde(default)]
    night: MinMax,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SeasonDate {
    season_type: u32,
    start_day: Number,
    start_month: Number,
    end_day: Number,
    end_month: Number,
}

/// SPT's config writes day and month numbers as strings.
#[derive(Deserialize)]
#[serde(untagged)]
enum Number {
    Text(String),
    Int(u32),
}

impl Number {
    fn get(&self) -> u32 {
        match self {
            Number::Text(text) => text.trim().parse().unwrap_or(0),
            Number::Int(n) => *n,
        }
    }
}

/// A source of randomness seeded from WASI (as `crate::ids::new_id`).
struct Dice(u64);

impl Dice {
    fn new() -> Dice {
        use std::hash::BuildHasher;
        Dice(std::collections::hash_map::RandomState::new().hash_one(0u8) | 1)
    }

    /// A number in [0, 1).
    fn unit(&mut self) -> f64 {
        // xorshift64*: plenty for picking weather.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn between(&mut self, range: MinMax, decimals: i32) -> f64 {
        let scale = 10f64.powi(decimals);
        ((range.min + (range.max - range.min) * self.unit()) * scale).round() / scale
    }

    /// One of `table.values` with the odds of its weights (`fallback` for an empty or weightless table).
    fn weighted(&mut self, table: &Weighted, fallback: f64) -> f64 {
        let total: f64 = table.weights.iter().take(table.values.len()).filter(|w| **w > 0.0).sum();
        if total <= 0.0 {
            return table.values.first().copied().unwrap_or(fallback);
        }
        let mut roll = self.unit() * total;
        for (value, weight) in table.values.iter().zip(&table.weights) {
            if *weight <= 0.0 {
                continue;
            }
            if roll < *weight {
                return *value;
            }
            roll -= weight;
        }
        table.values.last().copied().unwrap_or(fallback)
    }
}

/// A civil date (year, month, day) from days since 1970-01-01 (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// The season on (month, day): SPT's `configs.weather.seasonDates` ranges (inclusive, year ignored),
/// unless `overrideSeason` names one; summer when no range holds the date.
fn season(month: u32, day: u32) -> u32 {
    if let Ok(season) = db::get::<u32>("configs.weather.overrideSeason") {
        return season;
    }
    let dates: Vec<SeasonDate> = db::get("configs.weather.seasonDates").unwrap_or_default();
    let today = (month, day);
    dates
        .iter()
        .find(|d| (d.start_month.get(), d.start_day.get()) <= today && today <= (d.end_month.get(), d.end_day.get()))
        .map_or(0, |d| d.season_type)
}

/// `/client/weather`: the time in Tarkov and a weather drawn from the season's odds, in SPT's
/// `WeatherData` shape. Tarkov's clock runs `acceleration` times real time from 03:00.
pub(super) fn weather(_: &Request) -> Result<Response> {
    let now = clock::now();
    let acceleration: f64 = db::get("configs.weather.acceleration").unwrap_or(7.0);
    let (year, month, day) = civil((now / 86_400) as i64);
    let date = format!("{year:04}-{month:02}-{day:02}");
    let in_raid = ((3 * 3600) as f64 + now as f64 * acceleration).rem_euclid(86_400.0) as u64;
    let (hour, minute, second) = (in_raid / 3600, in_raid / 60 % 60, in_raid % 60);
    let time = format!("{hour:02}:{minute:02}:{second:02}");
    let season = season(month, day);

    let name = SEASONS.get(season as usize).copied().unwrap_or("default");
    let values: SeasonValues = db::get(&db::path(&["configs", "weather", "weather", "seasonValues", name]))
        .or_else(|_| db::get("configs.weather.weather.seasonValues.default"))
        .unwrap_or_default();
    let mut dice = Dice::new();
    let cloud = dice.weighted(&values.clouds, 0.0);
    // No rain without clouds (SPT's rule).
    let rain = if cloud <= 0.6 { 0.0 } else { dice.weighted(&values.rain, 1.0) };
    let night = hour > 21 || hour <= 5;
    let temp = dice.between(if night { values.temp.night } else { values.temp.day }, 2);
    Ok(envelope::ok(&json!({
        "acceleration": acceleration,
        "time": time,
        "date": date,
        "season": season,
        "weather": {
            "pressure": dice.between(values.pressure, 3),
            "temp": temp,
            "fog": dice.weighted(&values.fog, 0.0),
            "rain_intensity": if rain > 1.0 { dice.between(values.rain_intensity, 3) } else { 0.0 },
            "rain": rain,
            "wind_gustiness": dice.between(values.wind_gustiness, 2),
            "wind_direction": dice.weighted(&values.wind_direction, 1.0) as u32,
            "wind_speed": dice.weighted(&values.wind_speed, 0.0),
            "cloud": cloud,
            "time": format!("{date} {time}"),
            "date": date,
            "timestamp": now,
            "sptInRaidTimestamp": now,
        },
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_from_days() {
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(19_782), (2024, 2, 29));
        assert_eq!(civil(20_454), (2026, 1, 1));
    }

    #[test]
    fn weighted_picks_follow_the_weights() {
        let mut dice = Dice(0x1234_5678);
        let table = Weighted { values: vec![1.0, 2.0], weights: vec![0.0, 5.0] };
        assert!((0..100).all(|_| dice.weighted(&table, 9.0) == 2.0));
        let empty = Weighted::default();
        assert_eq!(dice.weighted(&empty, 9.0), 9.0);
        let range = MinMax { min: 760.0, max: 780.0 };
        assert!((0..100).all(|_| (760.0..=780.0).contains(&dice.between(range, 3))));
    }
}
