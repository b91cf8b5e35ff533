//! Files the client fetches by path, and SPT's old notifier poll:
//!
//! - images (SPT's `HttpDynamicRouter`: any path ending `.jpg`, `.png` or `.ico` → `ImageRouter`, which
//!   sends the file from SPT's image folders, and logs and sends nothing when it has none): the db
//!   holds no images (trader avatars, quest icons are paths like `/files/trader/avatar/<id>.jpg`), so
//!   every image under `/files/` is a 1×1 transparent PNG (Unity's loader reads a PNG whatever the
//!   name's extension), and the client draws a blank where SPT's would draw the picture;
//! - asset bundles (SPT's `BundleDynamicRouter`, `/files/bundle/<name>`): the game ships none
//!   (`/singleplayer/bundles` lists none), so one asked for is a 404 that says so, answered by the
//!   game;
//! - `/push/notifier/get/<session>` (SPT's `NotifierDynamicRouter` → `NotifierCallbacks.GetNotifier`):
//!   `[]`, as SPT. The notifier itself (SPT's `/notifierServer` and `/?last_id` routes: the poll and
//!   the websocket) is the host's, `docs/realtime.md`.
//!
//! Any other path under `/files/` is a 404 naming the path.

use modhost_sdk::{Request, Response, Result, Router, envelope};

/// A 1×1 transparent PNG.
const BLANK_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0A, 0x49,
    0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00,
    0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
];

/// Adds the file routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router.prefix("/files/", files).prefix("/push/notifier/get/", |_| Ok(envelope::ok_json("[]")))
}

/// Whether `path` names an image SPT's image router would serve.
fn is_image(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".jpg", ".png", ".ico"].iter().any(|ext| lower.ends_with(ext))
}

fn files(req: &Request) -> Result<Response> {
    let rest = req.rest();
    if is_image(rest) {
        return Ok(Response::empty().with_header("content-type", "image/png").with_bytes(BLANK_PNG.to_vec()));
    }
    let what = if rest.starts_with("bundle/") {
        "no such bundle: the game ships no asset bundles (`/singleplayer/bundles` lists none)"
    } else {
        "no such file"
    };
    let shown: String = rest.chars().take(200).collect();
    Ok(Response::text(&format!("{what}: /files/{shown}")).with_status(404))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_told_by_their_extension() {
        assert!(is_image("trader/avatar/59b91ca086f77469a81232e4.jpg"));
        assert!(is_image("prestige/prestige_1.PNG"));
        assert!(is_image("favicon.ico"));
        assert!(!is_image("bundle/assets/foo.bundle"));
    }
}
