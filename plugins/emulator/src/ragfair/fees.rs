//! The flea's fee (SPT's `RagfairTaxService.CalculateTax`), charged in roubles when a player lists or
//! renews an offer, and `/client/ragfair/offerfees`.
//!
//! The fee is always the server's own: SPT keeps the fee the client computed (`offerfees`) and charges
//! that when it has one; the game never charges a number the client chose, so `offerfees` is
//! answered as SPT answers it (`null`) and remembered nowhere.
//!
//! Left out of SPT's formula: the hideout's fee discount (no hideout bonuses yet) and an item's repair
//! buff; an item's worth counts its parts and a stack's units, as SPT's does.

use super::rules::Rules;
use crate::input;
use modhost_sdk::{Request, Response, Result, envelope};

/// SPT's tax: `worth` is what the listed items are worth on the flea (all units, parts included),
/// `asked` the price asked for one unit in roubles (a pack's whole price when `one_piece`), `count`
/// the units, `commission` the template's `RagFairCommissionModifier`. Whole roubles.
pub(crate) fn tax(rules: &Rules, worth: f64, asked: f64, count: u64, one_piece: bool, commission: f64) -> u64 {
    if worth <= 0.0 || asked <= 0.0 || count == 0 {
        return 0;
    }
    let requirements = asked * if one_piece { 1.0 } else { count as f64 };
    let item_tax = rules.item_tax / 100.0;
    let requirement_tax = rules.requirement_tax / 100.0;
    let mut item_mult = (worth / requirements).log10();
    let mut requirement_mult = (requirements / worth).log10();
    if requirements >= worth {
        requirement_mult = requirement_mult.powf(1.08);
    } else {
        item_mult = item_mult.powf(1.08);
    }
    let item_mult = 4f64.powf(item_mult);
    let requirement_mult = 4f64.powf(requirement_mult);
    let tax = worth * item_tax * item_mult + requirements * requirement_tax * requirement_mult;
    let fee = (tax * commission).round();
    if fee.is_finite() && fee > 0.0 { fee.min(u64::MAX as f64 / 2.0) as u64 } else { 0 }
}

/// `/client/ragfair/offerfees`: SPT stores the client's fee; the game computes its own, so this only
/// reads the body (bounded) and answers `null`.
pub(crate) fn offer_fees(req: &Request) -> Result<Response> {
    input::object_or_empty(req, "ragfair/offerfees", 4096)?;
    Ok(envelope::ok(&serde_json::Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_tax_is_spts_formula() {
        let rules = Rules::from(&json!({"communityItemTax": 3, "communityRequirementTax": 3}), &json!({}));
        // Asked at worth: 3% of the worth plus 3% of the price, times 4^0.
        assert_eq!(tax(&rules, 10_000.0, 10_000.0, 1, false, 1.0), 600);
        // Two units at 20 000 each for 30 000 of worth: 900·4^(log10(3/4)) + 1200·4^(log10(4/3)^1.08).
        let requirements: f64 = 40_000.0;
        let worth: f64 = 30_000.0;
        let expected = worth * 0.03 * 4f64.powf((worth / requirements).log10())
            + requirements * 0.03 * 4f64.powf((requirements / worth).log10().powf(1.08));
        assert_eq!(tax(&rules, worth, 20_000.0, 2, false, 1.0), expected.round() as u64);
        // Selling in one piece asks the whole price once.
        assert_eq!(tax(&rules, worth, 40_000.0, 2, true, 1.0), expected.round() as u64);
        assert_eq!(tax(&rules, 0.0, 1.0, 1, false, 1.0), 0, "nothing worth nothing is taxed");
        assert_eq!(tax(&rules, 10_000.0, 10_000.0, 1, false, 2.0), 1200, "the template's commission");
    }
}
