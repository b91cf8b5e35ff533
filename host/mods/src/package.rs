//! A mod package: the one file a player installs and an author publishes (`<id>-<version>.modhost`).
//!
//! A gzip'd tar of the mod's files, first among them `modhost-package.json`, the manifest of the rest:
//!
//! ```json
//! {"format": 1, "id": "welcome-pack", "version": "0.1.0", "api": "0.1.2",
//!  "files": {"mod.toml": "sha256:…", "welcome-pack.wasm": "sha256:…", "config.default.json": "sha256:…"}}
//! ```
//!
//! The files are `mod.toml` and `<id>.wasm` (both required), and optionally `config.default.json`,
//! `config.schema.json` and `README.md`; nothing else, no folders. Reading a package checks, before
//! anything is written anywhere: every file is listed, every listed file is there and hashes to its
//! entry, the manifest's id and version are `mod.toml`'s, the component imports only API versions this
//! host serves ([`crate::required_api`]), and the `api` it records is what the component asks for. Sizes are
//! bounded as the archive is read, so a hostile package (a gzip bomb, a thousand entries) costs at most
//! [`MAX_TOTAL`] bytes of memory. The archive is written deterministically (sorted, mtime 0, mode
//! 0644), so the same files pack to the same bytes and the same OCI digest.

use crate::api::{ApiError, required_api};
use crate::grants::Grants;
use crate::manifest::{Manifest, ManifestError};
use semver::Version;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::io::Read as _;

/// A package's file name extension.
pub const EXTENSION: &str = "modhost";
/// The manifest of hashes inside a package.
pub const MANIFEST_FILE: &str = "modhost-package.json";
/// The package format this host writes and reads.
pub const FORMAT: u32 = 1;
/// The files a package may carry beside `mod.toml` and the component.
pub const OPTIONAL_FILES: [&str; 3] = ["config.default.json", "config.schema.json", "README.md"];
/// The most bytes a package unpacks to (a Python mod's component is about 40 MB).
pub const MAX_TOTAL: u64 = 256 << 20;
/// The most entries an archive may hold: the manifest and five files, with room for none else.
const MAX_ENTRIES: usize = 8;

/// Why a package was refused; each is one line a player can act on.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// Not a gzip'd tar, or a broken one.
    #[error("not a modhost package (a gzip'd tar): {0}")]
    Archive(String),
    /// A file the package must carry is absent.
    #[error("the package has no {0}")]
    Missing(String),
    /// A file the format does not allow, or a path with folders.
    #[error("the package carries `{0}`, which is not a file a mod package holds")]
    Unexpected(String),
    /// A file that is not the one its manifest hashed: damaged or tampered with.
    #[error(
        "{file} does not match the package's manifest (sha256 {found}, the manifest says {expected}): the package was damaged or tampered with"
    )]
    Tampered {
        /// The file.
        file: String,
        /// What the manifest says.
        expected: String,
        /// What the file hashes to.
        found: String,
    },
    /// Over [`MAX_TOTAL`] unpacked, or too many entries.
    #[error("the package is too large: {0}")]
    TooLarge(String),
    /// `modhost-package.json` is malformed or of another format.
    #[error("{MANIFEST_FILE}: {0}")]
    Manifest(String),
    /// `mod.toml` is refused.
    #[error(transparent)]
    ModToml(#[from] ManifestError),
    /// The manifest and `mod.toml` disagree.
    #[error("the package says {0}")]
    Mismatch(String),
    /// The component asks for an API this host does not serve.
    #[error("{0}")]
    Api(#[from] ApiError),
}

/// `modhost-package.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackageManifest {
    /// The package format ([`FORMAT`]).
    pub format: u32,
    /// The mod's id, as `mod.toml` says it.
    pub id: String,
    /// The mod's version, as `mod.toml` says it.
    pub version: String,
    /// The newest modhost API version the component imports (absent: it imports none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Each file's `sha256:<hex>`.
    pub files: BTreeMap<String, String>,
}

