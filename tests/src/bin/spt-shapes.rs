//! `spt-shapes [SPT_GIT_DIR] [COMMIT] > tests/data/spt-shapes.json`: reads SPT's C# models
//! (`Libraries/SPTarkov.Server.Core/Models/**/*.cs` at COMMIT, HEAD by default, from a clone or bare
//! mirror of `sp-tarkov/server-csharp`) and writes the shape tree of every model: each member by the
//! JSON name SPT writes, its JSON kind, and whether SPT always writes it. `game_shapes.rs` checks the
//! game's answers against these trees.
//!
//! A Rust bin, not a script: the tree is read once and committed, so this runs rarely, and keeping it
//! in the workspace's one toolchain means anyone who can run the tests can regenerate the data
//! (no .NET, no Python). It reads C# through a small tokenizer that knows the model files' subset:
//! top-level records, classes and enums, attributes, properties, generics, arrays and `?`.
//!
//! How SPT writes JSON (`Utils/JsonUtil.cs`): System.Text.Json with
//! `DefaultIgnoreCondition = WhenWritingNull` and no naming policy, so
//! - a member's name is its `[JsonPropertyName]`, else the C# property name;
//! - a nullable member (`T?`) may be left out (null); a non-nullable one, or one marked
//!   `[JsonIgnore(Condition = Never)]`, is always written (`required` in the tree), the latter
//!   possibly as null;
//! - an enum is `enum` in the tree: a number or its name. SPT writes numbers, or names where a
//!   `JsonStringEnumConverter` or `EftListEnumConverter` says so, but its own database files hold
//!   names where it writes numbers (`globals.json`'s `EventType`, `RadioStations[].Station`), its
//!   readers (`EftEnumConverter`, `JsonStringEnumConverter`) take both, and so does the client's: the
//!   tree does not tell them apart, so a database served as imported passes;
//! - `[JsonConverter(typeof(ArrayToObjectFactoryConverter))]` writes `[]` for null, else the object;
//! - `[JsonExtensionData]` lets an object carry members the model does not name.
//!
//! A type expression in the output is a string, `string`, `number`, `bool`, `enum`, `any`, `@Model` (a
//! model by key) or `$T` (a generic parameter), or an object: `{"list": T}`, `{"dict": T}` (values;
//! keys are strings), `{"null_or": T}` (an element that may be null), `{"one_or_list": T}`,
//! `{"dict_or_list": T}`, `{"or_empty_array": T}`, `{"model": key, "args": [T…]}`.

use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::process::Command;

const MODELS: &str = "Libraries/SPTarkov.Server.Core/Models";
const NS_PREFIX: &str = "SPTarkov.Server.Core.Models.";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let git_dir = args.get(1).map_or("/work/.mirror/sp-tarkov+server-csharp/repo", String::as_str);
    let commit = args.get(2).map_or("HEAD", String::as_str);
    let git = |args: &[&str]| -> anyhow::Result<String> {
        let out = Command::new("git").arg("--git-dir").arg(git_dir).args(args).output()?;
        anyhow::ensure!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let commit_id = git(&["rev-parse", &format!("{commit}^{{commit}}")])?.trim().to_owned();
    let mut files = Vec::new();
    for path in git(&["ls-tree", "-r", "--name-only", &commit_id, "--", MODELS])?.lines() {
        if path.ends_with(".cs") {
            files.push((path.to_owned(), git(&["show", &format!("{commit_id}:{path}")])?));
        }
    }
    let mut decls = Vec::new();
    let mut globals = Vec::new();
    for (_, text) in &files {
        parse_file(&tokenize(text), &mut decls, &mut globals);
    }
    for decl in &mut decls {
        decl.aliases.extend(globals.iter().cloned());
    }
    let world = World::new(decls);
    let mut models = BTreeMap::new();
    for (i, decl) in world.decls.iter().enumerate() {
        if decl.kind == Kind::Type {
            models.insert(world.key(i), world.model(i));
        }
    }
    let mut out = String::new();
    out.push_str("{\n");
    out.push_str(&format!("\"spt_commit\": {},\n", json!(commit_id)));
    out.push_str(&format!(
        "\"source\": {},\n",
        json!(format!("sp-tarkov/server-csharp {MODELS}, read by tests/src/bin/spt-shapes.rs"))
    ));
    out.push_str("\"models\": {\n");
    let count = models.len();
    for (n, (key, model)) in models.iter().enumerate() {
        out.push_str(&format!("{}: {}{}\n", json!(key), model, if n + 1 < count { "," } else { "" }));
    }
    out.push_str("}\n}\n");
    print!("{out}");
    let unresolved = world.unresolved.borrow();
    eprintln!("{} files, {count} models; unresolved types (written as any): {:?}", files.len(), *unresolved);
    Ok(())
}

