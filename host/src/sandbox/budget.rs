//! [`MemoryBudget`]: the server-wide budget of guest linear memory, so that many instances growing at
//! once cannot take the machine's memory (256 pool slots of 128 MiB are 32 GiB).
//!
//! Every growth of an instance's linear memory (its first allocation included) takes permits, one per
//! 64 KiB wasm page, from one semaphore sized from the machine ([`machine_bytes`]); the permits go back
//! when the instance's store is dropped. A growth that finds no room waits (asynchronously: the fiber
//! is suspended, the worker runs other requests) for at most `memory_wait`, then fails; the call is
//! answered 503 naming the budget, and that is no strike: it says how busy the server is, not what the
//! mod is. One mod may hold at most half the budget (its share, taken first, as instance slots are),
//! so one mod's burst waits on itself and leaves room for the others.
//!
//! Not counted: the pool keeps up to 16 MiB of each used slot resident after its instance is dropped
//! (`engine.rs`), and wasmtime's own bookkeeping; both are bounded by the pool's size, not by guests.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A wasm page: the unit linear memory grows by, and the budget's permit.
const PAGE: usize = 64 << 10;

/// The server-wide budget and what each mod holds of it.
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    pages: Arc<Semaphore>,
    total_bytes: usize,
    /// Pages one mod may hold: half the budget (or one instance's cap, when that is more).
    share_pages: usize,
    wait: Duration,
    /// Per mod id (across generations: a reloaded mod keeps its counters).
    mods: Mutex<BTreeMap<Arc<str>, Arc<ModMemory>>>,
}

/// What one mod holds of the budget, and how often it had to wait or was refused.
#[derive(Debug)]
pub(crate) struct ModMemory {
    /// This mod's share of the budget, one permit a page, taken before the budget's own.
    share: Arc<Semaphore>,
    /// Bytes its live instances hold now.
    pub(crate) in_use: AtomicUsize,
    /// The most it held at once.
    pub(crate) peak: AtomicUsize,
    /// Growths that had to wait for room.
    pub(crate) waits: AtomicU64,
    /// Growths refused after the wait (each a 503).
    pub(crate) refusals: AtomicU64,
}

/// One mod's line in [`MemoryBudget::usage`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModUsage {
    /// The mod's id.
    pub(crate) id: String,
    /// Bytes held now.
    pub(crate) in_use: usize,
    /// The most held at once.
    pub(crate) peak: usize,
    /// Growths that waited.
    pub(crate) waits: u64,
    /// Growths refused.
    pub(crate) refusals: u64,
}

/// Why a growth was refused: the budget (or the mod's half of it) stayed full for the whole wait.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the server's guest memory budget of {} MiB (guest_memory_mib) had no room for {} KiB more within {} ms",
    .budget_bytes >> 20, .wanted_bytes >> 10, .waited.as_millis()
)]
pub(crate) struct BudgetFull {
    /// The whole budget.
    pub(crate) budget_bytes: usize,
    /// What the growth asked for.
    pub(crate) wanted_bytes: usize,
    /// How long it waited.
    pub(crate) waited: Duration,
}

/// What one store holds of the budget: given back when it drops (with the instance).
#[derive(Debug)]
pub(crate) struct Charge {
    /// Permits of the mod's share and of the whole budget, one per page each.
    held: Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)>,
    bytes: usize,
    owner: Arc<ModMemory>,
}

impl MemoryBudget {
    /// A budget of `total_bytes` (rounded down to pages); a growth waits at most `wait` for room. Each
    /// mod may hold half of it, or one instance's cap `instance_bytes` when that is more.
    pub(crate) fn new(total_bytes: usize, instance_bytes: usize, wait: Duration) -> MemoryBudget {
        let pages = (total_bytes / PAGE).min(Semaphore::MAX_PERMITS);
        let share_pages = (pages / 2).max(instance_bytes.div_ceil(PAGE)).min(pages);
        MemoryBudget {
            pages: Arc::new(Semaphore::new(pages)),
            total_bytes: pages * PAGE,
            share_pages,
            wait,
            mods: Mutex::default(),
        }
    }

    /// The budget's size in bytes.
    pub(crate) fn total_bytes(&self) -> usize {
        self.total_bytes
    }

    /// Bytes held by all instances now.
    pub(crate) fn in_use(&self) -> usize {
        (self.total_bytes / PAGE).saturating_sub(self.pages.available_permits()) * PAGE
    }

    /// The counters of mod `id`, made on first use.
    pub(crate) fn account(&self, id: &Arc<str>) -> Arc<ModMemory> {
        let mut mods = self.mods.lock().unwrap_or_else(PoisonError::into_inner);
        let share_pages = self.share_pages;
        mods.entry(id.clone())
            .or_insert_with(|| {
                Arc::new(ModMemory {
                    share: Arc::new(Semaphore::new(share_pages)),
                    in_use: AtomicUsize::new(0),
                    peak: AtomicUsize::new(0),
                    waits: AtomicU64::new(0),
                    refusals: AtomicU64::new(0),
                })
            })
            .clone()
    }

    /// Every mod's counters, by id.
    pub(crate) fn usage(&self) -> Vec<ModUsage> {
        let mods = self.mods.lock().unwrap_or_else(PoisonError::into_inner);
        mods.iter()
            .map(|(id, m)| ModUsage {
                id: id.to_string(),
                in_use: m.in_use.load(Ordering::Relaxed),
                peak: m.peak.load(Ordering::Relaxed),
                waits: m.waits.load(Ordering::Relaxed),
                refusals: m.refusals.load(Ordering::Relaxed),
            })
            .collect()
    }