/// A package's contents, checked.
#[derive(Debug, Clone)]
pub struct Package {
    /// Its `mod.toml`, parsed.
    pub mod_toml: Manifest,
    /// The newest modhost API version the component imports.
    pub api: Option<Version>,
    /// Every file by name (`mod.toml` and the component among them).
    pub files: BTreeMap<String, Vec<u8>>,
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(bytes))
}

fn wasm_name(id: &str) -> String {
    format!("{id}.wasm")
}

impl Package {
    /// A package of a mod's files: `mod.toml`, the component and the optional files present. Refused
    /// when `mod.toml` is, when its `modhost` range excludes the API the component imports, or when the
    /// component imports an API this host does not serve.
    pub fn new(mod_toml: &str, wasm: Vec<u8>, optional: Vec<(String, Vec<u8>)>) -> Result<Package, PackageError> {
        let manifest = Manifest::parse(mod_toml)?;
        let api = required_api(&wasm)?;
        if let (Some(range), Some(api)) = (&manifest.modhost, &api)
            && !range.matches(api)
        {
            return Err(PackageError::Mismatch(format!(
                "modhost = \"{range}\" in mod.toml, but the component is built against API {api}: fix the range"
            )));
        }
        let mut files = BTreeMap::new();
        for (name, bytes) in optional {
            if !OPTIONAL_FILES.contains(&name.as_str()) {
                return Err(PackageError::Unexpected(name));
            }
            files.insert(name, bytes);
        }
        files.insert("mod.toml".to_owned(), mod_toml.as_bytes().to_vec());
        files.insert(wasm_name(manifest.id.as_str()), wasm);
        Ok(Package { mod_toml: manifest, api, files })
    }

    /// `<id>-<version>.modhost`.
    pub fn file_name(&self) -> String {
        format!("{}-{}.{EXTENSION}", self.mod_toml.id, self.mod_toml.version)
    }

    /// The component.
    pub fn wasm(&self) -> &[u8] {
        &self.files[&wasm_name(self.mod_toml.id.as_str())]
    }

    /// Its grants.
    pub fn grants(&self) -> &Grants {
        &self.mod_toml.grants
    }

    /// The manifest of hashes this package carries.
    pub fn manifest(&self) -> PackageManifest {
        PackageManifest {
            format: FORMAT,
            id: self.mod_toml.id.to_string(),
            version: self.mod_toml.version.to_string(),
            api: self.api.as_ref().map(Version::to_string),
            files: self.files.iter().map(|(name, bytes)| (name.clone(), sha256(bytes))).collect(),
        }
    }

