//! The host side of the WIT `config` interface: the mod's effective configuration (its defaults with
//! the player's file merged over them, checked at load), read by dotted path. A mod's configuration,
//! not the server's settings (`crate::settings`).

use super::bindings::{Error, modhost::plugin};
use super::state::CallState;

impl plugin::config::Host for CallState {
    fn get(&mut self, path: String) -> Result<String, Error> {
        let config = &*self.cx.config;
        if path.is_empty() {
            return Ok(config.to_string());
        }
        let segments = modhost_db::parse_path(&path).map_err(|e| Error::Invalid(e.to_string()))?;
        let mut at = config;
        for (depth, name) in segments.iter().enumerate() {
            at = match at {
                serde_json::Value::Object(members) => members.get(name),
                _ => None,
            }
            .ok_or_else(|| {
                let shown = modhost_db::join_path(&segments[..=depth].iter().map(String::as_str).collect::<Vec<_>>());
                Error::NotFound(format!("mod {}: nothing at config path `{shown}`", self.cx.id))
            })?;
        }
        Ok(at.to_string())
    }
}