// ---- Tokens ----

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Id(String),
    Str(String),
    P(char),
    Arrow,
    Num,
}

fn tokenize(text: &str) -> Vec<Tok> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() || ch == '\u{feff}' {
            i += 1;
        } else if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < c.len() && !(c[i] == '*' && c[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if ch == '"' || ((ch == '@' || ch == '$') && c.get(i + 1) == Some(&'"')) {
            let verbatim = ch == '@';
            if ch != '"' {
                i += 1;
            }
            i += 1;
            let mut s = String::new();
            while i < c.len() {
                if c[i] == '\\' && !verbatim {
                    s.push(c[i + 1]);
                    i += 2;
                } else if c[i] == '"' {
                    if verbatim && c.get(i + 1) == Some(&'"') {
                        s.push('"');
                        i += 2;
                    } else {
                        break;
                    }
                } else {
                    s.push(c[i]);
                    i += 1;
                }
            }
            i += 1;
            out.push(Tok::Str(s));
        } else if ch == '\'' {
            i += 1;
            while i < c.len() && c[i] != '\'' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(Tok::Num);
        } else if ch.is_alphabetic() || ch == '_' || ch == '@' {
            let start = i;
            i += 1;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Id(c[start..i].iter().collect::<String>().trim_start_matches('@').to_owned()));
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '.' || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Num);
        } else if ch == '=' && c.get(i + 1) == Some(&'>') {
            out.push(Tok::Arrow);
            i += 2;
        } else {
            out.push(Tok::P(ch));
            i += 1;
        }
    }
    out
}

fn is_p(t: Option<&Tok>, ch: char) -> bool {
    t == Some(&Tok::P(ch))
}

fn id(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Id(s)) => Some(s),
        _ => None,
    }
}

/// The index after the group that opens at `i` (`open` at `t[i]`), nesting counted.
fn skip_group(t: &[Tok], mut i: usize, open: char, close: char) -> usize {
    let mut depth = 0;
    while i < t.len() {
        if t[i] == Tok::P(open) {
            depth += 1;
        } else if t[i] == Tok::P(close) {
            depth -= 1;
            if depth == 0 {
                return i + 1;
            }
        }
        i += 1;
    }
    i
}

