//! `/client/mail/msg/send {dialogId, type, text, replyTo}`: the player writing in a dialogue (SPT's
//! `DialogueController.SendMessage`, `MailSendService.SendPlayerMessageToNpc`, the chat bots'
//! `HandleMessage`).
//!
//! The player's message is kept in the dialogue when the player has it (a trader's, the system's), as
//! SPT does; writing to one of the chat bots the config enables (`mod.rs`'s `chat_bots`) opens its
//! dialogue if needed, keeps the message and the bot answers as SPT's do with nothing else installed:
//! `help` lists its commands, the SPT friend greets back a greeting, and anything else is its "unknown
//! command" reply. The answer is the dialogue's id, as SPT's. A dialogue the player does not have and
//! no bot owns keeps nothing.

use super::mailbox::{self, DIALOGUES, HOLDS, Letter, MAIL, MESSAGES, kind};
use super::{conflict, open};
use crate::clock;
use crate::ids;
use crate::input;
use modhost_sdk::{Error, Request, Response, Result, envelope};
use serde::Deserialize;
use serde_json::{Value, json};

/// The largest body, and the longest message in characters (the client's chat field is shorter).
const MAX_BODY: usize = 16 << 10;
const MAX_TEXT: usize = 2_000;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Sent {
    #[serde(default)]
    dialog_id: String,
    #[serde(default)]
    text: String,
}

/// SPT's greetings the SPT friend answers (`HelloMessageHandler`).
const GREETINGS: [&str; 6] = ["hello", "hi", "sup", "yo", "hey", "bonjour"];

/// What chat bot `bot` (its nickname) says to `text`.
fn reply(bot: &Value, text: &str, nickname: &str) -> String {
    let spt = bot["Info"]["Nickname"] != "Commando";
    let said = text.trim().to_lowercase();
    if said == "help" {
        return if spt {
            "The available commands are:\\n GIVEMESPACE \\n HOHOHO \\n VERYSPOOKY \\n ITSONLYSNOWALAN \\n GIVEMESUNSHINE"
                .to_owned()
        } else {
            "The available commands will be listed below:".to_owned()
        };
    }
    if spt && GREETINGS.contains(&said.as_str()) {
        return format!("Hello {nickname}");
    }
    if spt {
        "Unknown command.".to_owned()
    } else {
        "I'm sorry soldier, I don't recognize the command you are trying to use! Type \"help\" to see available commands."
            .to_owned()
    }
}

/// `/client/mail/msg/send`.
pub(super) fn send(req: &Request) -> Result<Response> {
    let body: Sent = input::parse(req, "mail/msg/send", MAX_BODY)?;
    if body.text.chars().count() > MAX_TEXT {
        return Err(Error::Invalid(format!("mail/msg/send: a message has at most {MAX_TEXT} characters")));
    }
    if !ids::is_id(&body.dialog_id) {
        return Err(Error::Invalid("mail/msg/send: `dialogId` is not an id".into()));
    }
    let (uid, mut doc) = match open(req, "mail/msg/send")? {
        Ok(opened) => opened,
        Err(answer) => return Ok(answer),
    };
    let dialogue = body.dialog_id.as_str();
    let bot = super::chat_bots().into_iter().find(|b| b["_id"] == dialogue);
    let header = doc.get(&[MAIL, DIALOGUES, dialogue])?;
    if !header.is_object() && bot.is_none() {
        return Ok(envelope::ok(&dialogue));
    }
    if let Some(bot) = &bot
        && !header.is_object()
    {
        let opened = json!({"_id": dialogue, "type": kind::USER_MESSAGE, "pinned": false, "new": 0,
                            "attachmentsNew": 0, "Users": [bot]});
        doc.set(&[MAIL, DIALOGUES, dialogue], opened)?;
    }
    let now = clock::now();
    let id = ids::new_id();
    let mine = json!({"_id": id, "uid": uid, "type": kind::USER_MESSAGE, "dt": now, "UtcDateTime": now,
                      "text": body.text, "hasRewards": false, "rewardCollected": false});
    doc.set(&[MAIL, MESSAGES, dialogue, &id], mine.clone())?;
    doc.set(&[MAIL, HOLDS, &id], json!(dialogue))?;
    doc.set(&[MAIL, DIALOGUES, dialogue, "last"], mailbox::preview(&mine))?;
    let answered = match &bot {
        Some(bot) => {
            let nickname = doc.get(&["Info", "Nickname"])?;
            let text = reply(bot, &body.text, nickname.as_str().unwrap_or_default());
            let letter = Letter {
                from: dialogue.to_owned(),
                kind: kind::USER_MESSAGE,
                text,
                template_id: None,
                items: Vec::new(),
                max_storage: 0,
                system_data: None,
            };
            Some(mailbox::send(&mut doc, letter)?)
        }
        None => None,
    };
    match doc.commit() {
        Ok(_) => {}
        Err(Error::Conflict(_)) => return Ok(conflict("mail/msg/send")),
        Err(other) => return Err(other),
    }
    if let Some(message) = &answered {
        mailbox::announce(req.session(), &uid, message);
    }
    Ok(envelope::ok(&dialogue))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bots_answer_as_spts_do() {
        let spt = json!({"Info": {"Nickname": "SPT"}});
        let commando = json!({"Info": {"Nickname": "Commando"}});
        assert_eq!(reply(&spt, "Hello", "Runner"), "Hello Runner");
        assert_eq!(reply(&spt, "what", "Runner"), "Unknown command.");
        assert!(reply(&spt, "help", "Runner").starts_with("The available commands are:"));
        assert!(reply(&commando, "hello", "Runner").starts_with("I'm sorry soldier"));
        assert_eq!(reply(&commando, "HELP", "Runner"), "The available commands will be listed below:");
    }
}
