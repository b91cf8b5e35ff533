//! [`Peers`]: the mods of one generation as events and calls see them, and [`Chain`]: what a call
//! runs inside (the calls on the stack, the request's session, the session locks the chain holds).
//!
//! A request's handler, its hooks, the subscribers of the events they emit and the functions they call
//! form one chain. Every step is a call into its own fresh instance (`instance.rs`), so limits, grants
//! and quarantine stay each mod's; the chain only carries what must flow from caller to callee:
//! - the frames, so nesting is bounded ([`MAX_DEPTH`]) and a step already running (the same mod
//!   hearing the same topic, or running the same function, or handling the same route) is never
//!   started again inside itself: that is a cycle, which would only end at the depth bound. Both are
//!   error values for the caller. A mod may be entered again for another step: the game emits
//!   `profile.created` and a subscriber calls the game's `give-item`, which is why a mod emits after
//!   its own writes (`docs/mods-together.md`);
//! - the session the chain works for and the session locks it holds, so a call for another player's
//!   session takes that lock (and never one the chain already holds, which would deadlock).
//!
//! `Peers` is the generation's, built as the mods load (a mod's `init` reaches the mods loaded before
//! it); a mod's context holds it weakly, so a generation and its mods never keep each other alive.

use super::LoadedMod;
use crate::session::{SessionGuard, SessionId, SessionLocks};
use std::sync::{Arc, PoisonError, RwLock};

/// How deep events and calls nest: the request's handler (or a hook) is the first frame.
pub(crate) const MAX_DEPTH: usize = 8;

/// The mods of one generation, in load order.
#[derive(Debug)]
pub(crate) struct Peers {
    mods: RwLock<Vec<Arc<LoadedMod>>>,
    /// The server's session locks (shared by every generation), for `call-for-session`.
    pub(crate) sessions: Arc<SessionLocks>,
    /// The server's notifier, mods' sockets and timers (shared by every generation), for `push`,
    /// `sockets` and `timers`.
    pub(crate) realtime: Arc<crate::realtime::Realtime>,
}

impl Peers {
    pub(crate) fn new(sessions: Arc<SessionLocks>, realtime: Arc<crate::realtime::Realtime>) -> Peers {
        Peers { mods: RwLock::default(), sessions, realtime }
    }

    /// Adds a mod that finished loading (load order is the order of these calls).
    pub(crate) fn add(&self, module: Arc<LoadedMod>) {
        self.mods.write().unwrap_or_else(PoisonError::into_inner).push(module);
    }

    /// The loaded mod `id`.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<LoadedMod>> {
        self.mods.read().unwrap_or_else(PoisonError::into_inner).iter().find(|m| m.id() == id).cloned()
    }

    /// The loaded mod, other than `except`, whose `emit` grant names `topic`: the topic is its, even
    /// when it starts with `except`'s id (a mod named `profile` does not own `profile.created`).
    pub(crate) fn topic_granted_to(&self, topic: &str, except: &str) -> Option<Arc<str>> {
        let mods = self.mods.read().unwrap_or_else(PoisonError::into_inner);
        mods.iter().find(|m| m.id() != except && m.grants().grants_emit(topic)).map(|m| m.context_arc().id.clone())
    }

    /// The mods that subscribe to `topic`, in load order, without `except` (the emitter).
    pub(crate) fn subscribers(&self, topic: &str, except: &str) -> Vec<Arc<LoadedMod>> {
        let mods = self.mods.read().unwrap_or_else(PoisonError::into_inner);
        mods.iter().filter(|m| m.id() != except && m.declarations().hears(topic)).cloned().collect()
    }
}

/// What a frame of the chain is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// `routes`, `declare` or `init`, at load.
    Load,
    /// `handle`, for this route.
    Handle(String),
    /// A before- or after-hook on this path.
    Hook(String),
    /// `on-event`, for this topic.
    Event(String),
    /// `invoke`, of this function.
    Call(String),
    /// `accept`, `on-message` or `on-close`, on this socket route.
    Socket(String),
    /// `on-timer`, of this timer.
    Timer(String),
}

/// One call on the chain's stack.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub(crate) module: Arc<str>,
    pub(crate) step: Step,
}

impl std::fmt::Display for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = &self.module;
        match &self.step {
            Step::Load => write!(f, "{m} (loading)"),
            Step::Handle(route) => write!(f, "{m} handling {route}"),
            Step::Hook(path) => write!(f, "{m}'s hook on {path}"),
            Step::Event(topic) => write!(f, "{m} hearing {topic}"),
            Step::Call(function) => write!(f, "{m}.{function}"),
            Step::Socket(route) => write!(f, "{m} on socket {route}"),
            Step::Timer(name) => write!(f, "{m}'s timer {name}"),
        }
    }
}

