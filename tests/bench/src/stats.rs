//! Statistics for benchmark reports: order statistics of a sample ([`summarize`], [`percentile`],
//! [`median`]) and the two-sided Mann-Whitney U test ([`mann_whitney`]) for "is B different from A".
//!
//! Why these and not means with t-tests: latencies are skewed and a shared machine adds outliers, so a report
//! gives medians with their min–max and a rank test that assumes no distribution. With the handful of runs a
//! benchmark can afford (5–12 per side), the p-value is computed exactly from the permutation distribution
//! rather than from the normal approximation, which is poor at those sizes (with 3 + 3 runs no p below 0.10 is
//! possible, and the exact test says so).
//!
//! Two things a reader must not break:
//! - Percentiles are nearest-rank (the value at 1-based rank ⌈p·n⌉ of the sorted sample), so every reported
//!   percentile is a value that was actually measured. [`median`] is the other, usual definition (the mean of
//!   the two middle values for even n); the two agree for odd n.
//! - NaN is not a measurement: every function here ignores NaN values, and none panics on empty input.

/// Order statistics of one sample, as a benchmark table prints them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// How many values were summarized (NaNs are not counted).
    pub n: usize,
    /// The arithmetic mean; 0 for an empty sample.
    pub mean: f64,
    /// The nearest-rank 50th percentile (for even n, the lower of the two middle values; see [`median`]).
    pub p50: f64,
    /// The nearest-rank 95th percentile.
    pub p95: f64,
    /// The nearest-rank 99th percentile.
    pub p99: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
}

/// Summarizes `xs` (in any order). An empty sample, or one of only NaNs, gives `n == 0` and every field 0,
/// so a table row for an endpoint that got no replies still prints.
pub fn summarize(xs: &[f64]) -> Summary {
    let sorted = sorted(xs);
    let Some((&min, &max)) = sorted.first().zip(sorted.last()) else {
        return Summary { n: 0, mean: 0.0, p50: 0.0, p95: 0.0, p99: 0.0, min: 0.0, max: 0.0 };
    };
    Summary {
        n: sorted.len(),
        mean: sorted.iter().sum::<f64>() / sorted.len() as f64,
        p50: nearest_rank(&sorted, 0.50),
        p95: nearest_rank(&sorted, 0.95),
        p99: nearest_rank(&sorted, 0.99),
        min,
        max,
    }
}

/// The nearest-rank `p`-quantile of `xs` (in any order): the value at 1-based rank ⌈p·n⌉ of the sorted
/// sample, and the smallest value for `p == 0`. `p` is a fraction in `0..=1` (0.99 for p99); values outside
/// are clamped and NaN counts as 0. An empty sample gives 0.
pub fn percentile(xs: &[f64], p: f64) -> f64 {
    nearest_rank(&sorted(xs), p)
}

/// The median of `xs` (in any order): the middle value, or the mean of the two middle values for even n.
/// An empty sample gives 0.
pub fn median(xs: &[f64]) -> f64 {
    let sorted = sorted(xs);
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The result of a two-sided Mann-Whitney U test of two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of the first sample: the number of pairs (x from `a`, y from `b`) with x > y, ties counting ½.
    /// It runs from 0 (every value of `a` below every value of `b`) to n·m; n·m/2 is "no difference".
    pub u: f64,
    /// The two-sided p-value: the chance, if both samples came from one distribution, of a U at least as far
    /// from n·m/2 as the one observed. 1 when either sample is empty.
    pub p: f64,
    /// Whether `p` is exact (from the permutation distribution, with the observed ties) rather than from the
    /// normal approximation. An empty sample gives `true`: p = 1 is then not an approximation.
    pub exact: bool,
}

/// The largest number of ways to split the pooled sample for which [`mann_whitney`] computes the exact p.
/// Up to 10 + 10 runs (184,756 splits) and 11 + 11 (705,432) are exact; 12 + 12 (2.7 million) is not, and
/// the normal approximation is good there.
const EXACT_LIMIT: u128 = 2_000_000;

