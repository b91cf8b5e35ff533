//! The mail over the wire (`plugins/emulator/src/mail/`): the dialogue routes as SPT answers them and
//! what read, pin, clear and remove change; a purchase's letter; the chat bots; letters with
//! attachments sent by another mod (`send-mail`, heard as `mail.sent`) and taken into the stash with
//! `Move`, `Split`, `Merge` and `Remove` from the message, each once, with every lie refused and
//! changing nothing (another message's item, an expired one, a taken place, one taken already), units
//! conserved.

use super::emulator::{A, Player, ROUBLES, post};
use modhost_tests::client::{Call, send};
use modhost_tests::gamedb::{RIFLE, TRADER};
use modhost_tests::{TestServer, guests};
use serde_json::{Value, json};
use std::net::SocketAddr;

const SYSTEM: &str = "59e7125688a45068a6249071";
const SPT_BOT: &str = "6723fd51c5924c57ce0ca01f";
const OFFER: &str = "6000000000000000000000a1";

/// The game with the peer fixture installed as `a`, which may call the game and hears `mail.sent`.
async fn server() -> TestServer {
    let builder = TestServer::builder().config(|c| c.builtin_mods = true);
    let dir = builder.root().join("mods").join("a");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.default.json"), json!({"name": "a", "subscriptions": ["mail.sent"]}).to_string())
        .unwrap();
    builder.with_mod("a", guests::PEER, "[grants]\ncall = [\"emulator\"]").start().await.unwrap()
}

/// The envelope's `data` of a mail route.
async fn data(addr: SocketAddr, path: &str, session: &str, body: Value) -> Value {
    let answer = post(addr, path, session, body).await;
    assert_eq!(answer["err"], 0, "{path}: {answer}");
    answer["data"].clone()
}

/// `send-mail` called by the peer mod for `session`: the message's id.
async fn send_mail(addr: SocketAddr, session: &str, letter: Value) -> String {
    let reply =
        send(addr, &Call::post_raw("/peer/a/call/emulator/send-mail", letter.to_string().as_bytes()).session(session))
            .await
            .unwrap();
    let answer = reply.json();
    answer["messageId"].as_str().unwrap_or_else(|| panic!("send-mail: {answer}")).to_owned()
}

/// The messages of `dialogue` as `view` answers them.
async fn view(p: &Player, dialogue: &str) -> Vec<Value> {
    let answer = data(p.addr, "/client/mail/dialog/view", &p.session, json!({"dialogId": dialogue, "type": 7})).await;
    answer["messages"].as_array().unwrap().clone()
}

/// Message `id`'s attachments as `view` answers them.
async fn attachments(p: &Player, dialogue: &str, id: &str) -> Value {
    let messages = view(p, dialogue).await;
    messages.into_iter().find(|m| m["_id"] == id).unwrap_or_else(|| panic!("no message {id}"))["items"].clone()
}

fn from_mail(mut action: Value, message: &str) -> Value {
    action["fromOwner"] = json!({"id": message, "type": "Mail"});
    action
}

fn place(parent: &str, x: i64, y: i64) -> Value {
    json!({"id": parent, "container": "hideout", "location": {"x": x, "y": y, "r": "Horizontal"}})
}

