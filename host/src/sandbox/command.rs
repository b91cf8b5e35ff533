//! [`Runtime::run_command`]: runs a WASI command component (a mod's test binary, built by `cargo test`
//! for `wasm32-wasip2`) against the linker every mod gets, so its code can call the db, the store and
//! the log for real. What `modhost test-runner` is made of.
//!
//! A command is not a mod: it gets its arguments and the terminal's stdio (a test harness needs both),
//! but still no files, sockets or environment, and it runs under the runtime's memory cap and one
//! deadline for the whole run. Do not use this for anything a player installs.

use super::instance::arm_deadline;
use super::state::{CallState, ModContext};
use super::{Runtime, compile};
use crate::settings::ModLimits;
use anyhow::Context as _;
use std::sync::Arc;
use std::time::Duration;
use wasmtime::{Store, StoreLimitsBuilder, Trap};
use wasmtime_wasi::WasiCtx;
use wasmtime_wasi::p2::bindings::Command;

/// How a command's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandExit {
    /// It returned from `run` (0, or 1 for an error) or called `exit` with this code.
    Exited(i32),
    /// It trapped: a Rust panic on wasm32 aborts, which is a trap. The text is wasmtime's, with the
    /// guest's backtrace.
    Trapped(String),
    /// It was still running at the deadline and was stopped.
    TimedOut(Duration),
}

impl Runtime {
    /// Compiles `wasm` (a command component), instantiates it with WASI 0.2 (stdio inherited, `args`
    /// as its arguments, `args[0]` being the program's name, `env` as its whole environment) and
    /// modhost's imports backed by `cx`, and calls its `wasi:cli/run` within `deadline`, under `limits`'
    /// memory, table and host-call caps.
    ///
    /// Errors are for a component that cannot run at all (not a component, not a command, an import
    /// this host lacks); how the run itself ended is the [`CommandExit`].
    pub(crate) async fn run_command(
        &self,
        wasm: &[u8],
        cx: Arc<ModContext>,
        limits: &ModLimits,
        args: &[String],
        env: &[(&str, &str)],
        deadline: Duration,
    ) -> anyhow::Result<CommandExit> {
        let (component, _, _) = compile::load(&self.engine, wasm, None)?;
        let mut wasi = WasiCtx::builder();
        wasi.inherit_stdio().args(args).envs(env);
        let caps = StoreLimitsBuilder::new()
            .memory_size(limits.memory_bytes)
            .table_elements(limits.table_elements)
            .trap_on_grow_failure(true)
            .build();
        let mut store = Store::new(&self.engine, CallState::with_wasi(cx, caps, wasi.build()));
        if self.limits.enforce {
            store.limiter_async(|s| &mut s.limits);
            store.set_hostcall_fuel(limits.hostcall_bytes);
            arm_deadline(&mut store, deadline);
        }
        let command = Command::instantiate_async(&mut store, &component, &self.linker)
            .await
            .map_err(anyhow::Error::from)
            .context("instantiating the command (is it a wasm32-wasip2 binary built against modhost's wit?)")?;
        // As for a mod's call: the epoch stops a guest running wasm, the timeout one waiting in WASI.
        let grace = deadline + 2 * self.limits.epoch_tick;
        let ran = tokio::time::timeout(grace, command.wasi_cli_run().call_run(&mut store)).await;
        Ok(match ran {
            Err(_) => CommandExit::TimedOut(deadline),
            Ok(Ok(Ok(()))) => CommandExit::Exited(0),
            Ok(Ok(Err(()))) => CommandExit::Exited(1),
            Ok(Err(e)) => {
                if let Some(exit) = e.downcast_ref::<wasmtime_wasi::I32Exit>() {
                    CommandExit::Exited(exit.0)
                } else if matches!(e.downcast_ref::<Trap>(), Some(Trap::Interrupt)) {
                    CommandExit::TimedOut(deadline)
                } else {
                    CommandExit::Trapped(format!("{e:?}"))
                }
            }
        })
    }
}