/// The two-sided Mann-Whitney U test of `a` against `b` (NaNs ignored; ties get mid-ranks).
///
/// The p-value is exact when the pooled sample can be split into `a`'s and `b`'s sizes in at most 2 million
/// ways: it is then the share of those splits, each equally likely if there is no difference, whose U is at
/// least as far from n·m/2 as the observed one, with the observed ties kept. Otherwise it is the normal
/// approximation with tie and continuity corrections, and `exact` is false. The test is symmetric:
/// swapping `a` and `b` gives the same p and U' = n·m − U.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> MannWhitney {
    let a: Vec<f64> = a.iter().copied().filter(|x| !x.is_nan()).collect();
    let b: Vec<f64> = b.iter().copied().filter(|x| !x.is_nan()).collect();
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return MannWhitney { u: 0.0, p: 1.0, exact: true };
    }
    let ranks = Ranks::of(&a, &b);
    let (n_, m_) = (n as i128, m as i128);
    // Everything below is in doubled units so that mid-ranks (which end in .5) stay integers: 2U = 2R − n(n+1)
    // where 2R is the sum of a's doubled ranks, and the distance from the centre is |2U − nm|. Integers let
    // the exact test compare "at least as far" with no float epsilon: equal distances are equal.
    let two_u = ranks.a_doubled_sum - n_ * (n_ + 1);
    let distance = (two_u - n_ * m_).abs();
    let u = two_u as f64 / 2.0;
    if binomial_at_most(n + m, n, EXACT_LIMIT) {
        MannWhitney { u, p: exact_p(&ranks.doubled, n.min(m), n * m, distance), exact: true }
    } else {
        MannWhitney { u, p: normal_p(u, n, m, ranks.tie_term), exact: false }
    }
}

/// The pooled sample's ranks, as the test needs them.
struct Ranks {
    /// Twice the mid-rank of every pooled value, in sorted order (integers: a tie group over 1-based ranks
    /// i..=j has mid-rank (i + j) / 2).
    doubled: Vec<u64>,
    /// The sum of the doubled ranks of `a`'s values.
    a_doubled_sum: i128,
    /// Σ (t³ − t) over the tie groups (t values each), for the normal approximation's variance.
    tie_term: f64,
}

impl Ranks {
    fn of(a: &[f64], b: &[f64]) -> Ranks {
        let mut pooled: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).chain(b.iter().map(|&x| (x, false))).collect();
        pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
        let mut ranks = Ranks { doubled: Vec::with_capacity(pooled.len()), a_doubled_sum: 0, tie_term: 0.0 };
        let mut start = 0;
        while start < pooled.len() {
            // `==` rather than total_cmp for the group, so that -0.0 and 0.0 tie as the numbers they are.
            let end = start + pooled[start..].iter().take_while(|v| v.0 == pooled[start].0).count();
            let doubled = (start + 1 + end) as u64;
            for &(_, in_a) in &pooled[start..end] {
                ranks.doubled.push(doubled);
                if in_a {
                    ranks.a_doubled_sum += i128::from(doubled);
                }
            }
            let t = (end - start) as f64;
            ranks.tie_term += t * t * t - t;
            start = end;
        }
        ranks
    }
}

