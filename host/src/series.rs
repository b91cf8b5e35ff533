//! Latency over time, per route: for the status page's plots. Each route keeps a ring of the last
//! [`SLOTS`] time slots of [`SLOT_SECS`] each (10 minutes), and per slot the requests, their total and
//! their slowest time.
//!
//! Key types: [`Series`] (one route's ring, kept in `metrics.rs`'s route table) and [`Point`] (one
//! slot, as `/modhost/mods` answers it).
//!
//! What a reader must not break: a ring holds at most [`SLOTS`] slots whatever the clock does (only
//! slots that saw a request are stored, oldest first; older ones go when a newer one comes), and the
//! routes that have a ring are the metrics table's, which `Metrics::retain_routes` keeps to the
//! serving generation's routes. A wall clock that steps back counts into the newest slot rather than
//! reordering the ring.

use std::collections::VecDeque;
use std::time::SystemTime;

/// Seconds one slot covers.
pub(crate) const SLOT_SECS: u64 = 10;
/// Slots kept per route: 60 × 10 s, ten minutes, a plot's width.
pub(crate) const SLOTS: u64 = 60;

/// One slot of one route.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Slot {
    /// Which slot: Unix seconds / [`SLOT_SECS`].
    index: u64,
    count: u64,
    sum_seconds: f64,
    max_seconds: f64,
}

/// One route's ring of slots.
#[derive(Debug, Default, Clone)]
pub(crate) struct Series {
    /// Oldest first; only slots that saw a request; at most [`SLOTS`].
    slots: VecDeque<Slot>,
}

/// One slot, as the status JSON shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Point {
    /// When the slot starts, in Unix seconds.
    pub t: u64,
    /// Requests answered in it.
    pub count: u64,
    /// Their mean time from head to answer, in milliseconds.
    pub mean_ms: f64,
    /// The slowest of them, in milliseconds.
    pub max_ms: f64,
}

/// A route's latency over the last 60 slots of 10 s, for `/modhost/mods`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatencySeries {
    /// Seconds per slot.
    pub slot_s: u64,
    /// Slots the plot spans.
    pub slots: u64,
    /// The slot now (its start, Unix seconds): the plot's right edge, on the server's clock.
    pub now: u64,
    /// The slots that saw requests, oldest first (a slot absent had none).
    pub points: Vec<Point>,
}

/// The slot `at` falls in.
pub(crate) fn slot_of(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs()) / SLOT_SECS
}

impl Series {
    /// Counts one request of `seconds` in slot `now`.
    pub(crate) fn observe(&mut self, now: u64, seconds: f64) {
        match self.slots.back_mut() {
            // The newest slot, or a clock stepped back: count it there.
            Some(last) if last.index >= now => {
                last.count += 1;
                last.sum_seconds += seconds;
                last.max_seconds = last.max_seconds.max(seconds);
            }
            _ => self.slots.push_back(Slot { index: now, count: 1, sum_seconds: seconds, max_seconds: seconds }),
        }
        self.expire(now);
    }

    /// Drops the slots that fell out of the window ending at `now`, and any past [`SLOTS`].
    fn expire(&mut self, now: u64) {
        while self.slots.front().is_some_and(|s| s.index + SLOTS <= now) || self.slots.len() as u64 > SLOTS {
            self.slots.pop_front();
        }
    }

    /// The window ending at slot `now`.
    pub(crate) fn view(&self, now: u64) -> LatencySeries {
        let points = self
            .slots
            .iter()
            .filter(|s| s.index + SLOTS > now)
            .map(|s| Point {
                t: s.index * SLOT_SECS,
                count: s.count,
                mean_ms: s.sum_seconds * 1e3 / s.count as f64,
                max_ms: s.max_seconds * 1e3,
            })
            .collect();
        LatencySeries {
            slot_s: SLOT_SECS,
            slots: SLOTS,
            now: now.max(self.slots.back().map_or(0, |s| s.index)) * SLOT_SECS,
            points,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_of_one_slot_add_up_and_a_new_slot_starts_a_point() {
        let mut s = Series::default();
        s.observe(100, 0.001);
        s.observe(100, 0.003);
        s.observe(102, 0.010);
        let view = s.view(102);
        assert_eq!((view.slot_s, view.slots, view.now), (SLOT_SECS, SLOTS, 102 * SLOT_SECS));
        assert_eq!(view.points.len(), 2, "{view:?}");
        let first = &view.points[0];
        assert_eq!((first.t, first.count), (100 * SLOT_SECS, 2));
        assert!((first.mean_ms - 2.0).abs() < 1e-9 && (first.max_ms - 3.0).abs() < 1e-9, "{first:?}");
        assert_eq!(view.points[1].count, 1);
    }

    #[test]
    fn the_ring_rotates_and_never_holds_more_than_its_slots() {
        let mut s = Series::default();
        for slot in 0..1000 {
            s.observe(slot, 0.001);
            assert!(s.slots.len() as u64 <= SLOTS, "slot {slot}: {} kept", s.slots.len());
        }
        let view = s.view(999);
        assert_eq!(view.points.len() as u64, SLOTS);
        assert_eq!(view.points[0].t, (999 - SLOTS + 1) * SLOT_SECS, "the oldest kept is the window's first");
        assert_eq!(view.points.last().map(|p| p.t), Some(999 * SLOT_SECS));
        // Quiet for a while: the old slots leave the view, then the ring, with the next request.
        assert_eq!(s.view(999 + SLOTS - 1).points.len(), 1);
        assert!(s.view(999 + SLOTS).points.is_empty());
        s.observe(999 + SLOTS + 5, 0.002);
        assert_eq!(s.slots.len(), 1, "{:?}", s.slots);
    }

    #[test]
    fn a_clock_stepping_back_counts_into_the_newest_slot() {
        let mut s = Series::default();
        s.observe(50, 0.001);
        s.observe(40, 0.005);
        let view = s.view(40);
        assert_eq!(view.points.len(), 1, "{view:?}");
        assert_eq!(view.points[0].count, 2);
        assert_eq!(view.now, 50 * SLOT_SECS, "the right edge never moves back");
    }
}