    /// The package file's bytes: deterministic for the same files.
    pub fn to_bytes(&self) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let mut tar = tar::Builder::new(gz);
        tar.mode(tar::HeaderMode::Deterministic);
        let manifest = serde_json::to_vec_pretty(&self.manifest()).unwrap_or_default();
        let entries = std::iter::once((MANIFEST_FILE, manifest.as_slice()))
            .chain(self.files.iter().map(|(name, bytes)| (name.as_str(), bytes.as_slice())));
        for (name, bytes) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            header.set_mtime(0);
            header.set_entry_type(tar::EntryType::Regular);
            // Writing to memory fails only on a name tar cannot hold, and every name here is short.
            let _ = tar.append_data(&mut header, name, bytes);
        }
        tar.into_inner().and_then(|gz| gz.finish()).unwrap_or_default()
    }

    /// Reads and checks a package file's bytes (see the module's doc for what is checked).
    pub fn from_bytes(bytes: &[u8]) -> Result<Package, PackageError> {
        let archive_error = |e: std::io::Error| PackageError::Archive(e.to_string());
        // Bounded before anything is unpacked: the stream stops one byte past the limit.
        let gz = flate2::read::GzDecoder::new(bytes).take(MAX_TOTAL + 1);
        let mut archive = tar::Archive::new(gz);
        let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        let mut manifest_bytes = None;
        let mut total = 0u64;
        for (count, entry) in archive.entries().map_err(archive_error)?.enumerate() {
            let mut entry = entry.map_err(archive_error)?;
            let name = entry.path().map_err(archive_error)?.to_string_lossy().into_owned();
            if count >= MAX_ENTRIES {
                return Err(PackageError::TooLarge(format!("more than {MAX_ENTRIES} entries")));
            }
            let allowed = name == MANIFEST_FILE || name == "mod.toml" || OPTIONAL_FILES.contains(&name.as_str());
            let a_component = name.ends_with(".wasm") && !name.contains('/') && !name.starts_with('.');
            if entry.header().entry_type() != tar::EntryType::Regular || !(allowed || a_component) {
                return Err(PackageError::Unexpected(name));
            }
            total += entry.size();
            if total > MAX_TOTAL {
                return Err(PackageError::TooLarge(format!("over {} MiB unpacked", MAX_TOTAL >> 20)));
            }
            let mut content = Vec::with_capacity(entry.size() as usize);
            entry.read_to_end(&mut content).map_err(archive_error)?;
            let slot = if name == MANIFEST_FILE {
                manifest_bytes.replace(content)
            } else {
                files.insert(name.clone(), content)
            };
            if slot.is_some() {
                return Err(PackageError::Unexpected(format!("{name} (twice)")));
            }
        }
        let manifest_bytes = manifest_bytes.ok_or_else(|| PackageError::Missing(MANIFEST_FILE.into()))?;
        let manifest: PackageManifest =
            serde_json::from_slice(&manifest_bytes).map_err(|e| PackageError::Manifest(e.to_string()))?;
        if manifest.format != FORMAT {
            return Err(PackageError::Manifest(format!(
                "format {} (this modhost reads format {FORMAT}; update modhost)",
                manifest.format
            )));
        }
        // Every file hashed as listed, and nothing unlisted.
        for (name, expected) in &manifest.files {
            let bytes = files.get(name).ok_or_else(|| PackageError::Missing(name.clone()))?;
            let found = sha256(bytes);
            if found != *expected {
                return Err(PackageError::Tampered { file: name.clone(), expected: expected.clone(), found });
            }
        }
        if let Some(unlisted) = files.keys().find(|name| !manifest.files.contains_key(*name)) {
            return Err(PackageError::Unexpected(format!("{unlisted} (not in {MANIFEST_FILE})")));
        }
        let text = files.get("mod.toml").ok_or_else(|| PackageError::Missing("mod.toml".into()))?;
        let text = String::from_utf8(text.clone())
            .map_err(|_| PackageError::Mismatch("a mod.toml that is not UTF-8".into()))?;
        let mod_toml = Manifest::parse(&text)?;
        if manifest.id != mod_toml.id.as_str() || manifest.version != mod_toml.version.to_string() {
            return Err(PackageError::Mismatch(format!(
                "{}@{} but its mod.toml says {}@{}",
                manifest.id, manifest.version, mod_toml.id, mod_toml.version
            )));
        }
        let wasm = wasm_name(mod_toml.id.as_str());
        if let Some(stray) = files.keys().find(|n| n.ends_with(".wasm") && **n != wasm) {
            return Err(PackageError::Unexpected(stray.clone()));
        }
        let component = files.remove(&wasm).ok_or(PackageError::Missing(wasm))?;
        let optional = files.into_iter().filter(|(name, _)| name != "mod.toml").collect();
        let package = Package::new(&text, component, optional)?;
        if package.manifest().api != manifest.api {
            return Err(PackageError::Mismatch(format!(
                "API {} but its component imports API {}",
                manifest.api.as_deref().unwrap_or("none"),
                package.api.as_ref().map_or("none".to_owned(), Version::to_string)
            )));
        }
        Ok(package)
    }
}

