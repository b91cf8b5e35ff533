//! Which versions of the modhost API a component asks for, read from its imports, and whether this
//! host serves them.
//!
//! A component names each interface it imports with its package version
//! (`modhost:plugin/db@0.1.2`). The linker matches a semver-compatible version, so a mod built against
//! a *newer* 0.1.x would link and then fail on the first function this host lacks, and one built
//! against 0.2 would fail with a bare "unknown import". Reading the imports first turns both into one
//! line that says which interface, which version, and what this host serves. The parse is
//! wasmparser's (the crate wasmtime itself reads components with), so nothing is compiled.

use crate::manifest::API_VERSION;
use semver::Version;

/// The package every modhost interface belongs to.
pub const PACKAGE: &str = "modhost:plugin";

/// Why a component's imports cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// The bytes are not a WebAssembly component.
    #[error("not a WebAssembly component: {0}")]
    NotAComponent(String),
    /// An interface of the modhost package at a version this host does not serve.
    #[error(
        "it imports {interface}@{version}, an API version this host does not serve (it serves {PACKAGE} {}): {advice}",
        served_range()
    )]
    Unserved {
        /// The interface, `modhost:plugin/db`.
        interface: String,
        /// The version the component asks for.
        version: Version,
        /// What to do about it.
        advice: &'static str,
    },
    /// An interface of the modhost package without a version.
    #[error(
        "it imports {0} without a version; build it against the WIT in this host's `wit/` ({PACKAGE}@{API_VERSION})"
    )]
    Unversioned(String),
    /// An import no host provides: neither modhost's nor WASI's.
    #[error("it imports `{0}`, which modhost does not provide (only {PACKAGE} and wasi: interfaces)")]
    Foreign(String),
}

/// The modhost API versions this host serves: those semver-compatible with [`API_VERSION`] and not
/// newer than it.
pub fn serves(version: &Version) -> bool {
    let compatible =
        version.major == API_VERSION.major && (API_VERSION.major != 0 || version.minor == API_VERSION.minor);
    compatible && version.pre.is_empty() && *version <= API_VERSION
}

fn served_range() -> String {
    let oldest = if API_VERSION.major == 0 {
        Version::new(0, API_VERSION.minor, 0)
    } else {
        Version::new(API_VERSION.major, 0, 0)
    };
    format!("{oldest} to {API_VERSION}")
}

/// The newest modhost API version among `wasm`'s imports (`None` when it imports no modhost
/// interface), or the first import this host cannot serve.
pub fn required_api(wasm: &[u8]) -> Result<Option<Version>, ApiError> {
    let mut newest: Option<Version> = None;
    for name in component_imports(wasm)? {
        let Some(rest) = name.strip_prefix(PACKAGE).and_then(|r| r.strip_prefix('/')) else {
            if name.starts_with("wasi:") {
                continue;
            }
            return Err(ApiError::Foreign(name));
        };
        let interface = format!("{PACKAGE}/{}", rest.split('@').next().unwrap_or(rest));
        let Some((_, version)) = rest.split_once('@') else { return Err(ApiError::Unversioned(interface)) };
        let version = Version::parse(version).map_err(|_| ApiError::Unversioned(interface.clone()))?;
        if !serves(&version) {
            let advice = if version > API_VERSION {
                "it needs a newer modhost; update modhost"
            } else {
                "it was built for an older API; rebuild it against this host's `wit/`"
            };
            return Err(ApiError::Unserved { interface, version, advice });
        }
        if newest.as_ref().is_none_or(|n| version > *n) {
            newest = Some(version);
        }
    }
    Ok(newest)
}

/// The names of a component's own imports of instances and functions (not types, nor those of the modules and components nested in it).
fn component_imports(wasm: &[u8]) -> Result<Vec<String>, ApiError> {
    let bad = |e: wasmparser::BinaryReaderError| ApiError::NotAComponent(e.message().to_owned());
    let mut names = Vec::new();
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        match payload.map_err(bad)? {
            wasmparser::Payload::Version { encoding, .. } => {
                if depth == 0 && encoding != wasmparser::Encoding::Component {
                    return Err(ApiError::NotAComponent("a core module, not a component".into()));
                }
                depth += 1;
            }
            wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
            wasmparser::Payload::ComponentImportSection(reader) if depth == 1 => {
                for import in reader {
                    let import = import.map_err(bad)?;
                    // A type a world uses (`use types.{request}`) is imported under its plain name:
                    // the host provides nothing for it.
                    if !matches!(import.ty, wasmparser::ComponentTypeRef::Type(_)) {
                        names.push(import.name.name.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_versions_are_the_compatible_ones_up_to_the_hosts() {
        assert!(serves(&API_VERSION));
        assert!(serves(&Version::new(API_VERSION.major, API_VERSION.minor, 0)));
        let newer = Version::new(API_VERSION.major, API_VERSION.minor, API_VERSION.patch + 1);
        assert!(!serves(&newer));
        assert!(!serves(&Version::new(API_VERSION.major, API_VERSION.minor + 1, 0)));
        assert!(!serves(&Version::new(API_VERSION.major + 1, 0, 0)));
    }

    #[test]
    fn a_core_module_and_garbage_are_not_components() {
        assert!(matches!(required_api(b"nope"), Err(ApiError::NotAComponent(_))));
        let core = b"\0asm\x01\0\0\0";
        assert!(matches!(required_api(core), Err(ApiError::NotAComponent(_))));
    }
}
