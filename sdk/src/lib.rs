#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

// The generated bindings and the export macro refer to this crate by name, also from inside it.
extern crate self as modhost_sdk;

pub mod calls;
pub mod config;
pub mod db;
pub mod envelope;
mod error;
pub mod events;
mod hooks;
mod http;
pub mod log;
pub mod push;
mod realtime;
mod router;
pub mod sockets;
pub mod store;
pub mod timers;

pub use calls::Invocation;
pub use error::{Error, Result};
pub use events::Event;
pub use hooks::{Hook, ResponseEdit, Verdict};
pub use http::{Request, Response};
pub use router::{Handler, InitFn, Router};

/// The bindings generated from `wit/`. Not a stable API: use the modules of this crate instead.
#[doc(hidden)]
#[allow(clippy::too_many_arguments, reason = "wit-bindgen lowers a record into one argument per field")]
pub mod wit {
    wit_bindgen::generate!({
        path: "../wit",
        // Always `full`: a mod that declares no hooks, topics or functions answers empty
        // declarations, and the host never calls it for them.
        world: "full",
        pub_export_macro: true,
        export_macro_name: "__export_full",
        default_bindings_module: "modhost_sdk::wit",
        runtime_path: "modhost_sdk::__wit_bindgen::rt",
    });
}

#[doc(hidden)]
pub use wit_bindgen as __wit_bindgen;

/// Glue the [`export!`] macro expands to. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::realtime::{accept, declare_realtime, on_close, on_message, on_timer};
    pub use crate::router::{after, before, declare, handle, init, invoke, on_event, routes};
}

/// Makes this crate a modhost mod answering with the given [`Router`]: its routes, its init, and
/// (the `full` world's `guest` export) its hooks, subscriptions and functions. A router with none of
/// the last three declares nothing, and the host never calls the mod for them.
///
/// The expression is evaluated each time the host calls the mod (building a router is a few small
/// allocations), so write a function that returns the router and pass its call. It may read the
/// mod's configuration ([`config::get`]) to decide what to declare: the configuration is fixed for
/// the life of the loaded mod, so every call sees the same router.
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

        impl $crate::wit::exports::modhost::plugin::guest::Guest for __ModhostMod {
            fn declare() -> $crate::wit::exports::modhost::plugin::guest::Declarations {
                $crate::__private::declare(&$router)
            }
            fn before(
                hook: ::std::string::String,
                request: $crate::wit::modhost::plugin::types::Request,
            ) -> ::std::result::Result<
                $crate::wit::exports::modhost::plugin::guest::Verdict,
                $crate::wit::modhost::plugin::types::Error,
            > {
                $crate::__private::before(&$router, &hook, request)
            }
            fn after(
                hook: ::std::string::String,
                request: $crate::wit::modhost::plugin::types::Request,
                response: $crate::wit::modhost::plugin::types::Response,
            ) -> ::std::result::Result<
                ::std::option::Option<$crate::wit::exports::modhost::plugin::guest::ResponseEdit>,
                $crate::wit::modhost::plugin::types::Error,
            > {
                $crate::__private::after(&$router, &hook, request, response)
            }
            fn on_event(
                event: $crate::wit::exports::modhost::plugin::guest::Event,
            ) -> ::std::result::Result<(), $crate::wit::modhost::plugin::types::Error> {
                $crate::__private::on_event(&$router, event)
            }
            fn invoke(
                invocation: $crate::wit::exports::modhost::plugin::guest::Invocation,
            ) -> ::std::result::Result<::std::vec::Vec<u8>, $crate::wit::modhost::plugin::types::Error> {
                $crate::__private::invoke(&$router, invocation)
            }
        }

        impl $crate::wit::exports::modhost::plugin::realtime::Guest for __ModhostMod {
            fn declare_realtime() -> $crate::wit::exports::modhost::plugin::realtime::RealtimeDeclarations {
                $crate::__private::declare_realtime(&$router)
            }
            fn accept(
                connection: ::std::string::String,
                request: $crate::wit::modhost::plugin::types::Request,
            ) -> ::std::result::Result<
                $crate::wit::exports::modhost::plugin::realtime::AcceptVerdict,
                $crate::wit::modhost::plugin::types::Error,
            > {
                $crate::__private::accept(&$router, connection, request)
            }
            fn on_message(
                connection: ::std::string::String,
                message: $crate::wit::exports::modhost::plugin::realtime::Message,
            ) -> ::std::result::Result<(), $crate::wit::modhost::plugin::types::Error> {
                $crate::__private::on_message(&$router, connection, message)
            }
            fn on_close(
                connection: ::std::string::String,
                code: u16,
                reason: ::std::string::String,
            ) -> ::std::result::Result<(), $crate::wit::modhost::plugin::types::Error> {
                $crate::__private::on_close(&$router, connection, code, reason)
            }
            fn on_timer(
                timer: $crate::wit::exports::modhost::plugin::realtime::Fired,
            ) -> ::std::result::Result<(), $crate::wit::modhost::plugin::types::Error> {
                $crate::__private::on_timer(&$router, timer)
            }
        }

        $crate::wit::__export_full!(__ModhostMod);
    };
}