/// The index after the next `;` at nesting depth 0 (braces, parentheses and brackets counted).
fn skip_statement(t: &[Tok], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < t.len() {
        match &t[i] {
            Tok::P('{' | '(' | '[') => depth += 1,
            Tok::P('}' | ')' | ']') => depth -= 1,
            Tok::P(';') if depth <= 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

// ---- Declarations ----

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Type,
    Interface,
    Enum,
}

/// A type expression as written: `Name<Args>?`, `T[]`.
#[derive(Clone, Debug)]
enum TypeRef {
    Named { name: String, args: Vec<TypeRef>, nullable: bool },
    Array { of: Box<TypeRef>, nullable: bool },
    Unknown,
}

impl TypeRef {
    fn nullable(&self) -> bool {
        match self {
            TypeRef::Named { nullable, .. } | TypeRef::Array { nullable, .. } => *nullable,
            TypeRef::Unknown => true,
        }
    }
}

#[derive(Debug, Default)]
struct Attrs {
    json_name: Option<String>,
    ignore: Option<String>,
    converter: Option<String>,
    extension: bool,
}

#[derive(Debug)]
struct Prop {
    name: String,
    ty: TypeRef,
    attrs: Attrs,
}

#[derive(Debug)]
struct Decl {
    kind: Kind,
    namespace: String,
    name: String,
    params: Vec<String>,
    base: Option<TypeRef>,
    usings: Vec<String>,
    aliases: HashMap<String, TypeRef>,
    props: Vec<Prop>,
}

fn parse_attrs(t: &[Tok], attrs: &mut Attrs) {
    // `t` is the inside of one `[...]`: attributes separated by commas at depth 0.
    let mut i = 0;
    while i < t.len() {
        let Some(name) = id(t.get(i)) else {
            i += 1;
            continue;
        };
        let name = name.trim_end_matches("Attribute");
        let end = if is_p(t.get(i + 1), '(') { skip_group(t, i + 1, '(', ')') } else { i + 1 };
        let inner = &t[(i + 1).min(end)..end];
        match name {
            "JsonPropertyName" => {
                attrs.json_name = inner.iter().find_map(|x| if let Tok::Str(s) = x { Some(s.clone()) } else { None })
            }
            "JsonIgnore" => {
                attrs.ignore = Some(
                    inner
                        .iter()
                        .rev()
                        .find_map(|x| id(Some(x)).filter(|s| *s != "JsonIgnoreCondition" && *s != "Condition"))
                        .unwrap_or("Always")
                        .to_owned(),
                )
            }
            "JsonConverter" => {
                // typeof(X) or typeof(X<…>): the first identifier after `typeof (`.
                attrs.converter = inner.iter().skip(2).find_map(|x| id(Some(x)).map(str::to_owned));
            }
            "JsonExtensionData" => attrs.extension = true,
            _ => {}
        }
        i = end;
        while i < t.len() && !is_p(t.get(i), ',') {
            i += 1;
        }
        i += 1;
    }
}

/// Parses a type at `t[*i]`.
fn parse_type(t: &[Tok], i: &mut usize) -> TypeRef {
    if is_p(t.get(*i), '(') {
        *i = skip_group(t, *i, '(', ')');
        if is_p(t.get(*i), '?') {
            *i += 1;
        }
        return TypeRef::Unknown;
    }
    let mut name = String::new();
    while let Some(part) = id(t.get(*i)) {
        if part == "global" && is_p(t.get(*i + 1), ':') {
            *i += 3;
            continue;
        }
        name.push_str(part);
        *i += 1;
        if is_p(t.get(*i), '.') && id(t.get(*i + 1)).is_some() {
            name.push('.');
            *i += 1;
        } else {
            break;
        }
    }
    let mut args = Vec::new();
    if is_p(t.get(*i), '<') {
        *i += 1;
        loop {
            args.push(parse_type(t, i));
            if is_p(t.get(*i), ',') {
                *i += 1;
            } else {
                break;
            }
        }
        if is_p(t.get(*i), '>') {
            *i += 1;
        }
    }
    let nullable = is_p(t.get(*i), '?');
    if nullable {
        *i += 1;
    }
    let mut ty = TypeRef::Named { name, args, nullable };
    while is_p(t.get(*i), '[') && is_p(t.get(*i + 1), ']') {
        *i += 2;
        let nullable = is_p(t.get(*i), '?');
        if nullable {
            *i += 1;
        }
        ty = TypeRef::Array { of: Box::new(ty), nullable };
    }
    ty
}

const MODIFIERS: &[&str] = &[
    "public",
    "private",
    "protected",
    "internal",
    "static",
    "required",
    "virtual",
    "override",
    "new",
    "readonly",
    "const",
    "abstract",
    "sealed",
    "partial",
    "unsafe",
    "volatile",
    "extern",
    "event",
    "file",
];

fn parse_file(t: &[Tok], decls: &mut Vec<Decl>, globals: &mut Vec<(String, TypeRef)>) {
    let mut namespace = String::new();
    let mut usings = Vec::new();
    let mut aliases = HashMap::new();
    let mut attrs = Attrs::default();
    let mut i = 0;
    while i < t.len() {
        match &t[i] {
            Tok::Id(k) if k == "using" => {
                let end = skip_statement(t, i);
                let body: Vec<&str> = t[i + 1..end - 1].iter().filter_map(|x| id(Some(x))).collect();
                if let Some(eq) = t[i..end].iter().position(|x| *x == Tok::P('=')) {
                    // `using A = T;` (or `global using`, which every file sees): a name for a type.
                    let alias = id(t.get(i + eq - 1)).unwrap_or_default().to_owned();
                    let mut j = i + eq + 1;
                    let target = parse_type(t, &mut j);
                    if i > 0 && id(t.get(i - 1)) == Some("global") {
                        globals.push((alias, target));
                    } else {
                        aliases.insert(alias, target);
                    }
                } else {
                    usings.push(
                        body.iter()
                            .filter(|s| **s != "static" && **s != "global")
                            .copied()
                            .collect::<Vec<_>>()
                            .join("."),
                    );
                }
                i = end;
            }
            Tok::Id(k) if k == "namespace" => {
                let mut j = i + 1;
                let mut parts = Vec::new();
                while let Some(p) = id(t.get(j)) {
                    parts.push(p);
                    j += if is_p(t.get(j + 1), '.') { 2 } else { 1 };
                }
                namespace = parts.join(".");
                i = j + 1; // past `;` or `{`
            }
            Tok::P('[') => {
                let end = skip_group(t, i, '[', ']');
                parse_attrs(&t[i + 1..end - 1], &mut attrs);
                i = end;
            }
            Tok::Id(k) if k == "record" || k == "class" || k == "struct" || k == "interface" || k == "enum" => {
                let kind = match k.as_str() {
                    "interface" => Kind::Interface,
                    "enum" => Kind::Enum,
                    _ => Kind::Type,
                };
                let mut j = i + 1;
                if matches!(id(t.get(j)), Some("class" | "struct")) {
                    j += 1; // record class / record struct
                }
                let name = id(t.get(j)).unwrap_or_default().to_owned();
                j += 1;
                let mut params = Vec::new();
                if is_p(t.get(j), '<') {
                    let end = skip_group(t, j, '<', '>');
                    params = t[j + 1..end - 1].iter().filter_map(|x| id(Some(x)).map(str::to_owned)).collect();
                    j = end;
                }
                if is_p(t.get(j), '(') {
                    j = skip_group(t, j, '(', ')');
                }
                let mut base = None;
                if is_p(t.get(j), ':') {
                    j += 1;
                    let ty = parse_type(t, &mut j);
                    if kind == Kind::Type {
                        base = Some(ty);
                    }
                }
                while j < t.len() && !is_p(t.get(j), '{') && !is_p(t.get(j), ';') {
                    j += 1;
                }
                attrs = Attrs::default();
                let mut decl = Decl {
                    kind,
                    namespace: namespace.clone(),
                    name,
                    params,
                    base,
                    usings: usings.clone(),
                    aliases: aliases.clone(),
                    props: Vec::new(),
                };
                if is_p(t.get(j), ';') {
                    i = j + 1;
                } else {
                    let end = skip_group(t, j, '{', '}');
                    if kind == Kind::Type {
                        parse_members(&t[j + 1..end - 1], &mut decl.props);
                    }
                    i = end;
                }
                decls.push(decl);
            }
            Tok::Id(k) if k == "delegate" => i = skip_statement(t, i),
            _ => i += 1,
        }
    }
}

fn parse_members(t: &[Tok], props: &mut Vec<Prop>) {
    let mut i = 0;
    let mut attrs = Attrs::default();
    while i < t.len() {
        if is_p(t.get(i), '[') {
            let end = skip_group(t, i, '[', ']');
            parse_attrs(&t[i + 1..end - 1], &mut attrs);
            i = end;
            continue;
        }
        // The head: tokens up to the member's body, parameters, initializer or end.
        let start = i;
        let mut angle = 0i32;
        while i < t.len() {
            match &t[i] {
                Tok::P('<') => angle += 1,
                Tok::P('>') => angle -= 1,
                Tok::P('{' | '(' | ';' | '=') | Tok::Arrow if angle <= 0 => break,
                _ => {}
            }
            i += 1;
        }
        let head = &t[start..i];
        let attrs_here = std::mem::take(&mut attrs);
        let is_type_decl =
            head.iter().any(|x| matches!(id(Some(x)), Some("record" | "class" | "struct" | "enum" | "interface")));
        match t.get(i) {
            Some(Tok::P('(')) => {
                // A method, constructor or operator: skip its parameters, then its body.
                i = skip_group(t, i, '(', ')');
                while i < t.len() && !is_p(t.get(i), '{') && !is_p(t.get(i), ';') && t[i] != Tok::Arrow {
                    i += 1;
                }
                i = if is_p(t.get(i), '{') { skip_group(t, i, '{', '}') } else { skip_statement(t, i) };
                continue;
            }
            Some(Tok::P('{')) => {
                i = skip_group(t, i, '{', '}');
                if is_p(t.get(i), '=') {
                    i = skip_statement(t, i);
                }
                if !is_type_decl {
                    push_prop(head, attrs_here, props);
                }
            }
            Some(Tok::Arrow) => {
                i = skip_statement(t, i);
                push_prop(head, attrs_here, props);
            }
            _ => i = skip_statement(t, i), // a field or constant: not serialized
        }
    }
}

fn push_prop(head: &[Tok], attrs: Attrs, props: &mut Vec<Prop>) {
    let mut j = 0;
    let mut public = false;
    while let Some(m) = id(head.get(j)).filter(|m| MODIFIERS.contains(m)) {
        if m == "static" || m == "const" {
            return;
        }
        public |= m == "public";
        j += 1;
    }
    if !public || head.iter().any(|x| id(Some(x)) == Some("this")) {
        return;
    }
    let Some(name) = id(head.last()).map(str::to_owned) else { return };
    let ty = parse_type(&head[..head.len() - 1], &mut j);
    props.push(Prop { name, ty, attrs });
}

// ---- Resolution ----

struct World {
    decls: Vec<Decl>,
    by_full: HashMap<String, usize>,
    unresolved: std::cell::RefCell<std::collections::BTreeSet<String>>,
}

impl World {
    fn new(decls: Vec<Decl>) -> World {
        let by_full = decls.iter().enumerate().map(|(i, d)| (format!("{}.{}", d.namespace, d.name), i)).collect();
        World { decls, by_full, unresolved: Default::default() }
    }

    /// A model's key: its namespace below `Models`, then its name (`Eft.Common.Globals`).
    fn key(&self, i: usize) -> String {
        let d = &self.decls[i];
        let ns = d
            .namespace
            .strip_prefix(NS_PREFIX)
            .or(d.namespace.strip_prefix("SPTarkov.Server.Core.Models"))
            .unwrap_or(&d.namespace);
        if ns.is_empty() { d.name.clone() } else { format!("{ns}.{}", d.name) }
    }

    /// The declaration `name` names from inside `ctx` (its namespace, its parents, its usings).
    fn resolve(&self, ctx: &Decl, name: &str) -> Option<usize> {
        if let Some(&i) = self.by_full.get(name) {
            return Some(i);
        }
        let mut ns = ctx.namespace.as_str();
        loop {
            if let Some(&i) = self.by_full.get(&format!("{ns}.{name}")) {
                return Some(i);
            }
            match ns.rsplit_once('.') {
                Some((parent, _)) => ns = parent,
                None => break,
            }
        }
        ctx.usings.iter().find_map(|u| self.by_full.get(&format!("{u}.{name}")).copied())
    }

    fn shape(&self, ctx: &Decl, ty: &TypeRef) -> Value {
        let inner = |t: &TypeRef| {
            let s = self.shape(ctx, t);
            if t.nullable() && !matches!(t, TypeRef::Unknown) { json!({ "null_or": s }) } else { s }
        };
        match ty {
            TypeRef::Unknown => json!("any"),
            TypeRef::Array { of, .. } => json!({ "list": inner(of) }),
            TypeRef::Named { name, args, .. } => {
                if args.is_empty() && ctx.params.contains(name) {
                    return json!(format!("${name}"));
                }
                if let Some(target) = ctx.aliases.get(name).filter(|_| args.is_empty()) {
                    return self.shape(ctx, target);
                }
                let simple = name.rsplit('.').next().unwrap_or(name);
                if let Some(i) = self.resolve(ctx, name).filter(|&i| self.decls[i].params.len() == args.len()) {
                    let d = &self.decls[i];
                    return match d.kind {
                        Kind::Enum => json!("enum"),
                        Kind::Interface => json!("any"),
                        Kind::Type if args.is_empty() => json!(format!("@{}", self.key(i))),
                        Kind::Type => {
                            json!({ "model": self.key(i), "args": args.iter().map(inner).collect::<Vec<_>>() })
                        }
                    };
                }
                match (simple, args.as_slice()) {
                    ("string" | "String" | "char" | "Guid" | "MongoId" | "DateTime" | "Version", []) => json!("string"),
                    (
                        "int" | "long" | "double" | "float" | "decimal" | "short" | "byte" | "uint" | "ulong" | "sbyte"
                        | "ushort" | "Int32" | "Int64" | "Double",
                        [],
                    ) => json!("number"),
                    ("bool" | "Boolean", []) => json!("bool"),
                    ("object" | "JsonElement" | "JsonNode" | "JsonObject" | "dynamic", []) => json!("any"),
                    ("Nullable", [t]) => self.shape(ctx, t),
                    (
                        "List"
                        | "IList"
                        | "IEnumerable"
                        | "ICollection"
                        | "HashSet"
                        | "ISet"
                        | "IReadOnlyList"
                        | "IReadOnlyCollection"
                        | "Queue"
                        | "Stack"
                        | "SortedSet",
                        [t],
                    ) => {
                        json!({ "list": inner(t) })
                    }
                    (
                        "Dictionary"
                        | "IDictionary"
                        | "IReadOnlyDictionary"
                        | "ConcurrentDictionary"
                        | "SortedDictionary",
                        [_, v],
                    ) => json!({ "dict": inner(v) }),
                    ("ListOrT", [t]) => json!({ "one_or_list": inner(t) }),
                    ("DictionaryOrList", [_, v]) => json!({ "dict_or_list": inner(v) }),
                    _ => {
                        self.unresolved.borrow_mut().insert(name.clone());
                        json!("any")
                    }
                }
            }
        }
    }

    /// Every member of type `i`, its bases' first, as `json name → entry`.
    fn members(&self, i: usize, out: &mut BTreeMap<String, Value>, extension: &mut bool) {
        let d = &self.decls[i];
        if let Some(base) = &d.base
            && let TypeRef::Named { name, args, .. } = base
            && let Some(b) = self.resolve(d, name).filter(|&b| self.decls[b].kind == Kind::Type)
        {
            let mut inherited = BTreeMap::new();
            self.members(b, &mut inherited, extension);
            let params = &self.decls[b].params;
            let bound: HashMap<String, Value> =
                params.iter().zip(args).map(|(p, a)| (format!("${p}"), self.shape(d, a))).collect();
            for (k, mut v) in inherited {
                substitute(&mut v, &bound);
                out.insert(k, v);
            }
        }
        for p in &d.props {
            if p.attrs.extension {
                *extension = true;
                continue;
            }
            let ignore = p.attrs.ignore.as_deref();
            if matches!(ignore, Some("Always")) {
                continue;
            }
            let converter = p.attrs.converter.as_deref();
            let mut ty = self.shape(d, &p.ty);
            if converter == Some("ArrayToObjectFactoryConverter") {
                ty = json!({ "or_empty_array": ty });
            }
            if converter == Some("DogtagSideConverter") {
                ty = json!("any");
            }
            // `Never` writes a null too, whatever the annotation says (`LocationBase`'s
            // `BossLocationSpawn[].Supports` is a `List<BossSupport>` SPT's own data leaves null).
            let value_type = matches!(ty.as_str(), Some("number" | "bool" | "enum"));
            let nullable = p.ty.nullable() || (ignore == Some("Never") && !value_type);
            let mut entry = serde_json::Map::new();
            entry.insert("type".into(), ty);
            if nullable {
                entry.insert("nullable".into(), json!(true));
            }
            if !nullable || ignore == Some("Never") {
                entry.insert("required".into(), json!(true));
            }
            out.insert(p.attrs.json_name.clone().unwrap_or_else(|| p.name.clone()), Value::Object(entry));
        }
    }

    fn model(&self, i: usize) -> Value {
        let mut members = BTreeMap::new();
        let mut extension = false;
        self.members(i, &mut members, &mut extension);
        let mut model = serde_json::Map::new();
        if !self.decls[i].params.is_empty() {
            model.insert("params".into(), json!(self.decls[i].params));
        }
        if extension {
            model.insert("extension".into(), json!(true));
        }
        model.insert("members".into(), json!(members));
        Value::Object(model)
    }
}

fn substitute(v: &mut Value, bound: &HashMap<String, Value>) {
    match v {
        Value::String(s) => {
            if let Some(b) = bound.get(s.as_str()) {
                *v = b.clone();
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| substitute(x, bound)),
        Value::Object(o) => o.values_mut().for_each(|x| substitute(x, bound)),
        _ => {}
    }
}