/// The exact two-sided p: the share of the k-element subsets of the pooled `doubled` ranks whose rank sum
/// gives a U at least `distance` (doubled) from the centre. k is the smaller sample's size; by symmetry its
/// U has the same distance from the centre as the other sample's.
fn exact_p(doubled: &[u64], k: usize, nm: usize, distance: i128) -> f64 {
    let k_ = k as i128;
    let far = |sum: i128| (sum - k_ * (k_ + 1) - nm as i128).abs() >= distance;
    // One value chosen: the distribution is just the pooled ranks themselves. Taken apart because the
    // dynamic programme below would cost (pooled size)² here, and n = 1 against up to 2 million is allowed.
    if k == 1 {
        let hits = doubled.iter().filter(|&&r| far(i128::from(r))).count();
        return hits as f64 / doubled.len() as f64;
    }
    // ways[j][s]: in how many ways j of the pooled values seen so far have doubled rank sum s. Counting sums
    // rather than enumerating subsets costs (pooled size) · k · (largest sum): within EXACT_LIMIT at most
    // 2,000 · 2 · 8,000 = 32 million additions (k = 2, the worst case; 11 + 11 takes about 120 thousand), where
    // enumerating the subsets would cost EXACT_LIMIT · k.
    let width = doubled.iter().rev().take(k).sum::<u64>() as usize + 1;
    let mut ways = vec![0u64; (k + 1) * width];
    ways[0] = 1;
    for (seen, &r) in doubled.iter().enumerate() {
        let r = r as usize;
        // Downwards in j, so that row j − 1 still holds the counts without this value: each value is chosen
        // at most once.
        for j in (1..=k.min(seen + 1)).rev() {
            let (below, at) = ways.split_at_mut(j * width);
            let (prev, row) = (&below[(j - 1) * width..], &mut at[..width]);
            for s in r..width {
                row[s] += prev[s - r];
            }
        }
    }
    let last = &ways[k * width..];
    let total: u64 = last.iter().sum();
    let hits: u64 = last.iter().enumerate().filter(|&(s, _)| far(s as i128)).map(|(_, &w)| w).sum();
    // `hits ≤ total` always (the observed split is one of them, so hits ≥ 1); the min only guards rounding.
    (hits as f64 / total as f64).min(1.0)
}

/// The normal approximation's two-sided p for U of samples of sizes n and m, with the variance reduced for
/// ties and a continuity correction of ½ (U moves in steps of ½ or 1, and the correction keeps p from being
/// too small at moderate sizes).
fn normal_p(u: f64, n: usize, m: usize, tie_term: f64) -> f64 {
    let (n, m) = (n as f64, m as f64);
    let total = n + m;
    let variance = n * m / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
    // Every value tied: U cannot differ from the centre, and there is nothing to test.
    if variance <= 0.0 || !variance.is_finite() {
        return 1.0;
    }
    let z = ((u - n * m / 2.0).abs() - 0.5).max(0.0) / variance.sqrt();
    erfc(z / std::f64::consts::SQRT_2).min(1.0)
}

/// The complementary error function, to a relative error below 1.2e-7 (the Chebyshev fit of Numerical Recipes'
/// `erfcc`): std has no `erfc`, and p-values are printed to two digits.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// Whether C(n, k) ≤ `limit`, without computing a binomial that overflows: the running product is
/// C(n − k + i, i) after step i and only grows, so the loop stops as soon as it passes the limit.
fn binomial_at_most(n: usize, k: usize, limit: u128) -> bool {
    let k = k.min(n - k);
    let mut c: u128 = 1;
    for i in 1..=k {
        // c ≤ limit before this step, so the product fits in u128 for any usize n.
        c = c * (n - k + i) as u128 / i as u128;
        if c > limit {
            return false;
        }
    }
    true
}

