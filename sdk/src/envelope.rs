//! The SPT client's JSON envelope: `{"err":0,"errmsg":null,"data":…}` on success and
//! `{"err":<code>,"errmsg":"…","data":null}` on failure. Every game route answers in it.

use crate::Response;
use serde::{Deserialize, Serialize};

const OK_HEAD: &[u8] = br#"{"err":0,"errmsg":null,"data":"#;

/// `{"err":0,"errmsg":null,"data":<data>}`.
///
/// ```rust
/// let r = modhost_sdk::envelope::ok(&serde_json::json!({"msg": "OK"}));
/// assert_eq!(r.body_preview(), r#"{"err":0,"errmsg":null,"data":{"msg":"OK"}}"#);
/// ```
pub fn ok<T: Serialize + ?Sized>(data: &T) -> Response {
    let mut body = OK_HEAD.to_vec();
    if serde_json::to_writer(&mut body, data).is_err() {
        return error(1, "the response data could not be serialized");
    }
    body.push(b'}');
    Response::empty().with_bytes(body)
}

/// `{"err":0,"errmsg":null,"data":<JSON text>}` from text that is already JSON.
///
/// ```rust
/// let r = modhost_sdk::envelope::ok_json("[1,2]");
/// assert_eq!(r.body_preview(), r#"{"err":0,"errmsg":null,"data":[1,2]}"#);
/// ```
pub fn ok_json(json: &str) -> Response {
    let mut body = OK_HEAD.to_vec();
    body.extend_from_slice(json.as_bytes());
    body.push(b'}');
    Response::empty().with_bytes(body)
}

/// `{"err":0,"errmsg":null,"data":<the db value at path>}`, with the value spliced in by the host: a big
/// table never passes through the mod.
///
/// ```rust
/// let r = modhost_sdk::envelope::ok_db("templates.items");
/// assert_eq!(r.body_preview(), r#"{"err":0,"errmsg":null,"data":<db:templates.items>}"#);
/// ```
pub fn ok_db(path: &str) -> Response {
    Response::empty().with_bytes(OK_HEAD.to_vec()).with_db(path).with_bytes(b"}".to_vec())
}

/// `{"err":0,"errmsg":null,"data":null}`.
///
/// ```rust
/// assert_eq!(modhost_sdk::envelope::null().body_preview(), r#"{"err":0,"errmsg":null,"data":null}"#);
/// ```
pub fn null() -> Response {
    ok_json("null")
}

/// `{"err":<code>,"errmsg":<message>,"data":null}`. A code of 0 would read as success, so it becomes 1.
///
/// ```rust
/// let r = modhost_sdk::envelope::error(255, "nickname taken");
/// assert_eq!(r.body_preview(), r#"{"err":255,"errmsg":"nickname taken","data":null}"#);
/// ```
pub fn error(code: i32, message: &str) -> Response {
    // A struct, not a `json!` map: its fields keep this order whatever serde_json features the build
    // unifies (`preserve_order` or sorted keys).
    #[derive(Serialize)]
    struct Failure<'a> {
        err: i32,
        errmsg: &'a str,
        data: (),
    }
    let code = if code == 0 { 1 } else { code };
    Response::json(&Failure { err: code, errmsg: message, data: () })
}

/// An envelope read back: what a test gets from [`Response::body_json`]. `data` is `None` when it is
/// JSON `null` (every error envelope, and [`null`]).
///
/// ```rust
/// use modhost_sdk::envelope::{self, Envelope};
///
/// let failed: Envelope<serde_json::Value> = envelope::error(255, "nickname taken").body_json()?;
/// assert_eq!((failed.err, failed.errmsg.as_deref(), failed.data), (255, Some("nickname taken"), None));
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Envelope<T> {
    /// 0 on success, the error code otherwise.
    pub err: i32,
    /// The error message, `None` on success.
    pub errmsg: Option<String>,
    /// The data, `None` when it is `null`.
    pub data: Option<T>,
}