/// What a call runs inside: cheap to clone (a callee's chain is its caller's plus one frame).
#[derive(Debug, Clone, Default)]
pub(crate) struct Chain {
    /// Outermost first; the running call's own frame last.
    frames: Vec<Frame>,
    /// The session the chain works for: the request's, or the one a `call-for-session` named.
    pub(crate) session: Option<SessionId>,
    /// The sessions whose locks the chain holds (the request's own is held by the front).
    held: Vec<SessionId>,
    /// Locks taken for this chain by `call-for-session`, released when the callee returns.
    _guards: Arc<Vec<SessionGuard>>,
}

/// Why a chain cannot take one more step.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ChainError {
    /// One more frame would pass [`MAX_DEPTH`].
    #[error("events and calls nest at most {MAX_DEPTH} deep; the chain is: {0}")]
    TooDeep(String),
    /// The step is already running in the chain.
    #[error("a cycle: {step} is already running in this chain ({chain})")]
    Cycle { step: String, chain: String },
}

impl Chain {
    /// The chain of a request (or a load step) whose session lock, if any, the caller holds.
    pub(crate) fn root(module: &Arc<str>, step: Step, session: Option<SessionId>) -> Chain {
        Chain {
            // An `Arc` clone, not a copy of the id: every request starts a chain.
            frames: vec![Frame { module: module.clone(), step }],
            session,
            held: session.into_iter().collect(),
            _guards: Arc::default(),
        }
    }

    /// The mod of the running call, if any.
    pub(crate) fn current(&self) -> Option<&str> {
        self.frames.last().map(|f| &*f.module)
    }

    fn describe(&self) -> String {
        let names: Vec<String> = self.frames.iter().map(Frame::to_string).collect();
        if names.is_empty() { "empty".to_owned() } else { names.join(" → ") }
    }

    /// Whether `module` may take `step` next: the chain is not full and the step is not in it.
    pub(crate) fn admits(&self, module: &str, step: &Step) -> Result<(), ChainError> {
        if self.frames.iter().any(|f| &*f.module == module && f.step == *step) {
            let frame = Frame { module: module.into(), step: step.clone() };
            return Err(ChainError::Cycle { step: frame.to_string(), chain: self.describe() });
        }
        if self.frames.len() >= MAX_DEPTH {
            return Err(ChainError::TooDeep(self.describe()));
        }
        Ok(())
    }

    /// The chain of `module` taking `step` on behalf of this one (checked first with [`Self::admits`]).
    pub(crate) fn child(&self, module: &Arc<str>, step: Step) -> Chain {
        let mut child = self.clone();
        child.frames.push(Frame { module: module.clone(), step });
        child
    }

    /// Whether the running call is nested in another (an event or a call inside a step): its chain's
    /// earlier frames hold instances while it runs.
    pub(crate) fn nested(&self) -> bool {
        self.frames.len() > 1
    }

    /// Whether `module` runs in one of the running call's callers: the chain holds an instance of
    /// it, and with it one of its share of slots.
    pub(crate) fn reenters(&self, module: &str) -> bool {
        let callers = &self.frames[..self.frames.len().saturating_sub(1)];
        callers.iter().any(|f| &*f.module == module)
    }

    /// Whether the chain holds `session`'s lock.
    pub(crate) fn holds(&self, session: SessionId) -> bool {
        self.held.contains(&session)
    }

    /// This chain switched to `session` (for a `call-for-session`), with `guard` when its lock was
    /// taken for it (none: the chain held it already).
    pub(crate) fn for_session(mut self, session: SessionId, guard: Option<SessionGuard>) -> Chain {
        self.session = Some(session);
        if let Some(guard) = guard {
            self.held.push(session);
            // The parent's guards stay the parent's (it releases them); this chain adds its own.
            self._guards = Arc::new(vec![guard]);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_refuses_a_step_already_in_it_and_a_step_past_the_depth() {
        let (b, game): (Arc<str>, Arc<str>) = ("b".into(), "game".into());
        let root = Chain::root(&game, Step::Handle("/x".into()), None);
        let heard = root.child(&b, Step::Event("t".into()));
        assert!(heard.admits("game", &Step::Call("give".into())).is_ok(), "another step of a mod on the chain");
        let called = heard.child(&game, Step::Call("give".into()));
        let e = called.admits("b", &Step::Event("t".into())).unwrap_err().to_string();
        assert!(e.contains("cycle: b hearing t") && e.contains("game handling /x → b hearing t → game.give"), "{e}");
        let mut chain = root;
        for i in 1..MAX_DEPTH {
            let m: Arc<str> = format!("m{i}").into();
            assert!(chain.admits(&m, &Step::Call("f".into())).is_ok(), "frame {i}");
            chain = chain.child(&m, Step::Call("f".into()));
        }
        let e = chain.admits("another", &Step::Call("f".into())).unwrap_err().to_string();
        assert!(e.contains(&format!("at most {MAX_DEPTH} deep")), "{e}");
    }
}
