//! Groups and matchmaking for a solo player (SPT's `MatchStaticRouter` → `MatchCallbacks`,
//! `MatchController`): the routes the client calls around the lobby, answered as SPT answers when no
//! one else is on the server. SPT keeps no group state, and neither does the game: every answer is a
//! constant of SPT's, or built from the request only.
//!
//! - `/client/match/available`: SPT's `configs.match.enabled` (false in SPT's config: the client then
//!   starts raids locally, `match/local/start`);
//! - `/client/match/join`, `/client/match/group/start_game`: SPT's `ProfileStatusResponse` with one
//!   `MatchWait` session (SPT's placeholder values);
//! - `/client/match/group/status`: no players, `maxPveCountExceeded` false;
//! - `/client/match/group/invite/send`: SPT's fixed request id;
//! - `/client/match/group/invite/accept`: one empty group member, as SPT;
//! - delete, leave, transfer, invite decline/cancel/cancel-all, raid ready/not-ready, player remove:
//!   `true`; exit, update ping, looking start/stop: null.
//!
//! Each body is bounded and must be an object when sent (`input::object_or_empty`).

use crate::input;
use modhost_sdk::{Request, Response, Result, Router, db, envelope};
use serde_json::json;

/// The largest body a group route reads: the client sends a few ids.
const MAX_BODY: usize = 4 << 10;

/// SPT's answer to an invite (`MatchCallbacks.SendGroupInvite`): a fixed request id.
const INVITE_ID: &str = "2427943f23698ay9f2863735";

/// Adds the group and match routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router
        .route("/client/match/available", available)
        .route("/client/match/updatePing", null)
        .route("/client/match/join", join)
        .route("/client/match/exit", null)
        .route("/client/match/group/delete", yes)
        .route("/client/match/group/leave", yes)
        .route("/client/match/group/status", status)
        .route("/client/match/group/start_game", join)
        .route("/client/match/group/looking/start", null)
        .route("/client/match/group/looking/stop", null)
        .route("/client/match/group/invite/send", invite)
        .route("/client/match/group/invite/accept", accept)
        .route("/client/match/group/invite/decline", yes)
        .route("/client/match/group/invite/cancel", yes)
        .route("/client/match/group/invite/cancel-all", yes)
        .route("/client/match/group/transfer", yes)
        .route("/client/match/group/raid/ready", yes)
        .route("/client/match/group/raid/not-ready", yes)
        .route("/client/match/group/player/remove", yes)
}

fn body(req: &Request) -> Result<()> {
    input::object_or_empty(req, "match", MAX_BODY)
}

fn null(req: &Request) -> Result<Response> {
    body(req)?;
    Ok(envelope::null())
}

fn yes(req: &Request) -> Result<Response> {
    body(req)?;
    Ok(envelope::ok(&true))
}

/// `/client/match/available`: `configs.match.enabled`, false when the db has no match config.
fn available(req: &Request) -> Result<Response> {
    body(req)?;
    let enabled: bool = db::get("configs.match.enabled").unwrap_or(false);
    Ok(envelope::ok(&enabled))
}

/// `/client/match/join` and `/client/match/group/start_game`: SPT's `MatchController.JoinMatch`.
fn join(req: &Request) -> Result<Response> {
    body(req)?;
    Ok(envelope::ok(&json!({
        "maxPveCountExceeded": false,
        "profiles": [{
            "profileid": "TODO", "profileToken": "TODO", "status": "MatchWait", "sid": "", "ip": "", "port": 0,
            "version": "live", "location": "TODO get location", "raidMode": "Online", "mode": "deathmatch",
            "shortId": null, "additional_info": null,
        }],
    })))
}

/// `/client/match/group/status`: no one to group with.
fn status(req: &Request) -> Result<Response> {
    body(req)?;
    Ok(envelope::ok(&json!({ "players": [], "maxPveCountExceeded": false })))
}

fn invite(req: &Request) -> Result<Response> {
    body(req)?;
    Ok(envelope::ok(&INVITE_ID))
}

/// `/client/match/group/invite/accept`: SPT answers one `GroupCharacter` with nothing set.
fn accept(req: &Request) -> Result<Response> {
    body(req)?;
    Ok(envelope::ok(&json!([{}])))
}
