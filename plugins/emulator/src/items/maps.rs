//! Notes on a map the player owns: `CreateMapMarker`, `EditMapMarker` and `DeleteMapMarker` change the
//! map item's `upd.Map.Markers` (SPT's `MapMarkerService`).
//!
//! The item must be the player's and a map (its template's lineage holds SPT's `Map` category), a
//! marker is `{Type, X, Y, Note}` with finite coordinates, its note is cleaned as SPT cleans it
//! (letters, digits and white space only) and bounded, and a map holds a bounded number of markers.
//! A marker is found by its coordinates, as SPT finds it.

use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused, item, write};
use crate::templates::{Templates, tpl};
use serde_json::{Value, json};

/// SPT's `Map` category: every map item's template is below it.
pub(crate) const MAP_CATEGORY: &str = "567849dd4bdc2d150f8b456e";
/// The most markers one map holds (a player marks a few dozen places at most).
const MAX_MARKERS: usize = 128;
/// The longest note, in characters (the client's note field is shorter).
const MAX_NOTE_CHARS: usize = 256;
/// The longest marker type name (the client's are `Point`, `Key`, `Loot`, …).
const MAX_TYPE_CHARS: usize = 32;

/// The map item the action names, and its markers.
fn map_item(doc: &mut Doc, action: &Value, templates: &mut Templates) -> Result<(String, Value, Vec<Value>), Refused> {
    let id = action["item"].as_str().ok_or("the action names no map `item`")?;
    let map = item(doc, id)?.ok_or_else(|| format!("item {id} is not in this profile"))?;
    if !templates.lineage(tpl(&map)).iter().any(|t| t == MAP_CATEGORY) {
        return Err(format!("item {id} ({}) is not a map", tpl(&map)).into());
    }
    let markers = map["upd"]["Map"]["Markers"].as_array().cloned().unwrap_or_default();
    Ok((id.to_owned(), map, markers))
}

/// A finite coordinate.
fn coordinate(value: &Value, name: &str) -> Result<f64, String> {
    value.as_f64().filter(|v| v.is_finite()).ok_or_else(|| format!("`{name}` must be a number"))
}

/// The marker a client sends, checked and cleaned.
fn marker(sent: &Value) -> Result<Value, String> {
    let kind = sent["Type"].as_str().unwrap_or("");
    if kind.chars().count() > MAX_TYPE_CHARS || !kind.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!("a marker's `Type` is at most {MAX_TYPE_CHARS} letters or digits"));
    }
    let note = sent["Note"].as_str().unwrap_or("");
    if note.chars().count() > MAX_NOTE_CHARS {
        return Err(format!("a marker's note has at most {MAX_NOTE_CHARS} characters"));
    }
    // SPT keeps letters, digits and white space only.
    let note: String = note.chars().filter(|c| c.is_alphanumeric() || c.is_whitespace()).collect();
    let (x, y) = (coordinate(&sent["X"], "X")?, coordinate(&sent["Y"], "Y")?);
    // Whole coordinates stay whole (the client sends integers); others as they came.
    let number = |v: f64| if v.fract() == 0.0 && v.abs() < 1e15 { json!(v as i64) } else { json!(v) };
    Ok(json!({"Type": kind, "X": number(x), "Y": number(y), "Note": note}))
}

/// Writes the map's markers back.
fn save(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    (id, mut map): (String, Value),
    markers: Vec<Value>,
) -> Outcome {
    if !map["upd"].is_object() {
        map["upd"] = json!({});
    }
    map["upd"]["Map"] = json!({ "Markers": markers });
    write(doc, templates, &id, Some(map))?;
    changes.changed(&id);
    Ok(())
}

/// Whether `marker` is at `(x, y)`.
fn at(marker: &Value, x: f64, y: f64) -> bool {
    marker["X"].as_f64() == Some(x) && marker["Y"].as_f64() == Some(y)
}

/// `CreateMapMarker {item, mapMarker}`.
pub(crate) fn create(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let (id, map, mut markers) = map_item(doc, action, templates)?;
    if markers.len() >= MAX_MARKERS {
        return Err(format!("a map holds at most {MAX_MARKERS} markers").into());
    }
    markers.push(marker(&action["mapMarker"])?);
    save(doc, templates, changes, (id, map), markers)
}

/// `EditMapMarker {item, X, Y, mapMarker}`: the marker at `(X, Y)` becomes `mapMarker`.
pub(crate) fn edit(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let (id, map, mut markers) = map_item(doc, action, templates)?;
    let (x, y) = (coordinate(&action["X"], "X")?, coordinate(&action["Y"], "Y")?);
    let found =
        markers.iter().position(|m| at(m, x, y)).ok_or_else(|| format!("map {id} has no marker at ({x}, {y})"))?;
    markers[found] = marker(&action["mapMarker"])?;
    save(doc, templates, changes, (id, map), markers)
}

/// `DeleteMapMarker {item, X, Y}`: the marker at `(X, Y)` goes.
pub(crate) fn delete(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let (id, map, mut markers) = map_item(doc, action, templates)?;
    let (x, y) = (coordinate(&action["X"], "X")?, coordinate(&action["Y"], "Y")?);
    let found =
        markers.iter().position(|m| at(m, x, y)).ok_or_else(|| format!("map {id} has no marker at ({x}, {y})"))?;
    markers.remove(found);
    save(doc, templates, changes, (id, map), markers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_is_cleaned_as_spt_cleans_it_and_bounded() {
        let cleaned = marker(&json!({"Type": "Point", "X": 3, "Y": -2.5, "Note": "keys <here>; ёлка 7!"})).unwrap();
        assert_eq!(cleaned, json!({"Type": "Point", "X": 3, "Y": -2.5, "Note": "keys here ёлка 7"}));
        assert!(marker(&json!({"Type": "Point", "X": 3})).is_err(), "no Y");
        assert!(marker(&json!({"Type": "Point", "X": "3", "Y": 1})).is_err(), "a string is no coordinate");
        assert!(marker(&json!({"Type": "<script>", "X": 3, "Y": 1})).is_err());
        assert!(marker(&json!({"Type": "P", "X": 3, "Y": 1, "Note": "n".repeat(MAX_NOTE_CHARS + 1)})).is_err());
        assert!(at(&cleaned, 3.0, -2.5) && !at(&cleaned, 3.0, 2.5));
    }
}