/// `xs` without NaNs, sorted ascending.
fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut sorted: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// The nearest-rank percentile of an already sorted sample (see [`percentile`]).
fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
    let n = sorted.len();
    // The small subtraction absorbs the rounding in p·n: 0.07 · 100 is 7.000000000000001 in f64, whose ceiling
    // would be rank 8 instead of 7.
    let rank = ((p * n as f64) - 1e-9).ceil().max(1.0) as usize;
    sorted[rank.min(n) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic generator for test data (no `rand` dependency): a 64-bit LCG's high bits.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, bound: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % bound
        }
    }

    /// U by its definition, counting pairs, independent of ranks.
    fn u_by_pairs(a: &[f64], b: &[f64]) -> f64 {
        let mut u = 0.0;
        for &x in a {
            for &y in b {
                u += if x > y {
                    1.0
                } else if x == y {
                    0.5
                } else {
                    0.0
                };
            }
        }
        u
    }

    /// The exact two-sided p by brute force: every way of choosing which n of the pooled values are `a`.
    fn p_by_enumeration(a: &[f64], b: &[f64]) -> f64 {
        let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
        let (n, m) = (a.len(), b.len());
        let centre = (n * m) as f64 / 2.0;
        let observed = (u_by_pairs(a, b) - centre).abs();
        let (mut hits, mut total) = (0u64, 0u64);
        for mask in 0u32..(1 << pooled.len()) {
            if mask.count_ones() as usize != n {
                continue;
            }
            let (x, y): (Vec<f64>, Vec<f64>) = {
                let in_x = |i: usize| mask & (1 << i) != 0;
                let x = pooled.iter().enumerate().filter(|&(i, _)| in_x(i)).map(|(_, &v)| v).collect();
                let y = pooled.iter().enumerate().filter(|&(i, _)| !in_x(i)).map(|(_, &v)| v).collect();
                (x, y)
            };
            total += 1;
            if (u_by_pairs(&x, &y) - centre).abs() >= observed - 1e-9 {
                hits += 1;
            }
        }
        hits as f64 / total as f64
    }

    #[test]
    fn percentile_is_nearest_rank() {
        // The textbook nearest-rank example.
        let xs = [35.0, 20.0, 15.0, 50.0, 40.0];
        assert_eq!(percentile(&xs, 0.0), 15.0);
        assert_eq!(percentile(&xs, 0.05), 15.0);
        assert_eq!(percentile(&xs, 0.30), 20.0);
        assert_eq!(percentile(&xs, 0.40), 20.0);
        assert_eq!(percentile(&xs, 0.41), 35.0);
        assert_eq!(percentile(&xs, 0.50), 35.0);
        assert_eq!(percentile(&xs, 1.0), 50.0);
        // Out of range and NaN p are clamped rather than indexing out of bounds.
        assert_eq!(percentile(&xs, 7.0), 50.0);
        assert_eq!(percentile(&xs, -1.0), 15.0);
        assert_eq!(percentile(&xs, f64::NAN), 15.0);
    }

    #[test]
    fn percentile_survives_rounding_in_p_times_n() {
        let xs: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        for k in 1..=100 {
            assert_eq!(percentile(&xs, f64::from(k) / 100.0), f64::from(k), "p{k}");
        }
        assert_eq!(percentile(&xs, 0.07), 7.0);
    }

    #[test]
    fn median_averages_the_middle_pair_for_even_n() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[7.0]), 7.0);
        // ... where the nearest-rank p50 is the lower of the pair.
        assert_eq!(percentile(&[4.0, 1.0, 3.0, 2.0], 0.5), 2.0);
    }

    #[test]
    fn empty_input_gives_zeros() {
        let zero = Summary { n: 0, mean: 0.0, p50: 0.0, p95: 0.0, p99: 0.0, min: 0.0, max: 0.0 };
        assert_eq!(summarize(&[]), zero);
        assert_eq!(summarize(&[f64::NAN]), zero);
        assert_eq!(percentile(&[], 0.5), 0.0);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn summarize_one_to_a_hundred() {
        let mut rng = Lcg(7);
        let mut xs: Vec<f64> = (1..=100).map(f64::from).collect();
        for i in (1..xs.len()).rev() {
            xs.swap(i, rng.below(i as u64 + 1) as usize);
        }
        xs.push(f64::NAN);
        let s = summarize(&xs);
        assert_eq!(s, Summary { n: 100, mean: 50.5, p50: 50.0, p95: 95.0, p99: 99.0, min: 1.0, max: 100.0 });
        let one = summarize(&[3.5]);
        assert_eq!((one.n, one.mean, one.p50, one.p99, one.min, one.max), (1, 3.5, 3.5, 3.5, 3.5, 3.5));
    }

    #[test]
    fn mann_whitney_three_against_three() {
        let r = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert_eq!(r.u, 0.0);
        assert!(r.exact);
        // 2 of the C(6, 3) = 20 splits are this extreme (all low or all high).
        assert!((r.p - 0.1).abs() < 1e-12, "p = {}", r.p);
        let r = mann_whitney(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]);
        assert_eq!(r.u, 9.0);
        assert!((r.p - 0.1).abs() < 1e-12, "p = {}", r.p);
    }

    #[test]
    fn mann_whitney_five_against_five() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        let r = mann_whitney(&a, &b);
        assert_eq!(r.u, 0.0);
        assert!(r.exact);
        assert!((r.p - 2.0 / 252.0).abs() < 1e-12, "p = {}", r.p);
        // One swap across the boundary: U = 1, and 4 of 252 splits have U ≤ 1 or U ≥ 24.
        let r = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 6.0], &[5.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(r.u, 1.0);
        assert!((r.p - 4.0 / 252.0).abs() < 1e-12, "p = {}", r.p);
    }

    #[test]
    fn mann_whitney_identical_samples_give_one() {
        let xs = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0];
        let r = mann_whitney(&xs, &xs);
        assert_eq!(r.u, 18.0);
        assert_eq!(r.p, 1.0);
        let r = mann_whitney(&[2.0; 4], &[2.0; 5]);
        assert_eq!((r.u, r.p), (10.0, 1.0));
    }

    #[test]
    fn mann_whitney_with_ties_matches_enumeration() {
        let cases: [(&[f64], &[f64]); 4] = [
            (&[1.0, 2.0, 2.0, 3.0, 5.0], &[2.0, 3.0, 3.0, 4.0, 6.0, 6.0]),
            (&[1.0, 1.0, 1.0], &[1.0, 2.0, 2.0, 2.0]),
            (&[0.0, -0.0, 7.0, 7.0, 7.0, 8.0], &[7.0, 9.0, 9.0]),
            (&[5.0], &[1.0, 5.0, 5.0, 9.0]),
        ];
        for (a, b) in cases {
            let r = mann_whitney(a, b);
            assert!(r.exact);
            assert_eq!(r.u, u_by_pairs(a, b), "U of {a:?} vs {b:?}");
            let expected = p_by_enumeration(a, b);
            assert!((r.p - expected).abs() < 1e-12, "{a:?} vs {b:?}: p {} expected {expected}", r.p);
        }
        // And many small random samples drawn from few values, so that ties are everywhere.
        let mut rng = Lcg(42);
        for _ in 0..300 {
            let n = 1 + rng.below(6) as usize;
            let m = 1 + rng.below(7) as usize;
            let levels = 1 + rng.below(6);
            let a: Vec<f64> = (0..n).map(|_| rng.below(levels) as f64).collect();
            let b: Vec<f64> = (0..m).map(|_| rng.below(levels) as f64 + 0.5 * rng.below(2) as f64).collect();
            let r = mann_whitney(&a, &b);
            assert_eq!(r.u, u_by_pairs(&a, &b), "U of {a:?} vs {b:?}");
            let expected = p_by_enumeration(&a, &b);
            assert!((r.p - expected).abs() < 1e-12, "{a:?} vs {b:?}: p {} expected {expected}", r.p);
        }
    }

    #[test]
    fn mann_whitney_is_symmetric() {
        let mut rng = Lcg(3);
        for (n, m) in [(1, 1), (1, 9), (4, 7), (8, 8), (3, 40), (30, 30), (12, 12)] {
            let a: Vec<f64> = (0..n).map(|_| rng.below(20) as f64).collect();
            let b: Vec<f64> = (0..m).map(|_| rng.below(25) as f64).collect();
            let (ab, ba) = (mann_whitney(&a, &b), mann_whitney(&b, &a));
            assert_eq!(ab.p, ba.p, "{n} + {m}");
            assert_eq!(ab.exact, ba.exact);
            assert_eq!(ab.u + ba.u, (n * m) as f64);
        }
    }

    #[test]
    fn mann_whitney_empty_or_nan_only_gives_one() {
        assert_eq!(mann_whitney(&[], &[1.0, 2.0]), MannWhitney { u: 0.0, p: 1.0, exact: true });
        assert_eq!(mann_whitney(&[1.0], &[]), MannWhitney { u: 0.0, p: 1.0, exact: true });
        assert_eq!(mann_whitney(&[f64::NAN], &[1.0]).p, 1.0);
        // NaNs are dropped, not ranked: this is [1, 2, 3] against [4, 5, 6].
        let r = mann_whitney(&[1.0, f64::NAN, 2.0, 3.0], &[4.0, 5.0, f64::NAN, 6.0]);
        assert_eq!((r.u, r.exact), (0.0, true));
        assert!((r.p - 0.1).abs() < 1e-12);
    }

    #[test]
    fn mann_whitney_one_against_many_is_exact_and_fast() {
        // C(200_000, 1) splits: exact, through the k = 1 path. A single value below all others has U = 0, and
        // only the two extreme positions are that far from the centre.
        let b: Vec<f64> = (1..200_000).map(f64::from).collect();
        let r = mann_whitney(&[0.5], &b);
        assert!(r.exact);
        assert_eq!(r.u, 0.0);
        assert!((r.p - 2.0 / 200_000.0).abs() < 1e-15, "p = {}", r.p);
        // Two against 1,998 (C(2000, 2) = 1,999,000): the dynamic programme at its most expensive.
        let b: Vec<f64> = (0..1_998).map(f64::from).collect();
        let r = mann_whitney(&[-2.0, -1.0], &b);
        assert!(r.exact);
        assert!((r.p - 2.0 / 1_999_000.0).abs() < 1e-15, "p = {}", r.p);
    }

    #[test]
    fn mann_whitney_normal_approximation_near_the_exact_one() {
        // 12 + 12 has C(24, 12) = 2,704,156 splits: past the limit, so approximated. Compare with the exact p
        // of the same data, computed through the exact path directly.
        let mut rng = Lcg(11);
        for shift in [0, 2, 5, 8] {
            let a: Vec<f64> = (0..12).map(|_| rng.below(30) as f64).collect();
            let b: Vec<f64> = (0..12).map(|_| (rng.below(30) + shift) as f64).collect();
            let r = mann_whitney(&a, &b);
            assert!(!r.exact);
            let ranks = Ranks::of(&a, &b);
            let distance = (ranks.a_doubled_sum - 12 * 13 - 144).abs();
            let exact = exact_p(&ranks.doubled, 12, 144, distance);
            assert!((r.p - exact).abs() < 0.005 + 0.05 * exact, "shift {shift}: normal {} exact {exact}", r.p);
            assert_eq!(r.u, u_by_pairs(&a, &b));
        }
        // With ties, against the textbook formula (tie-corrected variance, continuity correction ½) evaluated
        // independently in double precision: 15 + 16 values, U = 54. Without the tie correction p would be
        // 0.00962, without the continuity correction 0.00883.
        let a = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0, 5.0, 6.0, 7.0, 8.0, 9.0, 9.0, 10.0];
        let b = [3.0, 4.0, 5.0, 5.0, 6.0, 7.0, 7.0, 8.0, 9.0, 10.0, 10.0, 11.0, 12.0, 12.0, 13.0, 14.0];
        let r = mann_whitney(&a, &b);
        let want = 0.009_354_312_629_563_632;
        assert_eq!((r.u, r.exact), (54.0, false));
        assert!((r.p - want).abs() < 2e-7 * want, "p = {}", r.p);
        // All tied: zero variance, p = 1 rather than NaN.
        let r = mann_whitney(&[1.0; 30], &[1.0; 30]);
        assert_eq!((r.p, r.exact), (1.0, false));
        // Far apart: a tiny p, still a number.
        let a: Vec<f64> = (0..100).map(f64::from).collect();
        let b: Vec<f64> = (1000..1100).map(f64::from).collect();
        let r = mann_whitney(&a, &b);
        assert!(r.p > 0.0 && r.p < 1e-20, "p = {}", r.p);
    }

    #[test]
    fn erfc_known_values() {
        for (x, want) in
            [(0.0, 1.0), (0.5, 0.479_500_122), (1.0, 0.157_299_207), (2.0, 0.004_677_735), (-1.0, 1.842_700_793)]
        {
            assert!((erfc(x) - want).abs() < 2e-7 * want.max(1e-3), "erfc({x}) = {}", erfc(x));
        }
    }

    #[test]
    fn binomial_limit() {
        assert!(binomial_at_most(20, 10, EXACT_LIMIT)); // 184,756
        assert!(binomial_at_most(22, 11, EXACT_LIMIT)); // 705,432
        assert!(!binomial_at_most(24, 12, EXACT_LIMIT)); // 2,704,156
        assert!(binomial_at_most(2_000_000, 1, EXACT_LIMIT));
        assert!(!binomial_at_most(2_000_001, 1, EXACT_LIMIT));
        assert!(!binomial_at_most(usize::MAX, 3, EXACT_LIMIT));
    }
}
