//! [`Peers`]: the mods of one generation as events and calls see them.

/// The mods of one generation, for events and calls.
#[derive(Debug, Default)]
pub(crate) struct Peers {}
