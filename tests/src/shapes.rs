//! SPT's models as shape trees (`tests/data/spt-shapes.json`, read from SPT's C# by
//! `tests/src/bin/spt-shapes.rs`), and the check of a JSON answer against one at every depth: each
//! member SPT always writes is present, and each member present has the JSON kind SPT writes (an
//! object where SPT writes a dictionary or a model, an array where it writes a list, …). Members the
//! model does not name are not failures: the client ignores them.
//!
//! A type is named in a small syntax: a model by its name (`Globals`, or its key below SPT's
//! `Models` namespace when the name is not unique, `Eft.Common.Tables.Item`), `[T]` a list, `{T}` a
//! dictionary of `T` by string keys, `Model<T, U>` a generic model, or `string`, `number`, `bool`,
//! `enum`, `any`.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The shape trees, by model key.
pub struct Shapes {
    models: Map<String, Value>,
    /// The SPT commit the trees were read from.
    pub commit: String,
}

/// The failures of one check: each distinct failure once, with how often it occurred and its first
/// full path. A path's dictionary keys and list indexes are `*` in the summary, so a table of 10 000
/// items missing one member fails once, not 10 000 times.
#[derive(Default, Debug)]
pub struct Failures {
    seen: BTreeMap<String, (usize, String)>,
}

impl Failures {
    fn add(&mut self, pattern: &str, path: &str, what: String) {
        let (pattern, path) = (pattern.trim_start_matches('.'), path.trim_start_matches('.'));
        let entry = self.seen.entry(format!("{pattern}: {what}")).or_insert((0, path.to_owned()));
        entry.0 += 1;
    }

    /// Whether nothing failed.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    /// One line per distinct failure.
    pub fn lines(&self) -> Vec<String> {
        self.seen
            .iter()
            .map(|(what, (n, first))| if *n == 1 { what.clone() } else { format!("{what} (×{n}, first at {first})") })
            .collect()
    }
}

impl Shapes {
    /// The committed trees.
    pub fn load() -> Shapes {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/spt-shapes.json");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut all: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        let commit = all["spt_commit"].as_str().unwrap_or_default().to_owned();
        let Value::Object(models) = all["models"].take() else { panic!("{path}: no models") };
        Shapes { models, commit }
    }

    /// The key of the model `name` names: itself, or the one key ending in `.name`.
    pub fn key(&self, name: &str) -> String {
        if self.models.contains_key(name) {
            return name.to_owned();
        }
        let suffix = format!(".{name}");
        let found: Vec<&String> = self.models.keys().filter(|k| k.ends_with(&suffix)).collect();
        match found.as_slice() {
            [one] => (*one).clone(),
            [] => panic!("no SPT model is named {name}"),
            many => panic!("{name} names several SPT models, write one of {many:?}"),
        }
    }

    /// Parses a type in this module's syntax into the trees' form.
    pub fn parse(&self, ty: &str) -> Value {
        let mut rest = ty.trim();
        let parsed = self.parse_at(&mut rest);
        assert!(rest.trim().is_empty(), "trailing text in type {ty:?}: {rest:?}");
        parsed
    }

    fn parse_at(&self, s: &mut &str) -> Value {
        *s = s.trim_start();
        if let Some(r) = s.strip_prefix('[') {
            *s = r;
            let inner = self.parse_at(s);
            *s = s.trim_start().strip_prefix(']').expect("a list closes with ]");
            return json!({ "list": inner });
        }
        if let Some(r) = s.strip_prefix('{') {
            *s = r;
            let inner = self.parse_at(s);
            *s = s.trim_start().strip_prefix('}').expect("a dictionary closes with }");
            return json!({ "dict": inner });
        }
        let end = s.find(|c: char| !(c.is_alphanumeric() || c == '.' || c == '_')).unwrap_or(s.len());
        let name = &s[..end];
        *s = &s[end..];
        if matches!(name, "string" | "number" | "bool" | "enum" | "any") {
            return json!(name);
        }
        let key = self.key(name);
        if let Some(r) = s.trim_start().strip_prefix('<') {
            *s = r;
            let mut args = vec![self.parse_at(s)];
            loop {
                *s = s.trim_start();
                if let Some(r) = s.strip_prefix(',') {
                    *s = r;
                    args.push(self.parse_at(s));
                } else {
                    *s = s.strip_prefix('>').expect("generic arguments close with >");
                    break;
                }
            }
            return json!({ "model": key, "args": args });
        }
        json!(format!("@{key}"))
    }

    /// Checks `value` against the type `ty` (this module's syntax); `root` names it in the failures.
    pub fn check(&self, ty: &str, value: &Value, root: &str) -> Failures {
        let mut failures = Failures::default();
        self.walk(
            &self.parse(ty),
            value,
            &mut Path { full: root.to_owned(), pattern: root.to_owned() },
            &[],
            &mut failures,
        );
        failures
    }

