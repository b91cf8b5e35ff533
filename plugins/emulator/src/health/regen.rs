//! Regeneration between raids, as a pure function of the stored health and the time since it was
//! stored (SPT's `GameController.UpdateProfileHealthValues` and `DecreaseBodyPartEffectTimes`).
//!
//! SPT applies it when the game starts, from `Health.UpdateTime`: energy and hydration gain 60 an hour,
//! each body part 456.6 hit points an hour, each plus the profile's hideout `Bonuses`
//! (`EnergyRegeneration`, `HydrationRegeneration`, `HealthRegeneration`), none past its maximum; an
//! effect with a duration counts it down (never below 1), and a lasting one (`Time` below 1: a
//! fracture, a bleed) goes once more than 30 minutes passed. SPT's rates are constants in its code,
//! not in `configs.health` nor the globals; they are here as [`RATES`].
//!
//! Unlike SPT, which rounds each application and so depends on how often the game started, the stored
//! health is the state at its `UpdateTime` and is never regenerated in place: what the game shows is
//! this function of it and the clock, so reading it twice an hour apart or once two hours later gives
//! the same, exactly as if the server had been running. An action that changes health first stores the
//! regenerated state at the current time (`super::settle`).

use serde_json::{Value, json};

/// SPT's base rates, per hour: energy, hydration, hit points of each body part.
pub(crate) const RATES: (f64, f64, f64) = (60.0, 60.0, 456.6);

/// How long a lasting effect outlives a gap before it goes (SPT: more than 30 minutes).
const LASTING_EFFECT_SECONDS: f64 = 1800.0;

/// The most body parts and effects read (a profile has seven parts and a handful of effects).
const MAX_PARTS: usize = 64;

/// `health` (SPT's `Health` of a PMC) regenerated `elapsed` seconds on, with `bonuses` (the profile's
/// `Bonuses`); `UpdateTime` becomes `now`.
pub(crate) fn regenerate(mut health: Value, elapsed: f64, now: u64, bonuses: &Value) -> Value {
    if !health.is_object() {
        return health;
    }
    let elapsed = elapsed.max(0.0);
    let hours = elapsed / 3600.0;
    let bonus = |kind: &str| -> f64 {
        bonuses
            .as_array()
            .into_iter()
            .flatten()
            .take(1000)
            .filter(|b| b["type"] == kind)
            .filter_map(|b| b["value"].as_f64())
            .filter(|v| v.is_finite())
            .sum()
    };
    let (energy, hydration, hp) = RATES;
    let energy = energy + bonus("EnergyRegeneration");
    let hydration = hydration + bonus("HydrationRegeneration");
    let hp = hp + bonus("HealthRegeneration");
    for (factor, rate) in [("Energy", energy), ("Hydration", hydration)] {
        raise(&mut health[factor], rate * hours);
    }
    if let Some(parts) = health["BodyParts"].as_object_mut() {
        for (_, part) in parts.iter_mut().take(MAX_PARTS) {
            raise(&mut part["Health"], hp * hours);
            let Some(effects) = part.get_mut("Effects").and_then(Value::as_object_mut) else { continue };
            effects.retain(|_, effect| {
                let time = effect["Time"].as_f64().unwrap_or(-1.0);
                if time < 1.0 {
                    return elapsed <= LASTING_EFFECT_SECONDS;
                }
                effect["Time"] = number((time - elapsed).max(1.0));
                true
            });
        }
    }
    health["UpdateTime"] = json!(now);
    health
}

/// Raises a `{Current, Maximum}` below its maximum by `by`, to at most the maximum.
fn raise(value: &mut Value, by: f64) {
    let (Some(current), Some(maximum)) = (value["Current"].as_f64(), value["Maximum"].as_f64()) else { return };
    if current < maximum && by > 0.0 {
        value["Current"] = number((current + by).min(maximum));
    }
}

/// A number as JSON, whole when it is whole (as the profile wrote it).
pub(crate) fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9e15 { json!(n as i64) } else { json!(n) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hurt() -> Value {
        json!({
            "Energy": {"Current": 10, "Maximum": 110}, "Hydration": {"Current": 100, "Maximum": 100},
            "BodyParts": {
                "Head": {"Health": {"Current": 5, "Maximum": 35}, "Effects": {"Fracture": {"Time": -1}}},
                "Chest": {"Health": {"Current": 85, "Maximum": 85}, "Effects": {"Pain": {"Time": 600}}},
            },
            "UpdateTime": 1000,
        })
    }

    #[test]
    fn an_hour_restores_spts_rates_up_to_the_maxima() {
        let after = regenerate(hurt(), 3600.0, 4600, &json!([]));
        assert_eq!(after["Energy"]["Current"], 70);
        assert_eq!(after["Hydration"]["Current"], 100);
        assert_eq!(after["BodyParts"]["Head"]["Health"]["Current"], 35, "456.6 an hour, capped at the maximum");
        assert_eq!(after["BodyParts"]["Chest"]["Effects"]["Pain"]["Time"], 1, "counted down, never below 1");
        assert!(after["BodyParts"]["Head"]["Effects"].as_object().unwrap().is_empty(), "a lasting effect goes");
        assert_eq!(after["UpdateTime"], 4600);
    }

    #[test]
    fn regenerating_in_steps_equals_regenerating_at_once() {
        let once = regenerate(hurt(), 1200.0, 2200, &json!([]));
        let mut steps = hurt();
        for n in 1..=4 {
            steps = regenerate(steps, 300.0, 1000 + 300 * n, &json!([]));
        }
        let close = |a: &Value, b: &Value| (a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 1e-9;
        assert!(close(&once["Energy"]["Current"], &steps["Energy"]["Current"]), "{once} {steps}");
        let head = |h: &Value| h["BodyParts"]["Head"]["Health"]["Current"].clone();
        assert!(close(&head(&once), &head(&steps)));
        assert_eq!(once["BodyParts"]["Chest"], steps["BodyParts"]["Chest"]);
        // Energy: 60 an hour for 20 minutes.
        assert!(close(&once["Energy"]["Current"], &json!(30)));
    }

    #[test]
    fn bonuses_add_to_the_rates() {
        let bonuses = json!([{"type": "EnergyRegeneration", "value": 60}]);
        assert_eq!(regenerate(hurt(), 1800.0, 2800, &bonuses)["Energy"]["Current"], 70);
    }
}
