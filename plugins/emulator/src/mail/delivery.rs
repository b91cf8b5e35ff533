//! Letters that arrive later (an insurance return): delivered by the host's timer when it fires, and,
//! whichever comes first, when the mail is next read after they are due in the game's time.
//!
//! Why both: the timer is the host's (it survives a restart and fires late when the server was off,
//! `docs/realtime.md`), but it keeps the host's clock, while the due time is the game's
//! (`clock::now()`, which a test or a mod author moves with `emulator.clock.offsetSeconds`). Reading the
//! mail delivers what the game's clock says is due; the timer delivers what the host's says. Each
//! delivery removes the pending letter in the same patch that writes the message, at the version it
//! read (`mailbox::deliver`), so a letter never arrives twice; a timer that finds it gone does nothing.

use super::mailbox;
use crate::clock;
use crate::profile;
use crate::profile::doc::Doc;
use crate::templates::Templates;
use modhost_sdk::timers::Fired;
use modhost_sdk::{Error, Result};
use serde::Deserialize;
use serde_json::Value;

/// The most pending letters one read delivers (the rest on the next): a player has a few at most.
const MAX_AT_ONCE: usize = 32;
/// How early a timer may deliver, in seconds (the two clocks tick apart by a little).
const EARLY: u64 = 60;
/// How often a timer's delivery is tried again when another write came between.
const ATTEMPTS: usize = 4;

#[derive(Deserialize)]
struct Due {
    uid: String,
    pending: String,
}

/// The `mail.deliver` timer: delivers its pending letter, if it is still pending.
pub(super) fn fired(timer: &Fired) -> Result<()> {
    let due: Due = timer.json()?;
    if !crate::ids::is_id(&due.uid) || !crate::ids::is_id(&due.pending) {
        return Err(Error::Invalid("a mail.deliver timer names no profile or letter".into()));
    }
    let key = format!("profile.{}", due.uid);
    for _ in 0..ATTEMPTS {
        let Some(version) = profile::open(&key, &mut Templates::default())? else { return Ok(()) };
        let mut doc = Doc::at(&key, version);
        // A letter due later in the game's time than the host's timer (a delay past the timers' 30
        // days, the game's clock moved back) waits for the rest.
        let Some(at) = mailbox::due_at(&mut doc, &due.pending)? else { return Ok(()) };
        let now = clock::now();
        if at > now.saturating_add(EARLY) {
            mailbox::schedule(timer.session(), &due.uid, &due.pending, at - now);
            return Ok(());
        }
        let Some((message, then)) = mailbox::deliver(&mut doc, &due.pending)? else { return Ok(()) };
        match doc.commit() {
            Ok(_) => {
                mailbox::announce_delivered(timer.session(), &due.uid, &message, &then);
                return Ok(());
            }
            Err(Error::Conflict(_)) => continue,
            Err(other) => return Err(other),
        }
    }
    Err(Error::Conflict(format!("letter {} of {} met other writers {ATTEMPTS} times", due.pending, due.uid)))
}

/// Delivers the pending letters of `doc`'s profile that are due now, in one commit, and answers the
/// document at its new version (the same one when nothing was due). A conflict is the caller's.
pub(super) fn catch_up(session: Option<&str>, uid: &str, mut doc: Doc) -> Result<Doc> {
    let due = mailbox::due(&mut doc, clock::now())?;
    if due.is_empty() {
        return Ok(doc);
    }
    let key = doc.key().to_owned();
    let mut delivered: Vec<(Value, mailbox::OnDelivery)> = Vec::new();
    for id in due.iter().take(MAX_AT_ONCE) {
        delivered.extend(mailbox::deliver(&mut doc, id)?);
    }
    let Some(version) = doc.commit()? else { return Err(Error::failed("delivering letters wrote nothing")) };
    for (message, then) in &delivered {
        mailbox::announce_delivered(session, uid, message, then);
    }
    Ok(Doc::at(&key, version))
}
