//! The player's notebook: `AddNote`, `EditNote` and `DeleteNote` on the profile's `Notes.Notes`
//! (SPT's `NoteController`), a list of `{Time, Text}`.
//!
//! SPT writes what the client sends and indexes the list without a check (an index past the end
//! throws). Here the index must name a note, the text and the list are bounded, and the time is a
//! finite number.

use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused};
use crate::templates::Templates;
use serde_json::{Value, json};

/// The most notes a profile keeps (a player writes a few dozen).
const MAX_NOTES: usize = 256;
/// The longest note, in characters.
const MAX_NOTE_CHARS: usize = 4_096;

/// The profile's notes.
fn notes(doc: &mut Doc) -> Result<Vec<Value>, Refused> {
    match doc.get(&["Notes", "Notes"])? {
        Value::Array(list) => Ok(list),
        Value::Null => Ok(Vec::new()),
        _ => Err("the profile's `Notes.Notes` is malformed".into()),
    }
}

/// The note the client sends, checked.
fn note(action: &Value) -> Result<Value, String> {
    let sent = &action["note"];
    let time = sent["Time"].as_f64().filter(|t| t.is_finite()).ok_or("a note's `Time` must be a number")?;
    let text = sent["Text"].as_str().ok_or("a note's `Text` must be a string")?;
    if text.chars().count() > MAX_NOTE_CHARS {
        return Err(format!("a note has at most {MAX_NOTE_CHARS} characters"));
    }
    Ok(json!({"Time": sent["Time"].as_u64().map_or(json!(time), |t| json!(t)), "Text": text}))
}

/// The index the action names, of a note the profile has.
fn index(action: &Value, len: usize) -> Result<usize, String> {
    action["index"]
        .as_u64()
        .and_then(|i| usize::try_from(i).ok())
        .filter(|i| *i < len)
        .ok_or_else(|| format!("`index` must name one of the {len} notes"))
}

fn save(doc: &mut Doc, list: Vec<Value>) -> Outcome {
    doc.set(&["Notes", "Notes"], Value::Array(list))?;
    Ok(())
}

/// `AddNote {note}`.
pub(crate) fn add(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let mut list = notes(doc)?;
    if list.len() >= MAX_NOTES {
        return Err(format!("a profile keeps at most {MAX_NOTES} notes").into());
    }
    list.push(note(action)?);
    save(doc, list)
}

/// `EditNote {index, note}`.
pub(crate) fn edit(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let mut list = notes(doc)?;
    let at = index(action, list.len())?;
    list[at] = note(action)?;
    save(doc, list)
}

/// `DeleteNote {index}`.
pub(crate) fn delete(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let mut list = notes(doc)?;
    let at = index(action, list.len())?;
    list.remove(at);
    save(doc, list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_and_its_index_are_checked() {
        assert_eq!(note(&json!({"note": {"Time": 5, "Text": "hi"}})).unwrap(), json!({"Time": 5, "Text": "hi"}));
        assert!(note(&json!({"note": {"Time": 5}})).is_err());
        assert!(note(&json!({"note": {"Text": "hi"}})).is_err());
        assert!(note(&json!({"note": {"Time": 5, "Text": "x".repeat(MAX_NOTE_CHARS + 1)}})).is_err());
        assert_eq!(index(&json!({"index": 1}), 2), Ok(1));
        assert!(index(&json!({"index": 2}), 2).is_err() && index(&json!({"index": -1}), 2).is_err());
        assert!(index(&json!({"index": 0}), 0).is_err(), "no notes: no index");
    }
}
