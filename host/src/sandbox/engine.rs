//! The wasmtime engine: how it is configured and why, and the epoch ticker that enforces deadlines.
//!
//! - Pooling allocator with linear memory kept resident and reset by dirty pages (`pagemap_scan`): a
//!   fresh instance per request then costs about 11-14 µs instead of 40+ µs (`docs/architecture.md`,
//!   "What wasmtime costs"). The pool's size caps instances alive at once.
//! - Epoch interruption: a ticker thread bumps the epoch every `epoch_tick`; each call's callback
//!   yields to tokio at every tick (a looping guest never pins a worker) and traps past the deadline.
//! - `max_wasm_stack` bounds guest recursion; the async fiber stack is sized above it.
//! - With `--perfmap`, wasmtime names guest functions in `/tmp/perf-<pid>.map` for `perf report`.

use crate::settings::{EngineLever, EngineLimits};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use wasmtime::{Enabled, InstanceAllocationStrategy, PoolingAllocationConfig};

/// Core instances one component may hold: a Rust mod has the module plus a few shims, the
/// JavaScript and Python runtimes a dozen or so.
pub(crate) const CORE_INSTANCES_PER_COMPONENT: u32 = 32;
/// Linear memories one component may define (a mod has one; the adapter of an older toolchain one more).
pub(crate) const MEMORIES_PER_COMPONENT: u32 = 2;
/// Tables one component may define.
pub(crate) const TABLES_PER_COMPONENT: u32 = 4;

/// Builds the engine for these limits.
///
/// Each component's core instances, memories and tables are capped (a component over a cap is refused
/// when it is compiled or loaded from the cache, with wasmtime's message naming the count), and the
/// pool's totals are those caps times the pool's instances: whatever one mod instantiates, the pool
/// has the room for every other instance slot, so a mod never fails for another's greed.
pub(crate) fn build(limits: &EngineLimits) -> wasmtime::Result<wasmtime::Engine> {
    let mut pool = PoolingAllocationConfig::new();
    let instances = limits.max_instances.max(1);
    pool.total_component_instances(instances)
        .max_core_instances_per_component(CORE_INSTANCES_PER_COMPONENT)
        .max_memories_per_component(MEMORIES_PER_COMPONENT)
        .max_tables_per_component(TABLES_PER_COMPONENT)
        .total_core_instances(instances.saturating_mul(CORE_INSTANCES_PER_COMPONENT))
        .total_memories(instances.saturating_mul(MEMORIES_PER_COMPONENT))
        .total_tables(instances.saturating_mul(TABLES_PER_COMPONENT))
        .total_stacks(instances)
        .max_memory_size(limits.memory_bytes)
        // The pool's own cap on a table: the per-mod `table_elements` can only lower it.
        .table_elements(limits.table_elements)
        // Sized for the larger JavaScript and Python components.
        .max_core_instance_size(8 << 20)
        .max_component_instance_size(8 << 20)
        .linear_memory_keep_resident(16 << 20)
        .table_keep_resident(64 << 10)
        .pagemap_scan(Enabled::Auto);
    let mut config = wasmtime::Config::new();
    // Each lever turned the other way alone, to measure it (`settings::EngineLever`).
    match limits.lever {
        None => {}
        Some(EngineLever::NoKeepResident) => {
            pool.linear_memory_keep_resident(0).table_keep_resident(0);
        }
        Some(EngineLever::NoPagemapScan) => {
            pool.pagemap_scan(Enabled::No);
        }
        Some(EngineLever::NoCow) => {
            config.memory_init_cow(false);
        }
        Some(EngineLever::OnDemand) => {}
    }
    let strategy = match limits.lever {
        Some(EngineLever::OnDemand) => InstanceAllocationStrategy::OnDemand,
        _ => InstanceAllocationStrategy::Pooling(pool),
    };
    if limits.perfmap {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    config
        .allocation_strategy(strategy)
        // Without enforcement the compiled code has no epoch checks at all: what `--no-limits` measures.
        .epoch_interruption(limits.enforce)
        .max_wasm_stack(limits.wasm_stack_bytes)
        .async_stack_size(limits.wasm_stack_bytes + (1 << 20));
    wasmtime::Engine::new(&config)
}

/// Bumps the engine's epoch every tick until dropped.
#[derive(Debug)]
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    pub(crate) fn start(engine: &wasmtime::Engine, tick: std::time::Duration) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let weak = engine.weak();
        let flag = stop.clone();
        std::thread::Builder::new().name("modhost-epoch".into()).spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(tick);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        })?;
        Ok(EpochTicker { stop })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
