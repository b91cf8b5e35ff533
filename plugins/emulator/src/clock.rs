//! The game's one clock: every rule that depends on the time (a registration date, a raid's start, a
//! trader's resupply, a quest's start, and what the hideout and insurance will compute from elapsed
//! time) reads [`now`] here, never the system clock itself.
//!
//! The game's time is the host's wall clock (WASI's) plus the db's `emulator.clock.offsetSeconds`
//! (none: 0). Moving it is how a test, or a mod author trying a timed system, lets time pass without
//! waiting: write the offset into `db.json` before the server starts (the server was "off" that long),
//! or change it and `modhost reload`; the next request sees the world that much later. It is read
//! once per instance, so a reload takes effect at the next request. `emulator.clock.at` (seconds since
//! the epoch) instead stops the game's clock at one moment: what a test comparing two servers "at the
//! same time" needs, to the second. Timers the host fires
//! (`timers.schedule`) keep the host's own clock: a delay is a delay.
//!
//! Unit tests, which run natively without a host, move it with [`advance`] instead of the db.

/// Where the db keeps the offset, in seconds (negative moves the game back).
#[cfg(not(test))]
const OFFSET: &str = "emulator.clock.offsetSeconds";
/// Where the db may stop the clock at one moment (seconds since the epoch): every request then sees
/// that moment, so two servers compared at "the same time" are at exactly the same second.
#[cfg(not(test))]
const AT: &str = "emulator.clock.at";

/// Seconds since the Unix epoch, in the game's time.
pub(crate) fn now() -> u64 {
    if let Some(at) = stopped_at() {
        return at;
    }
    let wall = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    wall.saturating_add_signed(offset())
}

/// The UTC calendar date of `at` seconds since the epoch, `(year, month, day)`, by Howard Hinnant's
/// days-to-civil (the game writes dates in SPT's text forms: a raid's, an insurance letter's).
pub(crate) fn civil(at: u64) -> (i64, i64, i64) {
    let days = (at / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Read once per instance: `now` is called per item on some paths (each generated bot's
/// `UpdateTime`), and an instance serves one request (a reused one, its generation's requests: a db
/// reload makes a new generation, so it reads the new offset).
#[cfg(not(test))]
fn offset() -> i64 {
    static OFFSET_SECONDS: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *OFFSET_SECONDS.get_or_init(|| modhost_sdk::db::get::<i64>(OFFSET).unwrap_or(0))
}

/// The moment the db stops the clock at, if it does; read once per instance as the offset is.
#[cfg(not(test))]
fn stopped_at() -> Option<u64> {
    static AT_SECONDS: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *AT_SECONDS.get_or_init(|| modhost_sdk::db::get::<u64>(AT).ok())
}

#[cfg(test)]
fn stopped_at() -> Option<u64> {
    None
}

#[cfg(test)]
thread_local! {
    /// The unit tests' offset, per test thread.
    static OFFSET_FOR_TESTS: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
fn offset() -> i64 {
    OFFSET_FOR_TESTS.get()
}

/// Moves this test thread's game time `seconds` forward.
#[cfg(test)]
pub(crate) fn advance(seconds: i64) {
    OFFSET_FOR_TESTS.set(OFFSET_FOR_TESTS.get().saturating_add(seconds));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advancing_moves_now_forward_by_as_much() {
        let before = now();
        advance(36_000);
        let after = now();
        // The wall clock may tick once in between.
        assert!((36_000..=36_001).contains(&(after - before)), "{before} → {after}");
    }
}
