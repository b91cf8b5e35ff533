//! The host side of the WIT `mods` interface: events to every subscriber and calls into a function
//! another mod provides. Each delivery or call runs the other mod in its own instance, under its own
//! limits and grants, as the next frame of the caller's chain (`peers.rs`): nesting is bounded, a mod
//! already running is never entered again, and both are error values for the caller, checked before
//! anything runs.

use super::CallError;
use super::bindings::full::exports::modhost::plugin::guest::{Event, Invocation};
use super::bindings::{Error, modhost::plugin};
use super::peers::{Chain, ChainError, Peers, Step};
use super::state::CallState;
use crate::session::SessionId;
use modhost_mods::Denied;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The largest payload an event or a call carries.
pub(crate) const MAX_PAYLOAD: usize = 1 << 20;

/// How long `call-for-session` waits for another session's lock: short, because the caller holds its
/// own session's lock meanwhile, and two players' requests calling into each other would otherwise
/// wait out the whole lock timeout.
const OTHER_SESSION_WAIT: Duration = Duration::from_secs(2);

impl CallState {
    fn peers(&self) -> Option<Arc<Peers>> {
        self.cx.peers.get().and_then(std::sync::Weak::upgrade)
    }

    fn check_payload(&self, payload: &[u8]) -> Result<(), Error> {
        if payload.len() > MAX_PAYLOAD {
            return Err(Error::TooLarge(format!(
                "mod {}: a payload of {} bytes; events and calls carry at most {MAX_PAYLOAD}",
                self.cx.id,
                payload.len()
            )));
        }
        Ok(())
    }

    /// The chain a call from here runs in (a `routes`/`init` call outside a server has none: its own
    /// frame is the root).
    fn caller_chain(&self) -> Chain {
        match self.chain.current() {
            Some(_) => self.chain.clone(),
            None => Chain::root(&self.cx.id, Step::Load, None),
        }
    }

    async fn call_into(
        &mut self,
        chain: Chain,
        target: String,
        function: String,
        payload: Vec<u8>,
    ) -> Result<Vec<u8>, Error> {
        let id = self.cx.id.clone();
        self.cx.grants.check_call(&target).map_err(|why| self.cx.denied(why))?;
        self.check_payload(&payload)?;
        let callee = self
            .peers()
            .and_then(|peers| peers.get(&target))
            .ok_or_else(|| Error::NotFound(format!("mod {id}: no mod `{target}` is loaded")))?;
        if !callee.declarations().provides(&function) {
            let provided: Vec<&str> = callee.declarations().functions.iter().map(String::as_str).collect();
            return Err(Error::NotFound(format!(
                "mod {id}: mod `{target}` provides no function `{function}` (it provides: {})",
                if provided.is_empty() { "none".to_owned() } else { provided.join(", ") }
            )));
        }
        let step = Step::Call(function.clone());
        chain.admits(&target, &step).map_err(|e| chain_error(&id, e))?;
        let session = chain.session.map(|s| s.as_str().to_owned());
        let child = chain.child(&callee.context_arc().id, step);
        let invocation = Invocation { function, payload, caller: id.to_string(), session };
        // A boxed future: the callee's call may come back here (a call inside a call), and an async
        // fn cannot hold itself.
        let result = Box::pin(callee.invoke(&invocation, child)).await;
        result.map_err(|e| callee_error(&target, &e))
    }
}

