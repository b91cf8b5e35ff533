//! Step 8 of a request's path: the route's chain. The before-hooks that reach its URL, the route's
//! owner, then the after-hooks, in the generation's one hook order (`modhost_mods::order_hooks`), all
//! inside the request's session lock, which the caller holds. Each hook is a call into its own mod's
//! instance, under that mod's limits, grants and quarantine.
//!
//! A route nobody hooks pays one branch (`HookTable::find` on an empty table). A mod's hooks never run
//! on its own routes. A before-hook may edit the request or answer in the owner's place (the owner
//! and the later before-hooks are then skipped; after-hooks still run). An after-hook sees the answer
//! with an empty body unless it declared `body`; only then are the answer's db references read into
//! bytes for it. A hook that fails is skipped and logged, or fails the request, as the player chose
//! for its mod (`hook_errors` in `modhost.toml`).

use super::answer::{Answer, mod_failed};
use crate::generation::{Generation, Hook};
use crate::perf::Trace;
use crate::sandbox::{CallError, Chain, Chunk, LoadedMod, Request, Response, Step, Verdict};
use crate::session::SessionId;
use crate::settings::HookErrors;
use hyper::StatusCode;
use modhost_mods::Phase;
use std::sync::Arc;

/// The answer and the mod that shaped it last (the one a malformed answer is blamed on).
pub(super) struct Outcome {
    pub(super) response: Response,
    pub(super) shaped_by: Arc<LoadedMod>,
}

/// Runs `request`'s chain: hooks, `owner`'s `handle`, hooks. `body_bytes` is the front's cap on a
/// request's body, which a before-hook's edited body is held to as well.
pub(super) async fn run(
    generation: &Generation,
    owner: &Arc<LoadedMod>,
    mut request: Request,
    session: Option<SessionId>,
    body_bytes: usize,
    trace: Option<&mut Trace>,
) -> Result<Outcome, Answer> {
    let route = request.route.clone();
    let owner_chain = || Chain::root(&owner.context().id, Step::Handle(route.clone()), session);
    let mut hooks = generation.hooks.find(&request.url);
    if hooks.is_empty() {
        let response = owner.handle(&request, owner_chain(), trace).await.map_err(|e| mod_failed(owner.id(), &e))?;
        return Ok(Outcome { response, shaped_by: owner.clone() });
    }
    hooks.retain(|hook| hook.module.id() != owner.id());

    let mut answered = None;
    for hook in hooks.iter().filter(|h| h.spec.phase == Phase::Before) {
        let chain = Chain::root(&hook.module.context().id, Step::Hook(hook.spec.path.clone()), session);
        let verdict = hook.module.before(&hook.spec.path, &request, chain).await;
        match verdict.map_err(HookFailure::Call).and_then(|v| apply_verdict(&mut request, v, body_bytes)) {
            Ok(None) => {}
            Ok(Some(response)) => {
                answered = Some((response, hook.module.clone()));
                break;
            }
            Err(failure) => skip_or_fail(hook, &failure)?,
        }
    }
    let (mut response, mut shaped_by) = match answered {
        Some(answer) => answer,
        None => {
            let response =
                owner.handle(&request, owner_chain(), trace).await.map_err(|e| mod_failed(owner.id(), &e))?;
            (response, owner.clone())
        }
    };

    for hook in hooks.iter().filter(|h| h.spec.phase == Phase::After) {
        let chain = Chain::root(&hook.module.context().id, Step::Hook(hook.spec.path.clone()), session);
        let edit = if hook.spec.body {
            materialise(generation, &mut response, owner)?;
            hook.module.after(&hook.spec.path, &request, &response, chain).await
        } else {
            let headers_only =
                Response { status: response.status, headers: response.headers.clone(), body: Vec::new() };
            hook.module.after(&hook.spec.path, &request, &headers_only, chain).await
        };
        match edit {
            Ok(None) => {}
            Ok(Some(edit)) => {
                if let Some(status) = edit.status {
                    response.status = status;
                }
                if let Some(headers) = edit.headers {
                    response.headers = headers;
                }
                if let Some(body) = edit.body {
                    response.body = body;
                }
                shaped_by = hook.module.clone();
            }
            Err(e) => skip_or_fail(hook, &HookFailure::Call(e))?,
        }
    }
    Ok(Outcome { response, shaped_by })
}

/// Why a hook's step did not count.
enum HookFailure {
    /// The call failed (a trap, a deadline, its error value, quarantine, a full server).
    Call(CallError),
    /// It answered something the host cannot use.
    Bad(String),
}

/// Applies a before-hook's verdict to the request: `Some` is an answer in the owner's place.
fn apply_verdict(request: &mut Request, verdict: Verdict, limit: usize) -> Result<Option<Response>, HookFailure> {
    match verdict {
        Verdict::Proceed => Ok(None),
        Verdict::Answer(response) => Ok(Some(response)),
        Verdict::Edit(edit) => {
            // The owner reads what the client could have sent it, no more.
            if let Some(body) = &edit.body
                && body.len() > limit
            {
                return Err(HookFailure::Bad(format!(
                    "an edited body of {} bytes; requests carry at most {limit}",
                    body.len()
                )));
            }
            if let Some(headers) = edit.headers {
                request.headers = headers;
            }
            if let Some(body) = edit.body {
                request.body = body;
            }
            Ok(None)
        }
    }
}

/// Skips a failed hook (logged, counted) or fails the request, by its mod's `hook_errors`.
fn skip_or_fail(hook: &Hook, failure: &HookFailure) -> Result<(), Answer> {
    let id = hook.module.id();
    let phase = match hook.spec.phase {
        Phase::Before => "before",
        Phase::After => "after",
    };
    match (hook.module.limits().hook_errors, failure) {
        (HookErrors::Fail, HookFailure::Call(e)) => Err(mod_failed(id, e)),
        (HookErrors::Fail, HookFailure::Bad(why)) => Err(Answer::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "a hook answered badly",
            &[("mod", id), ("hook", &hook.spec.path), ("reason", why)],
        )),
        (HookErrors::Skip, failure) => {
            let why = match failure {
                HookFailure::Call(e) => e.to_string(),
                HookFailure::Bad(why) => why.clone(),
            };
            hook.module.context().hooks_skipped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tracing::warn!("mod {id}'s {phase}-hook on {} failed and was skipped: {why}", hook.spec.path);
            Ok(())
        }
    }
}

/// Reads the answer's db references into bytes, from one snapshot, within the owner's answer cap: an
/// after-hook that reads the body sees what the client would.
fn materialise(generation: &Generation, response: &mut Response, owner: &LoadedMod) -> Result<(), Answer> {
    if !response.body.iter().any(|c| matches!(c, Chunk::Db(_))) {
        return Ok(());
    }
    let (limit, snapshot) = (owner.limits().response_bytes, generation.db.snapshot());
    let mut total = 0usize;
    for chunk in &mut response.body {
        if let Chunk::Db(path) = chunk {
            let text = snapshot.get(path).map_err(|e| {
                Answer::error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the mod answered badly",
                    &[("mod", owner.id()), ("reason", &format!("db reference: {e}"))],
                )
            })?;
            *chunk = Chunk::Bytes(text.to_vec());
        }
        total += match chunk {
            Chunk::Bytes(bytes) => bytes.len(),
            Chunk::Db(_) => 0,
        };
        if total > limit {
            return Err(Answer::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the mod answered badly",
                &[("mod", owner.id()), ("reason", &format!("the answer is over the limit of {limit} bytes"))],
            ));
        }
    }
    Ok(())
}
