//! What the mail and insurance read from the database, generated small in SPT's shape:
//!
//! - `configs.insurance`: SPT's `configs/insurance.json` (return chances per trader, what is never
//!   returned, the overrides, the attachment rules);
//! - `traders.<Prapor>.dialogue`: the locale keys of his insurance letters (`insuranceStart`,
//!   `insuranceFound`, `insuranceFailed`, `insuranceFailedLabs`), as SPT's `dialogue.json`, and their
//!   English texts in `locales.global.en`;
//! - `globals.config.Insurance`: how long an insurance letter is kept and each edition's return-time
//!   multiplier (SPT's `EditionSendingMessageTime`).

use crate::{TRADER, hex_id, put};
use serde_json::{Map, Value, json};

/// The id of generated mail record `n` (message locale keys), apart from the items' and the menu's.
fn id(n: u64) -> String {
    hex_id(1 << 52 | n)
}

/// Adds the mail's and insurance's tables to `db`.
pub(crate) fn add(db: &mut Map<String, Value>) {
    put(
        db,
        &["configs", "insurance"],
        json!({
            "returnChancePercent": {TRADER: 85, "54cb57776803fa99248b456e": 95},
            "blacklistedEquipment": ["SpecialSlot1", "SpecialSlot2", "SpecialSlot3"],
            "slotIdsToAlwaysRemove": ["cartridges", "patron_in_weapon"],
            "returnTimeOverrideSeconds": 0,
            "storageTimeOverrideSeconds": 0,
            "runIntervalSeconds": 600,
            "minAttachmentRoublePriceToBeTaken": 15000,
            "chanceNoAttachmentsTakenPercent": 10,
            "simulateItemsBeingTaken": true
        }),
    );
    let texts = [
        ("insuranceStart", "I will look for your things. Give me time."),
        ("insuranceFound", "Here is what I found of your things."),
        ("insuranceFailed", "I found nothing of yours. Better luck next time."),
        ("insuranceFailedLabs", "Nobody gets anything out of the Lab."),
    ];
    let mut dialogue = Map::new();
    for (n, (kind, text)) in texts.into_iter().enumerate() {
        let key = id(n as u64);
        dialogue.insert(kind.to_owned(), json!([key]));
        put(db, &["locales", "global", "en", &key], json!(text));
    }
    put(db, &["traders", TRADER, "dialogue"], Value::Object(dialogue));
    put(
        db,
        &["globals", "config", "Insurance"],
        json!({
            "MaxStorageTimeInHour": 96,
            "CoefOfHavingMarkOfUnknown": 0.5,
            "EditionSendingMessageTime": {"edge_of_darkness": {"multiplier": 0.7}, "unheard_edition": {"multiplier": 0.7}}
        }),
    );
}

#[cfg(test)]
mod tests {
    use crate::{TRADER, database};

    #[test]
    fn the_insurance_tables_are_in_spts_shape() {
        let db = database(3);
        assert_eq!(db["configs"]["insurance"]["returnChancePercent"][TRADER], 85);
        let found = db["traders"][TRADER]["dialogue"]["insuranceFound"][0].as_str().expect("a locale key");
        assert!(db["locales"]["global"]["en"][found].is_string());
        assert!(db["traders"][TRADER]["base"]["insurance"]["max_return_hour"].is_number(), "boot.rs's base stays");
        assert!(db["globals"]["config"]["RagFair"].is_object(), "the globals' other members stay");
    }
}