impl plugin::mods::Host for CallState {
    async fn emit(&mut self, topic: String, payload: Vec<u8>) -> Result<u32, Error> {
        let id = self.cx.id.clone();
        modhost_mods::check_topic(&topic).map_err(|e| Error::Invalid(format!("mod {id}: {e}")))?;
        // Topics have owners (`modhost_mods::grants`): refused before anything else, subscribers or not.
        self.cx.grants.check_emit(&id, &topic).map_err(|why| self.cx.denied(why))?;
        let peers = self.peers();
        if !self.cx.grants.grants_emit(&topic)
            && let Some(owner) = peers.as_ref().and_then(|p| p.topic_granted_to(&topic, &id))
        {
            return Err(self.cx.denied(Denied::EmitTaken { topic, owner: owner.to_string() }));
        }
        self.check_payload(&payload)?;
        let Some(peers) = peers else { return Ok(0) };
        let subscribers = peers.subscribers(&topic, &id);
        if subscribers.is_empty() {
            return Ok(0);
        }
        let chain = self.caller_chain();
        // Every subscriber is checked before any runs: a cycle delivers nothing.
        let step = Step::Event(topic.clone());
        for subscriber in &subscribers {
            chain.admits(subscriber.id(), &step).map_err(|e| chain_error(&id, e))?;
        }
        let event = Event {
            topic: topic.clone(),
            payload,
            source: id.to_string(),
            session: chain.session.map(|s| s.as_str().to_owned()),
        };
        // The subscribers' time is theirs: each runs on its own deadline, and the emitter's stops
        // meanwhile, so a slow subscriber is stopped and counted against itself and never runs out
        // the emitter's call after it wrote what the event announces (`deadline.rs`).
        let _paused = self.deadline.as_ref().map(|deadline| deadline.pause());
        let mut heard = 0;
        for subscriber in subscribers {
            let child = chain.child(&subscriber.context_arc().id, step.clone());
            match Box::pin(subscriber.on_event(&event, child)).await {
                Ok(()) => heard += 1,
                Err(e) => {
                    // A quarantined subscriber did not run: its failures were counted already.
                    if !matches!(e, CallError::Quarantined(_)) {
                        subscriber.context().events_failed.fetch_add(1, Ordering::Relaxed);
                    }
                    tracing::warn!("mod {} failed on event {topic} from {id}: {e}", subscriber.id());
                }
            }
        }
        Ok(heard)
    }

    async fn call(&mut self, target: String, function: String, payload: Vec<u8>) -> Result<Vec<u8>, Error> {
        let chain = self.caller_chain();
        self.call_into(chain, target, function, payload).await
    }

    async fn call_for_session(
        &mut self,
        session: String,
        target: String,
        function: String,
        payload: Vec<u8>,
    ) -> Result<Vec<u8>, Error> {
        let id = self.cx.id.clone();
        let session = SessionId::parse(&session).map_err(|_| {
            Error::Invalid(format!(
                "mod {id}: session `{}` is not 24 hex digits",
                session.chars().take(64).collect::<String>()
            ))
        })?;
        // Checked before a lock is waited for: a call that would be refused takes nothing.
        self.cx.grants.check_call(&target).map_err(|why| self.cx.denied(why))?;
        let chain = self.caller_chain();
        chain.admits(&target, &Step::Call(function.clone())).map_err(|e| chain_error(&id, e))?;
        let guard = match chain.holds(session) {
            true => None,
            false => {
                let peers =
                    self.peers().ok_or_else(|| Error::NotFound(format!("mod {id}: no mod `{target}` is loaded")))?;
                let guard = peers.sessions.lock(session, OTHER_SESSION_WAIT).await.map_err(|_| {
                    Error::Conflict(format!(
                        "mod {id}: session {} stayed busy for {} ms (another request of it is running)",
                        session.as_str(),
                        OTHER_SESSION_WAIT.as_millis()
                    ))
                })?;
                Some(guard)
            }
        };
        self.call_into(chain.for_session(session, guard), target, function, payload).await
    }
}

fn chain_error(id: &str, e: ChainError) -> Error {
    match e {
        ChainError::TooDeep(_) => Error::TooLarge(format!("mod {id}: {e}")),
        ChainError::Cycle { .. } => Error::Invalid(format!("mod {id}: {e}")),
    }
}

/// What the caller sees of a callee's failure: its own error value as it returned it (its kind
/// kept), anything else (a trap, a deadline, quarantine, a full server) as `failed`.
fn callee_error(target: &str, e: &CallError) -> Error {
    let message = match e {
        CallError::Mod { reason, .. } => format!("mod `{target}`: {reason}"),
        _ => format!("mod `{target}`: {e}"),
    };
    match e {
        // `wrong-kind`, `unreadable` and `io` share 500 with `failed`: the caller sees `failed`.
        CallError::Mod { status, .. } => match status {
            400 => Error::Invalid(message),
            403 => Error::Denied(message),
            404 => Error::NotFound(message),
            409 => Error::Conflict(message),
            413 => Error::TooLarge(message),
            _ => Error::Failed(message),
        },
        _ => Error::Failed(message),
    }
}