#[tokio::test]
async fn the_dialogue_routes_answer_as_spt_and_change_what_they_say() {
    let server = server().await;
    let addr = server.addr;
    let p = Player::new(addr, A, "Reader").await;
    assert_eq!(data(addr, "/client/mail/dialog/list", A, json!({})).await, json!([]));

    // A purchase is told of by the trader's letter, in SPT's shapes.
    let buy = json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER, "item_id": OFFER,
                     "count": 1, "scheme_id": 0, "scheme_items": [{"id": p.roubles, "count": 25000}]});
    assert_eq!(p.act(buy).await, None);
    let list = data(addr, "/client/mail/dialog/list", A, json!({"limit": 30, "offset": 0})).await;
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    let dialogue = &list[0];
    assert_eq!((&dialogue["_id"], &dialogue["type"], &dialogue["new"]), (&json!(TRADER), &json!(2), &json!(1)));
    assert_eq!(
        (&dialogue["message"]["text"], &dialogue["message"]["type"]),
        (&json!("Thank you for your purchase"), &json!(2))
    );
    assert_eq!(data(addr, "/client/mail/dialog/info", A, json!({"dialogId": TRADER})).await, *dialogue);

    // Viewing it clears its unread count.
    let messages = view(&p, TRADER).await;
    assert_eq!(messages.len(), 1);
    assert_eq!((&messages[0]["uid"], &messages[0]["hasRewards"]), (&json!(TRADER), &json!(false)));
    assert_eq!(data(addr, "/client/mail/dialog/list", A, json!({})).await[0]["new"], 0);

    for (path, pinned) in [("/client/mail/dialog/pin", true), ("/client/mail/dialog/unpin", false)] {
        assert_eq!(data(addr, path, A, json!({"dialogId": TRADER})).await, json!([]), "{path}");
        assert_eq!(data(addr, "/client/mail/dialog/list", A, json!({})).await[0]["pinned"], pinned, "{path}");
    }
    assert_eq!(
        data(addr, "/client/mail/dialog/read", A, json!({"dialogs": [TRADER, "ffffffffffffffffffffffff"]})).await,
        json!([])
    );

    // The SPT friend answers a greeting; the player's message is kept in its dialogue.
    assert_eq!(
        data(addr, "/client/mail/msg/send", A, json!({"dialogId": SPT_BOT, "type": 1, "text": "hello"})).await,
        SPT_BOT
    );
    let chat = view(&p, SPT_BOT).await;
    let texts: Vec<&Value> = chat.iter().map(|m| &m["text"]).collect();
    assert_eq!(texts, [&json!("hello"), &json!("Hello Reader")]);
    assert_eq!(chat[0]["uid"], p.uid.as_str());

    // Clear empties a dialogue and keeps it; remove takes it away.
    assert_eq!(data(addr, "/client/mail/dialog/clear", A, json!({"dialogId": SPT_BOT})).await, json!([]));
    assert!(view(&p, SPT_BOT).await.is_empty());
    assert_eq!(data(addr, "/client/mail/dialog/list", A, json!({})).await.as_array().unwrap().len(), 2);
    assert_eq!(data(addr, "/client/mail/dialog/remove", A, json!({"dialogId": TRADER})).await, json!([]));
    let left: Vec<Value> = data(addr, "/client/mail/dialog/list", A, json!({}))
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["_id"].clone())
        .collect();
    assert_eq!(left, [json!(SPT_BOT)]);

    // What SPT answers a solo player.
    assert_eq!(data(addr, "/client/mail/dialog/group/create", A, json!({"Name": "g", "Users": []})).await, json!([]));
    for path in ["owner/change", "users/add", "users/remove"] {
        let reply =
            send(addr, &Call::post(&format!("/client/mail/dialog/group/{path}"), b"{}").session(A)).await.unwrap();
        let answer = reply.json();
        assert!(
            answer["err"] != 0 && answer["errmsg"].as_str().is_some_and(|m| m.contains("no group chats")),
            "{path}: {answer}"
        );
    }
    let none = post(addr, "/client/mail/dialog/getAllAttachments", A, json!({"dialogId": TRADER})).await;
    assert_eq!((&none["err"], &none["data"]), (&json!(0), &Value::Null), "{none}");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn attachments_are_taken_into_the_stash_once_and_every_lie_is_refused() {
    let server = server().await;
    let addr = server.addr;
    let p = Player::new(addr, A, "Taker").await;
    let letter = json!({"text": "a gift", "items": [{"tpl": ROUBLES, "count": 1000}, {"tpl": RIFLE, "count": 1}]});
    let first = send_mail(addr, A, letter).await;
    let second = send_mail(addr, A, json!({"items": [{"tpl": ROUBLES, "count": 50}]})).await;
    let short = send_mail(addr, A, json!({"items": [{"tpl": ROUBLES, "count": 7}], "maxStorageSeconds": 2})).await;
    let sent_at = std::time::Instant::now();
    let expiring = attachments(&p, SYSTEM, &short).await["data"][0]["_id"].as_str().unwrap().to_owned();
    let heard = send(addr, &Call::get("/peer/a/events").session(A)).await.unwrap().json();
    let sent: Vec<&Value> = heard.as_array().unwrap().iter().filter(|e| e["topic"] == "mail.sent").collect();
    assert_eq!(sent.len(), 3, "{heard}");
    assert_eq!(sent[0]["payload"]["messageId"], first.as_str());

    let list = data(addr, "/client/mail/dialog/list", A, json!({})).await;
    assert_eq!((&list[0]["_id"], &list[0]["type"], &list[0]["attachmentsNew"]), (&json!(SYSTEM), &json!(7), &json!(3)));
    let items = attachments(&p, SYSTEM, &first).await;
    let data_items = items["data"].as_array().unwrap();
    let cash = data_items.iter().find(|i| i["_tpl"] == ROUBLES).unwrap()["_id"].as_str().unwrap().to_owned();
    let rifle = data_items.iter().find(|i| i["_tpl"] == RIFLE).unwrap()["_id"].as_str().unwrap().to_owned();
    assert_eq!(data_items[0]["parentId"], items["stash"]);
    let other = attachments(&p, SYSTEM, &second).await["data"][0]["_id"].as_str().unwrap().to_owned();
    let units_before = p.units(ROUBLES).await;

    // Lies, each refused, changing nothing.
    let lies = [
        (
            "another message's item",
            from_mail(json!({"Action": "Move", "item": other, "to": place(&p.stash, 5, 5)}), &first),
        ),
        (
            "a message that is not the player's",
            from_mail(
                json!({"Action": "Move", "item": rifle, "to": place(&p.stash, 5, 5)}),
                "ffffffffffffffffffffffff",
            ),
        ),
        ("a taken place", from_mail(json!({"Action": "Move", "item": rifle, "to": place(&p.stash, 0, 0)}), &first)),
        ("outside the grid", from_mail(json!({"Action": "Move", "item": rifle, "to": place(&p.stash, 8, 0)}), &first)),
        (
            "more than the attachment holds",
            from_mail(
                json!({"Action": "Split", "splitItem": cash, "newItem": "c1c1c1c1c1c1c1c1c1c1c1c1",
            "count": 1001, "container": place(&p.stash, 5, 5)}),
                &first,
            ),
        ),
        ("onto a full stack", from_mail(json!({"Action": "Merge", "item": cash, "with": p.roubles}), &first)),
    ];
    for (what, lie) in lies {
        assert!(p.act(lie).await.is_some(), "{what} was applied");
        assert_eq!(attachments(&p, SYSTEM, &first).await["data"].as_array().unwrap().len(), 2, "{what}");
        assert_eq!(p.units(ROUBLES).await, units_before, "{what}");
    }

    // The rifle, into a free place; then it is no longer the message's, and cannot be taken again.
    let answer =
        p.moving(vec![from_mail(json!({"Action": "Move", "item": rifle, "to": place(&p.stash, 5, 5)}), &first)]).await;
    assert_eq!(answer["data"]["warnings"], json!([]), "{answer}");
    assert_eq!(answer["data"]["profileChanges"][&p.uid]["items"]["new"][0]["_id"], rifle.as_str());
    assert_eq!(p.item(&rifle).await["location"], json!({"x": 5, "y": 5, "r": "Horizontal"}));
    let again = from_mail(json!({"Action": "Move", "item": rifle, "to": place(&p.stash, 0, 10)}), &first);
    assert!(p.act(again).await.is_some_and(|r| r.contains("not an attachment")));

    // The roubles: 400 split off into a new stack, the other 600 merged into it; the message is then
    // collected. Units are conserved: the stash gained exactly the letter's 1000.
    let fresh = "c2c2c2c2c2c2c2c2c2c2c2c2";
    let split = json!({"Action": "Split", "splitItem": cash, "newItem": fresh, "count": 400, "container": place(&p.stash, 0, 10)});
    assert_eq!(p.act(from_mail(split, &first)).await, None);
    assert_eq!(attachments(&p, SYSTEM, &first).await["data"][0]["upd"]["StackObjectsCount"], 600);
    assert_eq!(p.act(from_mail(json!({"Action": "Merge", "item": cash, "with": fresh}), &first)).await, None);
    assert_eq!(p.item(fresh).await["upd"]["StackObjectsCount"], 1000);
    assert_eq!(p.units(ROUBLES).await, units_before + 1000);
    let collected = view(&p, SYSTEM).await.into_iter().find(|m| m["_id"] == first.as_str()).unwrap();
    assert_eq!((&collected["rewardCollected"], &collected["hasRewards"]), (&json!(true), &json!(false)), "{collected}");

    // Discarded from the mail: gone from it, nothing in the stash.
    assert_eq!(p.act(from_mail(json!({"Action": "Remove", "item": other}), &second)).await, None);
    assert!(attachments(&p, SYSTEM, &second).await["data"].as_array().unwrap().is_empty());
    assert_eq!(p.units(ROUBLES).await, units_before + 1000);

    // The short-lived letter's attachments expire: the client sees none, and a Move is refused.
    // Expired once the game's whole seconds pass `dt + 2`: 3.1 s after it was sent at the latest.
    tokio::time::sleep(std::time::Duration::from_millis(3_100).saturating_sub(sent_at.elapsed())).await;
    assert_eq!(attachments(&p, SYSTEM, &short).await, json!({}), "expired attachments are gone");
    let late = from_mail(json!({"Action": "Move", "item": expiring, "to": place(&p.stash, 0, 20)}), &short);
    assert!(p.act(late).await.is_some_and(|r| r.contains("expired")));
    assert_eq!(p.units(ROUBLES).await, units_before + 1000);
    let all = data(addr, "/client/mail/dialog/getAllAttachments", A, json!({"dialogId": SYSTEM})).await;
    assert_eq!(all["messages"], json!([]), "nothing left to take: {all}");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_dialogue_keeps_at_most_a_thousand_messages_and_never_drops_one_with_items_to_take() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Penpal").await;
    // One letter with money that stays to be taken, then more plain letters than a dialogue keeps.
    let keeper = send_mail(server.addr, A, json!({"text": "keep me", "items": [{"tpl": ROUBLES, "count": 10}]})).await;
    let mut last = String::new();
    for n in 0..1_010 {
        last = send_mail(server.addr, A, json!({"text": format!("letter {n}")})).await;
    }
    let messages = view(&p, SYSTEM).await;
    assert!(messages.len() <= 1_000, "the dialogue holds {} messages", messages.len());
    assert!(messages.len() >= 750, "it dropped more than it had to: {}", messages.len());
    assert!(messages.iter().any(|m| m["_id"] == last.as_str()), "the newest letter was dropped");
    assert!(messages.iter().any(|m| m["_id"] == keeper.as_str()), "a letter with money to take was dropped");
    assert!(messages.iter().all(|m| m["text"] != "letter 0"), "the oldest plain letter was kept");
    server.stop().await.unwrap();
}
