//! Mods' timers, over the wire: a one-shot fires with its name, payload and session, under that
//! session's lock; a periodic timer keeps its period; a timer due while the server was off fires
//! once after the restart (a periodic one too, not once per missed period); cancel and the
//! schedule caps; a failing, trapping or looping timer is logged, counted and stopped while the
//! server keeps serving; a reload moves periodic timers to the new generation's mod. A timer has the
//! rights of its session's request and no more (issue 29): it names only the session of the call
//! that schedules it, pushes only where that request could, never locks the player out, and a
//! spinning one is stopped and strikes as a request's handler does. The mod is
//! `tests/fixtures/timer` (its contract: its README), which records each firing in its store.
//!
//! Every wait polls with a bound on both its count and its time, and no test asserts how fast a
//! timer fired: windows are counted on the host's due times, which lateness does not move.

use super::Captured;
use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, TestServerBuilder, guests};
use serde_json::{Value, json};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const SESSION: &str = "0123456789abcdef01234567";
const OTHER: &str = "fedcba9876543210fedcba98";

/// The timer fixture installed as `tm`, with `config` as its shipped defaults, and no grants.
fn timer_mod(builder: TestServerBuilder, config: Value) -> TestServerBuilder {
    timer_mod_with(builder, config, "")
}

/// [`timer_mod`] with `manifest` appended to its `mod.toml` (grants).
fn timer_mod_with(builder: TestServerBuilder, config: Value, manifest: &str) -> TestServerBuilder {
    let dir = builder.root().join("mods").join("tm");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.default.json"), config.to_string()).unwrap();
    builder.with_mod("tm", guests::TIMER, manifest)
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

async fn schedule(server: &TestServer, ask: Value) -> Value {
    schedule_as(server, None, ask).await
}

/// Schedules from a request of `session` (none: a request without one).
async fn schedule_as(server: &TestServer, session: Option<&str>, ask: Value) -> Value {
    let mut call = Call::post_raw("/timer/schedule", ask.to_string().as_bytes());
    if let Some(session) = session {
        call = call.session(session);
    }
    let reply = send(server.addr, &call).await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json()
}

/// Schedules one timer and answers its id.
async fn schedule_one(server: &TestServer, ask: Value) -> String {
    schedule_one_as(server, None, ask).await
}

/// Schedules one timer from a request of `session` and answers its id.
async fn schedule_one_as(server: &TestServer, session: Option<&str>, ask: Value) -> String {
    let answer = schedule_as(server, session, ask).await;
    answer["ids"][0].as_str().unwrap_or_else(|| panic!("not scheduled: {answer}")).to_owned()
}

async fn get(server: &TestServer, path: &str) -> Value {
    let reply = send(server.addr, &Call::get(path)).await.unwrap();
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    reply.json()
}

async fn fired(server: &TestServer) -> Vec<Value> {
    get(server, "/timer/fired").await.as_array().cloned().unwrap_or_default()
}

/// Polls `look` every 50 ms until it answers `Some`, at most `within` (and 400 times).
async fn wait_for<T>(what: &str, within: Duration, mut look: impl AsyncFnMut() -> Option<T>) -> T {
    let started = Instant::now();
    for _ in 0..400 {
        if let Some(found) = look().await {
            return found;
        }
        if started.elapsed() > within {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: not within {} ms", within.as_millis())
}

/// The firings of timer `id`.
async fn firings_of(server: &TestServer, id: &str) -> Vec<Value> {
    fired(server).await.into_iter().filter(|f| f["id"] == id).collect()
}

/// `tm` as `/modhost/mods` shows it.
async fn mod_view(server: &TestServer) -> Value {
    let mods = get(server, "/modhost/mods").await;
    mods["loaded"].as_array().unwrap().iter().find(|m| m["id"] == "tm").cloned().unwrap_or_else(|| panic!("{mods}"))
}

#[tokio::test]
async fn a_one_shot_timer_fires_once_with_its_name_payload_and_session_under_the_sessions_lock() {
    let server = timer_mod(TestServer::builder(), json!({})).start().await.unwrap();
    let before = now_ms();
    let ask = json!({"name": "note", "delay_ms": 200, "session": SESSION, "payload": "hello"});
    let id = schedule_one_as(&server, Some(SESSION), ask).await;
    let fired = wait_for("the note", Duration::from_secs(10), async || firings_of(&server, &id).await.pop()).await;
    assert_eq!(
        (&fired["name"], &fired["payload"], &fired["session"]),
        (&json!("note"), &json!("hello"), &json!(SESSION))
    );
    let due = fired["due_ms"].as_u64().unwrap();
    assert!(due >= before + 200 && due <= now_ms(), "due {due}, scheduled at {before} + 200");
    assert!(fired["seen_ms"].as_u64().unwrap() >= due, "not before its due time: {fired}");
    // Fired, then its record deleted: nothing pending.
    wait_for("the record gone", Duration::from_secs(5), async || {
        (mod_view(&server).await["timers_pending"] == 0).then_some(())
    })
    .await;
    assert_eq!(firings_of(&server, &id).await.len(), 1, "once");

    // Its session's lock is held while it runs: a request of that session waits for the handler's
    // end; one of another session does not.
    let id = schedule_one_as(
        &server,
        Some(SESSION),
        json!({"name": "spin", "delay_ms": 50, "session": SESSION, "payload": "{\"spin_ms\": 1500}"}),
    )
    .await;
    wait_for("the spin to start", Duration::from_secs(10), async || {
        get(&server, "/timer/started").await.as_array().unwrap().contains(&json!(id)).then_some(())
    })
    .await;
    let other = send(server.addr, &Call::get("/timer/now").session(OTHER)).await.unwrap().json();
    let same = send(server.addr, &Call::get("/timer/now").session(SESSION)).await.unwrap().json();
    let spun =
        wait_for("the spin's record", Duration::from_secs(10), async || firings_of(&server, &id).await.pop()).await;
    let ended = spun["ended_ms"].as_u64().unwrap();
    assert!(same["now_ms"].as_u64().unwrap() >= ended, "the session's request ran after the timer: {same} vs {spun}");
    assert!(other["now_ms"].as_u64().unwrap() < ended, "another session's did not wait: {other} vs {spun}");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_periodic_timer_of_one_second_fires_3_or_4_times_in_3_5_seconds() {
    let server =
        timer_mod(TestServer::builder(), json!({"every": [{"name": "tick", "every_s": 1}]})).start().await.unwrap();
    // Listed with its next due time once the scheduler has queued it (it starts with `run`).
    let view = wait_for("tick listed", Duration::from_secs(10), async || {
        let view = mod_view(&server).await;
        (view["timers"][0]["name"] == "tick").then_some(view)
    })
    .await;
    assert_eq!(view["timers"][0]["every_s"], 1, "{view}");
    assert!(view["timers"][0]["next_due_ms"].as_u64().unwrap() > now_ms() - 1000, "{view}");
    let start = now_ms();
    let end = start + 3500;
    // Counted on the due times the host gave, once one past the window has fired: a window of 3.5
    // periods holds 3 or 4 due times, by where it falls on the timer's phase. Counting arrival times
    // instead would let a late firing (a busy machine) move one out of the window.
    let ticks = wait_for("a tick past the window", Duration::from_secs(15), async || {
        let ticks = fired(&server).await;
        ticks.iter().any(|t| t["due_ms"].as_u64().unwrap() > end).then_some(ticks)
    })
    .await;
    let dues: Vec<u64> = ticks.iter().map(|t| t["due_ms"].as_u64().unwrap()).collect();
    let inside = dues.iter().filter(|d| (start..=end).contains(*d)).count();
    assert!((3..=4).contains(&inside), "{inside} ticks due in 3.5 s: {dues:?}");
    for pair in dues.windows(2) {
        assert_eq!(pair[1] - pair[0], 1000, "one period apart: {dues:?}");
    }
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_timer_due_while_the_server_was_off_fires_once_after_the_restart_late_by_the_downtime() {
    let server =
        timer_mod(TestServer::builder(), json!({"every": [{"name": "tick", "every_s": 1}]})).start().await.unwrap();
    wait_for("a first tick", Duration::from_secs(10), async || (!fired(&server).await.is_empty()).then_some(())).await;
    let id = schedule_one(&server, json!({"name": "note", "delay_ms": 500, "payload": "while off"})).await;
    let builder = server.restart_builder();
    server.stop().await.unwrap();
    let stopped = now_ms();
    // Off for 3.5 periods of the tick, and 3 s past the note's due time.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let restarted = now_ms();
    let server = builder.start().await.unwrap();

    let note =
        wait_for("the note after the restart", Duration::from_secs(10), async || firings_of(&server, &id).await.pop())
            .await;
    let (due, late) = (note["due_ms"].as_u64().unwrap(), note["late_ms"].as_u64().unwrap());
    assert!(due < stopped + 600, "it was due while the server was off: {note}");
    assert!(late >= restarted - due, "late by the downtime at least: {note}, restarted at {restarted}");
    // The catch-up tick, then a regular one: only one is late by more than a period, not one per
    // period missed.
    let after = wait_for("two ticks after the restart", Duration::from_secs(10), async || {
        let ticks: Vec<Value> = fired(&server)
            .await
            .into_iter()
            .filter(|t| t["name"] == "tick" && t["seen_ms"].as_u64().unwrap() >= restarted)
            .collect();
        (ticks.len() >= 2).then_some(ticks)
    })
    .await;
    let late: Vec<&Value> = after.iter().filter(|t| t["late_ms"].as_u64().unwrap() >= 1000).collect();
    assert_eq!(late.len(), 1, "one catch-up: {after:?}");
    assert!(late[0]["late_ms"].as_u64().unwrap() >= restarted - stopped - 1000, "{late:?}");
    assert_eq!(firings_of(&server, &id).await.len(), 1, "the note fired once in all");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn cancel_and_the_schedule_caps_are_error_values_with_clear_messages() {
    let server = timer_mod(TestServer::builder(), json!({}))
        .config(|c| c.limits.call_deadline = Duration::from_secs(60))
        .start()
        .await
        .unwrap();
    let id = schedule_one(&server, json!({"name": "note", "delay_ms": 60_000})).await;
    assert_eq!(mod_view(&server).await["timers_pending"], 1);
    assert_eq!(get(&server, &format!("/timer/cancel/{id}")).await, json!({"cancelled": true}));
    assert_eq!(get(&server, &format!("/timer/cancel/{id}")).await, json!({"cancelled": false}), "no longer pending");
    assert_eq!(get(&server, "/timer/cancel/nonsense").await, json!({"cancelled": false}));
    assert_eq!(mod_view(&server).await["timers_pending"], 0);

    let refused = async |ask: Value, kind: &str, says: &str| {
        let answer = schedule(&server, ask.clone()).await;
        assert_eq!(answer["error"]["kind"], kind, "{ask}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("mod tm") && message.contains(says), "{ask}: {message}");
    };
    refused(json!({"name": "Bad Name", "delay_ms": 1}), "invalid", "is not 1-64 characters of [a-z0-9._-]").await;
    refused(json!({"name": "", "delay_ms": 1}), "invalid", "is not 1-64 characters").await;
    refused(json!({"name": "note", "delay_ms": 1, "session": "xyz"}), "invalid", "is not a session id").await;
    refused(json!({"name": "note", "delay_ms": 1, "payload_bytes": 65_537}), "too-large", "at most 65536").await;
    let month = 30 * 24 * 3600 * 1000u64;
    refused(json!({"name": "note", "delay_ms": month + 1}), "too-large", "at most 30 days").await;
    // Exactly at the caps is fine.
    let at_caps = schedule_one(&server, json!({"name": "note", "delay_ms": month, "payload_bytes": 65_536})).await;
    assert!(get(&server, &format!("/timer/cancel/{at_caps}")).await["cancelled"] == true);

    // 1000 pending, then the 1001st is refused; one cancelled makes room.
    let answer = schedule(&server, json!({"name": "note", "delay_ms": 3_600_000, "count": 1000})).await;
    let ids = answer["ids"].as_array().unwrap();
    assert_eq!((ids.len(), &answer["error"]), (1000, &Value::Null), "{}", answer["error"]);
    refused(json!({"name": "note", "delay_ms": 1}), "too-large", "1000 one-shot timers are pending already").await;
    assert_eq!(mod_view(&server).await["timers_pending"], 1000);
    assert_eq!(get(&server, &format!("/timer/cancel/{}", ids[0].as_str().unwrap())).await["cancelled"], true);
    schedule_one(&server, json!({"name": "note", "delay_ms": 3_600_000})).await;
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn a_failing_a_trapping_and_a_looping_timer_are_logged_counted_and_stopped_and_the_server_serves_on() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt().with_writer(captured.clone()).with_ansi(false).finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    tracing::callsite::rebuild_interest_cache();
    let server = timer_mod(TestServer::builder(), json!({}))
        .config(|c| c.limits.call_deadline = Duration::from_millis(1000))
        .start()
        .await
        .unwrap();
    for name in ["fail", "trap", "loop", "unhandled"] {
        schedule_one(&server, json!({"name": name, "delay_ms": 50})).await;
    }
    // Counted, then its record deleted: a failed one-shot is not fired again (more failures, or one
    // left pending, and this wait runs out).
    let view = wait_for("four failures counted, none pending", Duration::from_secs(20), async || {
        let view = mod_view(&server).await;
        (view["timers_failed"] == 4 && view["timers_pending"] == 0).then_some(view)
    })
    .await;
    assert_eq!(view["quarantined"], Value::Null, "{view}");
    let log = captured.text();
    for (name, says) in [
        ("fail", "fail on purpose"),
        ("trap", "trapped"),
        ("loop", "ran past its deadline of 1000 ms"),
        ("unhandled", "handles no one-shot timer `unhandled`"),
    ] {
        let line = log.lines().find(|l| l.contains(&format!("mod tm: timer {name} failed")));
        assert!(line.is_some_and(|l| l.contains(says)), "{name}: {line:?}\n{log}");
    }
    // The server serves on, timers included.
    let now = send(server.addr, &Call::get("/timer/now").session(SESSION)).await.unwrap();
    assert_eq!(now.status, 200);
    let id = schedule_one(&server, json!({"name": "note", "delay_ms": 10})).await;
    wait_for("a note after them", Duration::from_secs(10), async || firings_of(&server, &id).await.pop()).await;
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_reload_moves_periodic_timers_to_the_new_generations_mod() {
    let server =
        timer_mod(TestServer::builder(), json!({"every": [{"name": "tick", "every_s": 1}]})).start().await.unwrap();
    wait_for("a tick", Duration::from_secs(10), async || {
        fired(&server).await.iter().any(|t| t["name"] == "tick").then_some(())
    })
    .await;
    // The new generation's mod declares `tock` instead.
    let config = json!({"every": [{"name": "tock", "every_s": 1}]});
    std::fs::write(server.root().join("mods/tm/config.default.json"), config.to_string()).unwrap();
    let outcome = server.app.reload().await;
    assert!(outcome.ok, "{outcome:?}");
    let reloaded = now_ms();
    wait_for("a tock", Duration::from_secs(10), async || {
        fired(&server).await.iter().any(|t| t["name"] == "tock").then_some(())
    })
    .await;
    // Wait one more period: no tick came due after the reload (one running across it may finish).
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let ticks: Vec<u64> =
        fired(&server).await.iter().filter(|t| t["name"] == "tick").map(|t| t["due_ms"].as_u64().unwrap()).collect();
    assert!(ticks.iter().all(|due| *due <= reloaded), "no tick due after the reload: {ticks:?} vs {reloaded}");
    let view = mod_view(&server).await;
    let names: Vec<&Value> = view["timers"].as_array().unwrap().iter().map(|t| &t["name"]).collect();
    assert_eq!(names, [&json!("tock")], "{view}");
    server.stop().await.unwrap();
}

/// Asserts `answer` is the error `kind` from mod tm, its message saying `says`.
fn assert_error(answer: &Value, kind: &str, says: &str) {
    assert_eq!(answer["error"]["kind"], kind, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("mod tm") && message.contains(says), "{answer}");
}

#[tokio::test]
async fn a_timer_cannot_name_a_session_its_call_did_not_have() {
    let server = timer_mod(TestServer::builder(), json!({})).start().await.unwrap();
    let note = |session: &str| json!({"name": "note", "delay_ms": 60_000, "session": session});
    // Another player's session, from a request of this one: the firing would take that player's lock
    // and push to them as if handling them.
    let answer = schedule_as(&server, Some(SESSION), note(OTHER)).await;
    assert_error(&answer, "denied", "a timer naming another session than the one this call handles needs a grant");
    assert_error(&answer, "denied", "add timers = \"any\" under [grants] in mod.toml");
    // Any session, from a request without one.
    let answer = schedule_as(&server, None, note(SESSION)).await;
    assert_error(&answer, "denied", "a timer naming a session from a call that handles none needs a grant");
    // The request's own session (either case), and none at all, are the mod's.
    schedule_one_as(&server, Some(SESSION), note(SESSION)).await;
    schedule_one_as(&server, Some(SESSION), note(&SESSION.to_uppercase())).await;
    schedule_one_as(&server, Some(SESSION), json!({"name": "note", "delay_ms": 60_000})).await;
    assert_eq!(mod_view(&server).await["timers_pending"], 3, "the refused ones were not stored");
    server.stop().await.unwrap();

    // With the grant, any session.
    let server = timer_mod_with(TestServer::builder(), json!({}), "[grants]\ntimers = \"any\"").start().await.unwrap();
    schedule_one_as(&server, Some(SESSION), note(OTHER)).await;
    schedule_one_as(&server, None, note(OTHER)).await;
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_timer_cannot_lock_a_player_out() {
    // Six timers of the player's session that re-arm themselves and spin 900 ms each (within the
    // deadline: they succeed, no strike), against a lock timeout of 3 s. Waiting in the lock's queue,
    // a request would wait behind five of them (4.5 s): 503.
    let server = timer_mod(TestServer::builder(), json!({}))
        .config(|c| {
            c.limits.call_deadline = Duration::from_millis(2000);
            c.session_lock_timeout = Duration::from_millis(3000);
        })
        .start()
        .await
        .unwrap();
    let spin = json!({"name": "spin", "delay_ms": 0, "session": SESSION, "count": 6,
        "payload": "{\"spin_ms\": 900, \"rearm\": true}"});
    let answer = schedule_as(&server, Some(SESSION), spin).await;
    assert_eq!(answer["ids"].as_array().map(Vec::len), Some(6), "{answer}");
    wait_for("a spin to start", Duration::from_secs(10), async || {
        (!get(&server, "/timer/started").await.as_array().unwrap().is_empty()).then_some(())
    })
    .await;
    // The player's requests keep answering while the timers spin and re-arm.
    for i in 0..8 {
        let reply = send(server.addr, &Call::get("/timer/now").session(SESSION)).await.unwrap();
        assert_eq!(reply.status, 200, "request {i} of the player: {}", reply.text());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The timers did run meanwhile, for that session, re-arming themselves (a timer names its own
    // session, no grant needed), and never two at once under the one lock.
    let spun: Vec<Value> = fired(&server).await.into_iter().filter(|f| f["name"] == "spin").collect();
    assert!(spun.len() >= 2, "the timers ran: {spun:?}");
    assert!(spun.iter().all(|f| f["session"] == SESSION), "{spun:?}");
    let mut spans: Vec<(u64, u64)> =
        spun.iter().map(|f| (f["seen_ms"].as_u64().unwrap(), f["ended_ms"].as_u64().unwrap())).collect();
    spans.sort();
    assert!(spans.windows(2).all(|w| w[1].0 >= w[0].1), "one at a time under the lock: {spans:?}");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_timers_push_to_another_session_needs_the_push_grant_as_a_requests_push_does() {
    let server = timer_mod(TestServer::builder(), json!({})).start().await.unwrap();
    let push = |to: &str| {
        json!({"name": "push", "delay_ms": 10, "session": SESSION,
        "payload": json!({"to": to, "message": {"type": "ping"}}).to_string()})
    };
    // The timer's own session is the timer's to push to, as a request's is.
    let own = schedule_one_as(&server, Some(SESSION), push(SESSION)).await;
    let other = schedule_one_as(&server, Some(SESSION), push(OTHER)).await;
    let pushed = async |id: &str| {
        wait_for("the push's record", Duration::from_secs(10), async || firings_of(&server, id).await.pop()).await
    };
    assert_eq!(pushed(&own).await["extra"], json!({"delivery": "queued"}));
    let refused = pushed(&other).await;
    assert_error(&refused["extra"], "denied", "add push = \"any\" under [grants]");
    // Nor does naming the other session in the timer itself get around the grant.
    let named = json!({"name": "push", "delay_ms": 10, "session": OTHER,
        "payload": json!({"to": OTHER, "message": {"type": "ping"}}).to_string()});
    assert_error(&schedule_as(&server, Some(SESSION), named).await, "denied", "timers = \"any\"");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_spinning_timer_handler_is_stopped_at_its_deadline_and_strikes_toward_quarantine_like_a_request() {
    // Three strikes of one cause within 4 s quarantine. The schedule request's success keeps
    // failures from striking for a window after it, so the timers come due after that; they run one
    // at a time under the session's lock (a second or so apart), all within the window.
    let server = timer_mod(TestServer::builder(), json!({}))
        .config(|c| {
            c.limits.call_deadline = Duration::from_millis(300);
            c.limits.quarantine_after = 3;
            c.limits.quarantine_window = Duration::from_millis(4000);
        })
        .start()
        .await
        .unwrap();
    let spin = json!({"name": "spin", "delay_ms": 4500, "session": SESSION, "count": 3,
        "payload": "{\"spin_ms\": 4000}"});
    let answer = schedule_as(&server, Some(SESSION), spin).await;
    assert_eq!(answer["ids"].as_array().map(Vec::len), Some(3), "{answer}");
    let view = wait_for("the mod quarantined", Duration::from_secs(20), async || {
        let view = mod_view(&server).await;
        view["quarantined"].is_string().then_some(view)
    })
    .await;
    let why = view["quarantined"].as_str().unwrap();
    assert!(why.contains("deadlines") && why.contains("300 ms"), "{view}");
    // Each stopped, counted, then its record deleted (a failed one-shot is not fired again).
    wait_for("three failures counted, none pending", Duration::from_secs(5), async || {
        let view = mod_view(&server).await;
        (view["timers_failed"] == 3 && view["timers_pending"] == 0).then_some(view)
    })
    .await;
    // Stopped, they hold the player's session no longer: its request gets the quarantine's 503, not
    // the lock's.
    let reply = send(server.addr, &Call::get("/timer/now").session(SESSION)).await.unwrap();
    assert_eq!(reply.status, 503, "{}", reply.text());
    assert!(reply.text().contains("quarantined"), "{}", reply.text());
    server.stop().await.unwrap();
}