/// What `new` may do that `old` could not: each grant line of `new` that `old` lacks.
pub fn added_grants(old: &Grants, new: &Grants) -> Vec<String> {
    let before = old.describe();
    new.describe().into_iter().filter(|line| !before.contains(line)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest component: no imports, no exports.
    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

    fn package(toml: &str) -> Package {
        Package::new(toml, EMPTY_COMPONENT.to_vec(), vec![("README.md".into(), b"# hi".to_vec())]).unwrap()
    }

    /// A package's archive with `edit` applied to its entries (name, bytes) before they are written.
    fn repack(package: &Package, edit: impl FnOnce(&mut Vec<(String, Vec<u8>)>)) -> Vec<u8> {
        let mut entries = vec![(MANIFEST_FILE.to_owned(), serde_json::to_vec(&package.manifest()).unwrap())];
        entries.extend(package.files.iter().map(|(n, b)| (n.clone(), b.clone())));
        edit(&mut entries);
        let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
        for (name, bytes) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            header.set_entry_type(tar::EntryType::Regular);
            // The name written raw, as a hostile packer would: `set_path` refuses `..`.
            header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            header.set_cksum();
            tar.append(&header, bytes.as_slice()).unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap()
    }

    #[test]
    fn a_package_round_trips_deterministically() {
        let p = package("id = \"x\"\nversion = \"1.2.3\"\n");
        assert_eq!(p.file_name(), "x-1.2.3.modhost");
        let bytes = p.to_bytes();
        assert_eq!(bytes, package("id = \"x\"\nversion = \"1.2.3\"\n").to_bytes(), "same files, same bytes");
        let back = Package::from_bytes(&bytes).unwrap();
        assert_eq!(back.files, p.files);
        assert_eq!(back.manifest(), p.manifest());
    }

    #[test]
    fn tampered_missing_unlisted_and_strange_files_are_refused() {
        let p = package("id = \"x\"\nversion = \"1.0.0\"\n");
        let tampered = repack(&p, |e| e.iter_mut().find(|(n, _)| n == "README.md").unwrap().1 = b"# evil".to_vec());
        let e = Package::from_bytes(&tampered).unwrap_err().to_string();
        assert!(e.contains("README.md does not match") && e.contains("tampered"), "{e}");
        let missing = repack(&p, |e| e.retain(|(n, _)| n != "x.wasm"));
        assert!(Package::from_bytes(&missing).unwrap_err().to_string().contains("has no x.wasm"));
        let extra = repack(&p, |e| e.push(("config.schema.json".into(), b"{}".to_vec())));
        assert!(Package::from_bytes(&extra).unwrap_err().to_string().contains("not in modhost-package.json"));
        let path = repack(&p, |e| e.push(("../evil.sh".into(), b"x".to_vec())));
        assert!(Package::from_bytes(&path).unwrap_err().to_string().contains("`../evil.sh`"));
        let no_manifest = repack(&p, |e| e.retain(|(n, _)| n != MANIFEST_FILE));
        assert!(Package::from_bytes(&no_manifest).unwrap_err().to_string().contains("has no modhost-package.json"));
        assert!(Package::from_bytes(b"not a package").unwrap_err().to_string().contains("not a modhost package"));
    }

    #[test]
    fn manifest_and_mod_toml_must_agree() {
        let p = package("id = \"x\"\nversion = \"1.0.0\"\n");
        let other = repack(&p, |e| {
            let mut m = p.manifest();
            m.version = "2.0.0".into();
            e[0].1 = serde_json::to_vec(&m).unwrap();
        });
        let e = Package::from_bytes(&other).unwrap_err().to_string();
        assert!(e.contains("x@2.0.0 but its mod.toml says x@1.0.0"), "{e}");
        let future = repack(&p, |e| {
            let mut m = p.manifest();
            m.format = 9;
            e[0].1 = serde_json::to_vec(&m).unwrap();
        });
        assert!(Package::from_bytes(&future).unwrap_err().to_string().contains("format 9"));
    }

    #[test]
    fn only_the_known_optional_files_are_packed() {
        let e = Package::new(
            "id = \"x\"\nversion = \"1.0.0\"\n",
            EMPTY_COMPONENT.to_vec(),
            vec![("run.sh".into(), vec![])],
        )
        .unwrap_err();
        assert!(e.to_string().contains("`run.sh`"), "{e}");
    }

    #[test]
    fn the_grant_diff_lists_what_is_new() {
        let old = package("id = \"x\"\nversion = \"1.0.0\"\n[grants]\ncall = [\"a\"]\n");
        let new = package("id = \"x\"\nversion = \"1.1.0\"\n[grants]\ncall = [\"a\"]\nhook = [\"/p\"]\n");
        assert_eq!(added_grants(old.grants(), new.grants()), ["hook: /p"]);
        assert!(added_grants(new.grants(), old.grants()).is_empty());
    }
}