    fn walk(&self, ty: &Value, v: &Value, path: &mut Path, bound: &[(String, Value)], out: &mut Failures) {
        match ty {
            Value::String(s) => match s.as_str() {
                "any" => {}
                "string" => want(v.is_string(), "string", v, path, out),
                "number" => want(v.is_number(), "number", v, path, out),
                "bool" => want(v.is_boolean(), "bool", v, path, out),
                "enum" => want(v.is_number() || v.is_string(), "number or string (an enum)", v, path, out),
                p if p.starts_with('$') => {
                    let b = bound.iter().find(|(name, _)| name == p).map(|(_, t)| t.clone());
                    self.walk(&b.unwrap_or(json!("any")), v, path, &[], out);
                }
                m => self.model(m.trim_start_matches('@'), v, path, &[], out),
            },
            Value::Object(o) => {
                // `{"model": key, "args": […]}` has two members; every other form has one.
                let (form, inner) = o.get_key_value("model").or_else(|| o.iter().next()).expect("a type form");
                match form.as_str() {
                    "list" => match v {
                        Value::Array(items) => {
                            for (i, item) in items.iter().enumerate() {
                                path.push(&format!("[{i}]"), "[*]", |path| self.walk(inner, item, path, bound, out));
                            }
                        }
                        _ => want(false, "array", v, path, out),
                    },
                    "dict" => match v {
                        Value::Object(entries) => {
                            for (k, item) in entries {
                                path.push(&format!(".{k}"), ".*", |path| self.walk(inner, item, path, bound, out));
                            }
                        }
                        _ => want(false, "object (a dictionary)", v, path, out),
                    },
                    "null_or" if v.is_null() => {}
                    "null_or" => self.walk(inner, v, path, bound, out),
                    "or_empty_array" if v.as_array().is_some_and(Vec::is_empty) => {}
                    "or_empty_array" => self.walk(inner, v, path, bound, out),
                    "one_or_list" if v.is_array() => self.walk(&json!({ "list": inner }), v, path, bound, out),
                    "one_or_list" => self.walk(inner, v, path, bound, out),
                    "dict_or_list" if v.is_array() => self.walk(&json!({ "list": inner }), v, path, bound, out),
                    "dict_or_list" => self.walk(&json!({ "dict": inner }), v, path, bound, out),
                    "model" => {
                        let key = inner.as_str().expect("a model key");
                        let args: Vec<Value> = o["args"].as_array().cloned().unwrap_or_default();
                        // Arguments may name the caller's parameters: bind them first.
                        let args: Vec<Value> = args.into_iter().map(|a| substitute(a, bound)).collect();
                        self.model(key, v, path, &args, out);
                    }
                    other => panic!("unknown type form {other}"),
                }
            }
            _ => panic!("unknown type {ty}"),
        }
    }

    fn model(&self, key: &str, v: &Value, path: &mut Path, args: &[Value], out: &mut Failures) {
        let model = self.models.get(key).unwrap_or_else(|| panic!("no model {key}"));
        let Value::Object(fields) = v else { return want(false, "object", v, path, out) };
        let params: Vec<String> = model["params"]
            .as_array()
            .map(|p| p.iter().map(|p| format!("${}", p.as_str().unwrap_or_default())).collect())
            .unwrap_or_default();
        let bound: Vec<(String, Value)> = params.into_iter().zip(args.iter().cloned()).collect();
        for (name, member) in model["members"].as_object().into_iter().flatten() {
            let nullable = member["nullable"] == true;
            match fields.get(name) {
                None if member["required"] == true => {
                    path.push(&format!(".{name}"), &format!(".{name}"), |path| {
                        out.add(
                            &path.pattern,
                            &path.full,
                            format!("missing (SPT always writes it, {})", brief(&member["type"])),
                        );
                    });
                }
                None => {}
                Some(Value::Null) if nullable => {}
                Some(value) => path.push(&format!(".{name}"), &format!(".{name}"), |path| {
                    self.walk(&member["type"], value, path, &bound, out);
                }),
            }
        }
    }
}

struct Path {
    full: String,
    pattern: String,
}

impl Path {
    fn push(&mut self, full: &str, pattern: &str, f: impl FnOnce(&mut Path)) {
        let (a, b) = (self.full.len(), self.pattern.len());
        self.full.push_str(full);
        self.pattern.push_str(pattern);
        f(self);
        self.full.truncate(a);
        self.pattern.truncate(b);
    }
}

fn want(ok: bool, kind: &str, v: &Value, path: &Path, out: &mut Failures) {
    if !ok {
        out.add(&path.pattern, &path.full, format!("want {kind}, got {}", kind_of(v)));
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A type in a few words, for a missing member's failure.
fn brief(ty: &Value) -> String {
    match ty {
        Value::String(s) => s.trim_start_matches('@').rsplit('.').next().unwrap_or(s).to_owned(),
        Value::Object(o) => match o.get_key_value("model").or_else(|| o.iter().next()) {
            Some((form, inner)) if form == "model" => brief(inner),
            Some((form, inner)) => format!("{form} of {}", brief(inner)),
            None => "?".into(),
        },
        _ => "?".into(),
    }
}

fn substitute(ty: Value, bound: &[(String, Value)]) -> Value {
    match ty {
        Value::String(s) if s.starts_with('$') => {
            bound.iter().find(|(name, _)| *name == s).map_or(json!("any"), |(_, t)| t.clone())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(|x| substitute(x, bound)).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, x)| (k, substitute(x, bound))).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_where_spt_writes_an_object_and_a_missing_member_fail_with_their_paths() {
        let shapes = Shapes::load();
        let globals = json!({"config": {"content": "generated"}});
        let lines = shapes.check("Globals", &globals, "globals").lines();
        assert!(lines.iter().any(|l| l.starts_with("globals.config.content: want object, got string")), "{lines:?}");
        let items = json!({"a": {"_props": {}}, "b": {"_props": {"effects_health": []}}});
        let lines = shapes.check("{TemplateItem}", &items, "items").lines();
        assert!(
            lines.iter().any(|l| l.starts_with("items.*._props.effects_damage: missing") && l.contains("×2")),
            "{lines:?}"
        );
        // Only `a` lacks `effects_health`: `b`'s `[]` stands for no effects.
        let health: Vec<&String> = lines.iter().filter(|l| l.contains("effects_health")).collect();
        assert!(health.len() == 1 && !health[0].contains('×'), "{lines:?}");
    }
}
