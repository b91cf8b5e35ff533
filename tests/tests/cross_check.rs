//! Rules written twice, once on each side of the host/SDK boundary, checked against each other on
//! random inputs: the same answer from both, or the test names the input.
//!
//! - Route matching: the host's route table (`modhost-routes`) picks the mod; the SDK's `Router` then
//!   picks the handler inside it. A route set both sides accept must pick the same route for every URL
//!   (exact beats prefix, the longest prefix wins, the query is ignored), or a mod's handler sees a
//!   request its router did not expect.
//! - db path escaping: the SDK's `db::path` builds the dotted path the host's `parse_path` splits; a
//!   name with `.` or `\` must come back as the same name.

use modhost_routes::{MatchKind, RouteTableBuilder};
use modhost_sdk::{Request, Response, Router};
use proptest::prelude::*;

/// The SDK hands a handler the route that matched; answering it lets the test read the choice.
fn echo_route(request: &Request) -> modhost_sdk::Result<Response> {
    Ok(Response::text(request.route()))
}

/// A route: `/` then a few segments from a tiny alphabet, so routes and URLs often share prefixes.
fn route() -> impl Strategy<Value = String> {
    proptest::string::string_regex("/[ab/]{0,4}").unwrap()
}

fn url() -> impl Strategy<Value = String> {
    (route(), proptest::option::of("[ab=]{0,3}")).prop_map(|(path, query)| match query {
        Some(q) => format!("{path}?{q}"),
        None => path,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn host_and_sdk_pick_the_same_route(
        routes in proptest::collection::btree_set((route(), any::<bool>()), 1..6),
        urls in proptest::collection::vec(url(), 1..8),
    ) {
        let claimed: Vec<(String, MatchKind)> = routes
            .iter()
            .map(|(r, exact)| (r.clone(), if *exact { MatchKind::Exact } else { MatchKind::Prefix }))
            .collect();
        let mut builder = RouteTableBuilder::default();
        builder.add_all("m", &claimed, ()).expect("distinct routes of one mod are accepted");
        let table = builder.build();
        // The SDK's router keeps `&'static str` routes, as a mod's are: leak these few (bounded by the
        // case count) for the test's life.
        let router = routes.iter().fold(Router::new(), |router, (r, exact)| {
            let r: &'static str = Box::leak(r.clone().into_boxed_str());
            if *exact { router.route(r, echo_route) } else { router.prefix(r, echo_route) }
        });
        for url in &urls {
            let host = table.find(url).map(|m| m.route.to_owned());
            let sdk = router.call(&Request::get(url)).ok().map(|answer| {
                String::from_utf8(answer.body_bytes().expect("a literal body")).expect("the route is text")
            });
            prop_assert_eq!(&host, &sdk, "routes {:?}, url {:?}", claimed, url);
        }
    }

    #[test]
    fn sdk_paths_split_back_into_their_names_on_the_host(
        names in proptest::collection::vec("[a.\\\\b ]{0,4}", 0..5),
    ) {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let path = modhost_sdk::db::path(&names);
        prop_assert_eq!(&path, &modhost_db::join_path(&names), "the two escapers differ");
        // The empty path is the root, not one empty name: that is the only list that does not round-trip.
        if names != [""] {
            let parsed = modhost_db::parse_path(&path).expect("an escaped path parses");
            prop_assert_eq!(parsed, names.iter().map(|n| n.to_string()).collect::<Vec<_>>(), "path {:?}", path);
        }
    }
}
