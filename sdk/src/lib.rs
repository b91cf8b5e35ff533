#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

// The generated bindings and the export macro refer to this crate by name, also from inside it.
extern crate self as modhost_sdk;

pub mod db;
pub mod envelope;
mod error;
mod http;
pub mod log;
mod router;
pub mod store;

pub use error::{Error, Result};
pub use http::{Request, Response};
pub use router::{Handler, InitFn, Router};

/// The bindings generated from `wit/`. Not a stable API: use the modules of this crate instead.
#[doc(hidden)]
#[allow(clippy::too_many_arguments, reason = "wit-bindgen lowers a record into one argument per field")]
pub mod wit {
    wit_bindgen::generate!({
        path: "../wit",
        world: "plugin",
        pub_export_macro: true,
        export_macro_name: "__export_plugin",
        default_bindings_module: "modhost_sdk::wit",
        runtime_path: "modhost_sdk::__wit_bindgen::rt",
    });
}

#[doc(hidden)]
pub use wit_bindgen as __wit_bindgen;

/// Glue the [`export!`] macro expands to. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::router::{handle, init, routes};
}

/// Makes this crate a modhost mod answering with the given [`Router`].
///
/// The expression is evaluated each time the host calls the mod (building a router is a few small
/// allocations), so write a function that returns the router and pass its call.
///
/// ```rust,no_run
/// use modhost_sdk::{envelope, export, Request, Response, Result, Router};
///
/// fn ping(_req: &Request) -> Result<Response> {
///     Ok(envelope::ok(&"pong"))
/// }
///
/// fn router() -> Router {
///     Router::new().route("/ping", ping)
/// }
///
/// export!(router());
/// ```
#[macro_export]
macro_rules! export {
    ($router:expr) => {
        #[doc(hidden)]
        struct __ModhostMod;

        impl $crate::wit::Guest for __ModhostMod {
            fn routes() -> ::std::vec::Vec<$crate::wit::modhost::plugin::types::Route> {
                $crate::__private::routes(&$router)
            }
            fn init() -> ::std::result::Result<(), $crate::wit::modhost::plugin::types::Error> {
                $crate::__private::init(&$router)
            }
            fn handle(
                request: $crate::wit::modhost::plugin::types::Request,
            ) -> ::std::result::Result<
                $crate::wit::modhost::plugin::types::Response,
                $crate::wit::modhost::plugin::types::Error,
            > {
                $crate::__private::handle(&$router, request)
            }
        }

        $crate::wit::__export_plugin!(__ModhostMod);
    };
}
