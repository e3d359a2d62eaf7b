//! Money arguments: amounts are read as exact fen and bounded.

use crate::support::*;
use bitselect::money::YuanInput;
use bitselect::params::QueryCouponsParams;
use pretty_assertions::assert_eq;

#[test]
fn an_amount_argument_beyond_the_largest_amount_is_refused_when_read() {
    let error = serde_json::from_value::<QueryCouponsParams>(serde_json::json!({
        "categoryAmounts": {"电脑": 9_999_999_999_999_u64}
    }))
    .unwrap_err();
    assert!(error.to_string().contains("金额过大"), "{error}");
    let error = serde_json::from_value::<YuanInput>(serde_json::json!("100000000.01")).unwrap_err();
    assert!(error.to_string().contains("金额过大"), "{error}");
    let largest: YuanInput = serde_json::from_value(serde_json::json!(100_000_000)).unwrap();
    assert_eq!(largest, YuanInput(LARGEST_AMOUNT_FEN));
}
