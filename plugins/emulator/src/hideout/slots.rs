//! See `hideout/mod.rs`: not written yet.

use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome};
use crate::templates::Templates;
use serde_json::Value;

/// Not supported yet.
pub(crate) fn put_items(_: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    Err(format!("the action `{}` is not supported yet", action["Action"].as_str().unwrap_or_default()).into())
}

/// Not supported yet.
pub(crate) fn take_items(_: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    Err(format!("the action `{}` is not supported yet", action["Action"].as_str().unwrap_or_default()).into())
}

/// Not supported yet.
pub(crate) fn toggle(_: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    Err(format!("the action `{}` is not supported yet", action["Action"].as_str().unwrap_or_default()).into())
}
