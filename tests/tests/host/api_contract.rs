//! The WIT contract cannot break silently: `wit/` is compared with the last released API, a copy of
//! its WIT kept in `tests/data/wit-released/<version>/`. Every interface, type, function and world
//! import of the release must still be there with the same shape (a mod built against it links and
//! behaves), a world's exports must be the same (a new export is one old mods lack), and anything
//! added needs a newer package version, which the host then serves beside the old (`serves` in
//! `modhost-mods`). Releasing an API means copying `wit/` to a folder named for its version.
//!
//! Each item is rendered to one canonical line by wit-parser (the parser wit-bindgen and wasmtime use),
//! so comments and formatting are free to change and a renamed field or a changed type is not.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wit_parser::{Handle, Resolve, Type, TypeDefKind, TypeOwner, WorldItem};

fn dir(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The newest released API's folder.
fn released() -> PathBuf {
    let root = dir("data/wit-released");
    let mut versions: Vec<(semver::Version, PathBuf)> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flatten()
        .filter_map(|e| Some((semver::Version::parse(e.file_name().to_str()?).ok()?, e.path())))
        .collect();
    versions.sort();
    versions.pop().map(|(_, path)| path).expect("a released API under tests/data/wit-released/")
}

/// A package's version and each of its items rendered: `interface/type name`, `interface/func name`,
/// `world/import key`, `world/export key`.
fn items(path: &Path) -> (semver::Version, BTreeMap<String, String>) {
    let mut resolve = Resolve::default();
    let (package, _) = resolve.push_dir(path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
    let r = &resolve;
    let package = &r.packages[package];
    let version = package.name.version.clone().expect("a versioned package");
    let mut out = BTreeMap::new();
    for (name, id) in &package.interfaces {
        let interface = &r.interfaces[*id];
        out.insert(name.clone(), "interface".to_owned());
        for (ty_name, ty) in &interface.types {
            out.insert(format!("{name}/type {ty_name}"), def(r, &r.types[*ty].kind));
        }
        for (fn_name, f) in &interface.functions {
            out.insert(format!("{name}/func {fn_name}"), func(r, f));
        }
    }
    for (name, id) in &package.worlds {
        let world = &r.worlds[*id];
        for (side, map) in [("import", &world.imports), ("export", &world.exports)] {
            for (key, item) in map {
                let rendered = match item {
                    WorldItem::Interface { id, .. } => format!("interface {}", r.id_of(*id).unwrap_or_default()),
                    WorldItem::Function(f) => func(r, f),
                    WorldItem::Type { id, .. } => def(r, &r.types[*id].kind),
                };
                out.insert(format!("world {name}/{side} {}", r.name_world_key(key)), rendered);
            }
        }
    }
    (version, out)
}

fn ty(r: &Resolve, t: &Type) -> String {
    let Type::Id(id) = t else { return format!("{t:?}").to_lowercase() };
    let typedef = &r.types[*id];
    match &typedef.name {
        Some(name) => {
            let owner = match typedef.owner {
                TypeOwner::Interface(i) => r.interfaces[i].name.clone().unwrap_or_default(),
                TypeOwner::World(w) => r.worlds[w].name.clone(),
                TypeOwner::None => String::new(),
            };
            format!("{owner}.{name}")
        }
        None => def(r, &typedef.kind),
    }
}

fn opt(r: &Resolve, t: &Option<Type>) -> String {
    t.as_ref().map_or_else(|| "_".to_owned(), |t| ty(r, t))
}

fn def(r: &Resolve, kind: &TypeDefKind) -> String {
    let list = |items: Vec<String>| items.join(", ");
    match kind {
        TypeDefKind::Record(x) => {
            format!("record {{{}}}", list(x.fields.iter().map(|f| format!("{}: {}", f.name, ty(r, &f.ty))).collect()))
        }
        TypeDefKind::Resource => "resource".to_owned(),
        TypeDefKind::Handle(Handle::Own(id)) => format!("own<{}>", ty(r, &Type::Id(*id))),
        TypeDefKind::Handle(Handle::Borrow(id)) => format!("borrow<{}>", ty(r, &Type::Id(*id))),
        TypeDefKind::Flags(x) => format!("flags {{{}}}", list(x.flags.iter().map(|f| f.name.clone()).collect())),
        TypeDefKind::Tuple(x) => format!("tuple<{}>", list(x.types.iter().map(|t| ty(r, t)).collect())),
        TypeDefKind::Variant(x) => {
            format!("variant {{{}}}", list(x.cases.iter().map(|c| format!("{}({})", c.name, opt(r, &c.ty))).collect()))
        }
        TypeDefKind::Enum(x) => format!("enum {{{}}}", list(x.cases.iter().map(|c| c.name.clone()).collect())),
        TypeDefKind::Option(t) => format!("option<{}>", ty(r, t)),
        TypeDefKind::Result(x) => format!("result<{}, {}>", opt(r, &x.ok), opt(r, &x.err)),
        TypeDefKind::List(t) => format!("list<{}>", ty(r, t)),
        TypeDefKind::Map(k, v) => format!("map<{}, {}>", ty(r, k), ty(r, v)),
        TypeDefKind::FixedLengthList(t, n) => format!("list<{}, {n}>", ty(r, t)),
        TypeDefKind::Future(t) => format!("future<{}>", opt(r, t)),
        TypeDefKind::Stream(t) => format!("stream<{}>", opt(r, t)),
        TypeDefKind::Type(t) => format!("= {}", ty(r, t)),
        TypeDefKind::Unknown => "unknown".to_owned(),
    }
}

fn func(r: &Resolve, f: &wit_parser::Function) -> String {
    let params: Vec<String> = f.params.iter().map(|p| format!("{}: {}", p.name, ty(r, &p.ty))).collect();
    format!("func({}) -> {}", params.join(", "), opt(r, &f.result))
}

/// What breaks a mod built against `old` when the host serves `new`, and what `new` adds.
fn compare(old: &BTreeMap<String, String>, new: &BTreeMap<String, String>) -> (Vec<String>, Vec<String>) {
    let mut broken = Vec::new();
    for (key, was) in old {
        match new.get(key) {
            None => broken.push(format!("`{key}` was removed (it was `{was}`)")),
            Some(now) if now != was => broken.push(format!("`{key}` changed: `{was}` is now `{now}`")),
            Some(_) => {}
        }
    }
    let added: Vec<String> = new.keys().filter(|k| !old.contains_key(*k)).cloned().collect();
    // A world that asks mods to export more breaks every mod built before.
    for key in added.iter().filter(|k| k.contains("/export ")) {
        broken.push(format!("`{key}` was added: mods built against the release do not export it"));
    }
    (broken, added)
}

#[test]
fn wit_changes_since_the_last_release_are_additive_and_versioned() {
    let (old_version, old) = items(&released());
    let (new_version, new) = items(&dir("../wit"));
    let (broken, added) = compare(&old, &new);
    assert!(broken.is_empty(), "wit/ breaks mods built against API {old_version}:\n{}", broken.join("\n"));
    assert!(new_version >= old_version, "wit/ is {new_version}, older than the release {old_version}");
    if !added.is_empty() {
        assert!(
            new_version > old_version,
            "wit/ adds to API {old_version} without a new version (bump `package modhost:plugin@…`):\n{}",
            added.join("\n")
        );
    }
    assert_eq!(
        new_version.to_string(),
        modhost_mods::API_VERSION.to_string(),
        "wit/'s package version is not the API_VERSION the host says it serves"
    );
}

#[test]
fn the_comparison_catches_a_change_a_removal_and_a_new_export() {
    let (_, old) = items(&released());
    let mut changed = old.clone();
    let (key, _) = old.iter().find(|(k, _)| k.contains("/func ")).unwrap();
    changed.insert(key.clone(), "func() -> _".to_owned());
    assert_eq!(compare(&old, &changed).0.len(), 1, "a changed signature");
    let mut removed = old.clone();
    removed.remove(key);
    assert_eq!(compare(&old, &removed).0.len(), 1, "a removed function");
    let mut exported = old.clone();
    exported.insert("world plugin/export extra".to_owned(), "interface x".to_owned());
    assert_eq!(compare(&old, &exported).0.len(), 1, "a new export");
    let mut added = old.clone();
    added.insert("db/func extra".to_owned(), "func() -> _".to_owned());
    assert_eq!(compare(&old, &added), (vec![], vec!["db/func extra".to_owned()]), "an addition");
}
