//! What a player tells the server about the game or another player: the survey's view and opinion
//! (SPT's `GameStaticRouter` → `GameCallbacks.GetSurveyView`, `SendSurveyOpinion`) and the reports
//! (`GameCallbacks.ReportNickname` for `/client/reports/lobby/send` and `/client/report/send`; the
//! flea's report, `/client/reports/ragfair/send`, is `ragfair/`'s).
//!
//! SPT answers each with null and keeps nothing, and so does the game: on a solo server there is no
//! one to read a report. A mod that wants them hears the request (a `before` hook on the route). The
//! body is bounded and must be an object when one is sent.

use crate::input;
use modhost_sdk::{Request, Response, Result, Router, envelope};

/// The largest body read: a survey's answers or a report's reason, a few hundred bytes.
const MAX_BODY: usize = 16 << 10;

/// Adds the survey and report routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router
        .route("/client/survey/view", null)
        .route("/client/survey/opinion", null)
        .route("/client/reports/lobby/send", null)
        .route("/client/report/send", null)
}

fn null(req: &Request) -> Result<Response> {
    input::object_or_empty(req, "survey or report", MAX_BODY)?;
    Ok(envelope::null())
}
