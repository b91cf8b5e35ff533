//! The letters the game writes when something happens that SPT tells the player of in the chat: a gift
//! that arrived in the stash (`give-item`) and a purchase from a trader. Each is written into the
//! mailbox in the same patch as what it tells of, and pushed after the commit
//! (`mailbox::announce`).

use super::mailbox::{Letter, SYSTEM_SENDER, kind};

/// A gift of `count` of `tpl` that arrived in the stash: a system message (SPT's `SYSTEM_MESSAGE`).
pub(crate) fn gift(tpl: &str, count: u64) -> Letter {
    Letter {
        from: SYSTEM_SENDER.to_owned(),
        kind: kind::SYSTEM,
        text: format!("{count} × {tpl} arrived in your stash"),
        template_id: None,
        items: Vec::new(),
        max_storage: 0,
        system_data: None,
    }
}

/// A purchase from `trader`: the trader's message (SPT's `NPC_TRADER`).
pub(crate) fn purchase(trader: &str) -> Letter {
    Letter {
        from: trader.to_owned(),
        kind: kind::NPC_TRADER,
        text: "Thank you for your purchase".to_owned(),
        template_id: None,
        items: Vec::new(),
        max_storage: 0,
        system_data: None,
    }
}