    /// A charge of nothing yet, for one store of the mod `owner`.
    pub(crate) fn charge(owner: Arc<ModMemory>) -> Charge {
        Charge { held: None, bytes: 0, owner }
    }

    /// Adds `bytes` (rounded up to pages) to `charge`: first from the mod's share, then from the whole
    /// budget (as instance slots are taken), waiting up to the budget's wait for both. `Ok(true)`:
    /// it had to wait.
    pub(crate) async fn grow(&self, charge: &mut Charge, bytes: usize) -> Result<bool, BudgetFull> {
        let pages = bytes.div_ceil(PAGE);
        let full = |waited| BudgetFull { budget_bytes: self.total_bytes, wanted_bytes: pages * PAGE, waited };
        let owner = charge.owner.clone();
        let Ok(n) = u32::try_from(pages) else { return Err(full(Duration::ZERO)) };
        let fast = owner.share.clone().try_acquire_many_owned(n).ok().and_then(|own| {
            let all = self.pages.clone().try_acquire_many_owned(n).ok()?;
            Some((own, all))
        });
        let waited = fast.is_none();
        let (own, all) = match fast {
            Some(permits) => permits,
            None => {
                owner.waits.fetch_add(1, Ordering::Relaxed);
                let both = async {
                    let own = owner.share.clone().acquire_many_owned(n).await?;
                    let all = self.pages.clone().acquire_many_owned(n).await?;
                    Ok::<_, tokio::sync::AcquireError>((own, all))
                };
                match tokio::time::timeout(self.wait, both).await {
                    Ok(Ok(permits)) => permits,
                    // The semaphores are never closed; a closed one is as good as full.
                    Ok(Err(_)) | Err(_) => {
                        owner.refusals.fetch_add(1, Ordering::Relaxed);
                        return Err(full(self.wait));
                    }
                }
            }
        };
        match &mut charge.held {
            Some((held_own, held_all)) => {
                held_own.merge(own);
                held_all.merge(all);
            }
            None => charge.held = Some((own, all)),
        }
        charge.bytes += pages * PAGE;
        let now = owner.in_use.fetch_add(pages * PAGE, Ordering::Relaxed) + pages * PAGE;
        owner.peak.fetch_max(now, Ordering::Relaxed);
        Ok(waited)
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.owner.in_use.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// The machine's memory as this process may use it: the smaller of `MemTotal` and the cgroup's
/// limit (v2 `memory.max`, v1 `memory.limit_in_bytes`), in bytes; `None` when neither can be read.
/// Read by hand: two numbers from `/proc` and `/sys` do not justify a system-information crate.
pub(crate) fn machine_bytes() -> Option<usize> {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
        let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    });
    let cgroup = ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        // "max", or v1's "no limit" (a huge number), both mean none.
        .filter_map(|text| text.trim().parse::<usize>().ok())
        .min();
    match (total, cgroup) {
        (Some(t), Some(c)) => Some(t.min(c)),
        (t, c) => t.or(c),
    }
}

/// The budget when the player set none: a quarter of the machine's memory (the rest is the host's:
/// the db, the store's cache, answers in flight, and the page cache), at least `floor` (one
/// instance's cap: every mod must be able to run one call). 4 GiB when the machine cannot be read.
pub(crate) fn default_bytes(floor: usize) -> usize {
    machine_bytes().map_or(4 << 30, |bytes| bytes / 4).max(floor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn growth_waits_for_room_then_is_refused_and_memory_comes_back_on_drop() {
        let budget = MemoryBudget::new(8 * PAGE, PAGE, Duration::from_millis(50));
        let (a, b, c) = (budget.account(&"a".into()), budget.account(&"b".into()), budget.account(&"c".into()));
        let mut first = MemoryBudget::charge(a.clone());
        budget.grow(&mut first, 4 * PAGE).await.unwrap();
        assert!(budget.grow(&mut first, PAGE).await.is_err(), "a mod holds at most half the budget");
        let mut second = MemoryBudget::charge(b.clone());
        budget.grow(&mut second, 3 * PAGE + 1).await.unwrap();
        let mut third = MemoryBudget::charge(c.clone());
        let e = budget.grow(&mut third, PAGE).await.unwrap_err();
        assert!(e.to_string().contains("guest memory budget of 0 MiB"), "{e}");
        assert_eq!((budget.in_use(), a.in_use.load(Ordering::Relaxed)), (8 * PAGE, 4 * PAGE));
        // A waiting growth gets the room a dropped store gives back.
        let waiting = async { budget.grow(&mut third, 2 * PAGE).await };
        let freeing = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            drop(first);
        };
        let (grown, ()) = tokio::join!(waiting, freeing);
        grown.unwrap();
        assert_eq!((budget.in_use(), a.in_use.load(Ordering::Relaxed)), (6 * PAGE, 0));
        assert_eq!(a.peak.load(Ordering::Relaxed), 4 * PAGE);
        let usage = budget.usage();
        let counts: Vec<_> = usage.iter().map(|u| (u.id.as_str(), u.waits, u.refusals)).collect();
        assert_eq!(counts, [("a", 1, 1), ("b", 0, 0), ("c", 2, 1)]);
    }

    #[test]
    fn the_machine_is_read() {
        let bytes = machine_bytes().expect("/proc/meminfo on Linux");
        assert!(bytes > 64 << 20, "{bytes}");
        assert!(default_bytes(1 << 40) == 1 << 40, "the floor holds");
    }
}
