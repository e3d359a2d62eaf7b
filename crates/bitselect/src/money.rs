//! Money as integer fen (1 yuan = 100 fen).
//!
//! Amounts enter as decimal text (the JSON literal `6799.00`, or a number a
//! model typed) and are parsed digit by digit, so no binary float ever rounds
//! a price. Results carry both the integer and a formatted yuan string.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

/// An amount of money in fen. Negative values are allowed for differences.
pub type Fen = i64;

/// The largest amount a tool argument may name, and the largest sum of such
/// amounts the shop adds up: 1亿元. Far above any order the shop can take
/// (20 lines of 99 units of its dearest SKU come to less), and far enough
/// below `i64::MAX` that no sum, difference or percentage of it overflows.
pub const MAX_AMOUNT_FEN: Fen = 10_000_000_000;

/// Why a decimal text is not an amount of money.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("“{text}” 不是有效金额：{why}")]
pub struct ParseMoneyError {
    pub text: String,
    pub why: &'static str,
}

/// Parses decimal text with at most two decimals into hundredths: `"6799.00"`
/// -> 679900, `"0.92"` -> 92, `"12"` -> 1200. The same parser reads coupon
/// multipliers, which the data also writes with two decimals.
pub fn parse_hundredths(text: &str) -> Result<i64, ParseMoneyError> {
    let fail = |why| ParseMoneyError {
        text: text.to_owned(),
        why,
    };
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, frac) = match body.split_once('.') {
        Some((whole, frac)) => (whole, frac),
        None => (body, ""),
    };
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return Err(fail("整数部分必须是数字"));
    }
    if body.contains('.') && frac.is_empty() {
        return Err(fail("小数点后缺少数字"));
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(fail("小数部分必须是数字"));
    }
    if frac.len() > 2 {
        return Err(fail("最多两位小数（精确到分）"));
    }
    // 13 integer digits keep the product far below i64::MAX.
    if whole.len() > 13 {
        return Err(fail("金额过大"));
    }
    let whole: i64 = whole.parse().map_err(|_| fail("整数部分无法解析"))?;
    let frac_value: i64 = match frac.len() {
        0 => 0,
        1 => i64::from(frac.as_bytes()[0] - b'0') * 10,
        _ => frac.parse().map_err(|_| fail("小数部分无法解析"))?,
    };
    let value = whole * 100 + frac_value;
    Ok(if negative { -value } else { value })
}

/// Formats fen as yuan with two decimals: 679900 -> "6799.00".
pub fn format_yuan(fen: Fen) -> String {
    let sign = if fen < 0 { "-" } else { "" };
    let abs = fen.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

/// Formats fen the way a shopper reads a price: 659900 -> "¥6,599.00".
pub fn format_rmb(fen: Fen) -> String {
    let plain = format_yuan(fen.abs());
    let (whole, frac) = plain.split_once('.').unwrap_or((plain.as_str(), "00"));
    let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
    for (index, digit) in whole.chars().enumerate() {
        if index > 0 && (whole.len() - index) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    let sign = if fen < 0 { "-" } else { "" };
    format!("{sign}¥{grouped}.{frac}")
}

/// Deserializes a JSON number literal such as `6799.00` into fen exactly,
/// reading its source text instead of an `f64`.
pub fn de_fen<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Fen, D::Error> {
    let raw: &RawValue = Deserialize::deserialize(deserializer)?;
    parse_hundredths(raw.get()).map_err(de::Error::custom)
}

/// A yuan string in results, e.g. `"6799.00"`, always next to a `…Fen` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Yuan(pub Fen);

impl fmt::Display for Yuan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_yuan(self.0))
    }
}

impl Serialize for Yuan {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Yuan {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        parse_hundredths(&text).map(Yuan).map_err(de::Error::custom)
    }
}

/// An amount in yuan as a tool argument: a JSON number (`5000`, `99.9`) or a
/// string (`"5000.00"`). Numbers are read through their shortest decimal text,
/// which is exact for anything with at most two decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub struct YuanInput(pub Fen);

impl From<YuanInput> for String {
    fn from(value: YuanInput) -> Self {
        format_yuan(value.0)
    }
}

impl<'de> Deserialize<'de> for YuanInput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        let text = match &value {
            serde_json::Value::Number(n) => n.to_string(),
            serde_json::Value::String(s) => s.trim().to_owned(),
            other => {
                return Err(de::Error::custom(format!(
                    "金额必须是数字或数字字符串（单位：元），收到 {other}"
                )));
            }
        };
        let fen = parse_hundredths(&text).map_err(de::Error::custom)?;
        if fen < 0 {
            return Err(de::Error::custom(format!("金额不能为负数：{text}")));
        }
        if fen > MAX_AMOUNT_FEN {
            return Err(de::Error::custom(format!(
                "金额过大：{text} 元超过上限 {} 元，请给出实际的商品金额",
                format_yuan(MAX_AMOUNT_FEN)
            )));
        }
        Ok(YuanInput(fen))
    }
}

impl schemars::JsonSchema for YuanInput {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Yuan".into()
    }

    // Inline, so confirmation cards and simple clients need not follow $refs.
    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": ["number", "string"],
            "description": "人民币金额，单位元，最多两位小数，例如 5000 或 \"6799.00\"",
            "minimum": 0,
            "maximum": 100_000_000
        })
    }
}

/// Applies a 折扣 multiplier given in hundredths (92 = pay 92 %): the discount
/// is amount × (1 − multiplier), rounded half up to the fen. Worked out in
/// `i128`, so no amount overflows on the way; a result beyond `Fen` (only
/// possible with a multiplier outside 0 to 100) saturates instead of wrapping.
pub fn percent_discount(amount: Fen, pay_hundredths: i64) -> Fen {
    let off = 100 - i128::from(pay_hundredths);
    let discount = (i128::from(amount) * off + 50).div_euclid(100);
    Fen::try_from(discount).unwrap_or(if discount < 0 { Fen::MIN } else { Fen::MAX })
}

/// `a + b` when the sum stays within [`MAX_AMOUNT_FEN`].
pub fn add_amounts(a: Fen, b: Fen) -> Option<Fen> {
    a.checked_add(b).filter(|sum| *sum <= MAX_AMOUNT_FEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_for_the_shopper_group_thousands() {
        assert_eq!(format_rmb(659_900), "¥6,599.00");
        assert_eq!(format_rmb(99), "¥0.99");
        assert_eq!(format_rmb(12_345_678_900), "¥123,456,789.00");
        assert_eq!(format_rmb(-30_000), "-¥300.00");
    }
    use pretty_assertions::assert_eq;

    #[test]
    fn parses_two_decimal_text_exactly() {
        assert_eq!(parse_hundredths("6799.00"), Ok(679_900));
        assert_eq!(parse_hundredths("11198.88"), Ok(1_119_888));
        assert_eq!(parse_hundredths("0.92"), Ok(92));
        assert_eq!(parse_hundredths("0.1"), Ok(10));
        assert_eq!(parse_hundredths("12"), Ok(1200));
        assert_eq!(parse_hundredths("-7.05"), Ok(-705));
    }

    #[test]
    fn rejects_what_is_not_money() {
        for text in ["", ".5", "1.", "1.234", "1e3", "abc", "1,000", "+5", "--1"] {
            assert!(parse_hundredths(text).is_err(), "{text} should be refused");
        }
    }

    #[test]
    fn formats_fen_as_yuan() {
        assert_eq!(format_yuan(679_900), "6799.00");
        assert_eq!(format_yuan(79_992), "799.92");
        assert_eq!(format_yuan(5), "0.05");
        assert_eq!(format_yuan(-150), "-1.50");
    }

    #[test]
    fn reads_json_number_literals_without_floats() {
        #[derive(Deserialize)]
        struct Row {
            #[serde(deserialize_with = "de_fen")]
            price: Fen,
        }
        let row: Row = serde_json::from_str(r#"{"price": 9199.08}"#).unwrap();
        assert_eq!(row.price, 919_908);
    }

    #[test]
    fn yuan_input_accepts_numbers_and_strings() {
        let v: YuanInput = serde_json::from_value(serde_json::json!(99.9)).unwrap();
        assert_eq!(v, YuanInput(9990));
        let v: YuanInput = serde_json::from_value(serde_json::json!("6799.00")).unwrap();
        assert_eq!(v, YuanInput(679_900));
        assert!(serde_json::from_value::<YuanInput>(serde_json::json!(1.005)).is_err());
        assert!(serde_json::from_value::<YuanInput>(serde_json::json!(-3)).is_err());
        assert!(serde_json::from_value::<YuanInput>(serde_json::json!(true)).is_err());
    }

    #[test]
    fn yuan_input_refuses_amounts_beyond_the_largest() {
        let largest: YuanInput = serde_json::from_value(serde_json::json!("100000000.00")).unwrap();
        assert_eq!(largest, YuanInput(MAX_AMOUNT_FEN));
        for too_large in [
            serde_json::json!("100000000.01"),
            serde_json::json!(9_999_999_999_999_u64),
            serde_json::json!(u64::MAX),
        ] {
            let error = serde_json::from_value::<YuanInput>(too_large.clone()).unwrap_err();
            assert!(
                error.to_string().contains("金额过大"),
                "{too_large}: {error}"
            );
        }
    }

    #[test]
    fn percent_discount_never_overflows() {
        assert_eq!(percent_discount(Fen::MAX, 92), 737_869_762_948_382_065);
        assert_eq!(percent_discount(Fen::MAX, i64::MIN), Fen::MAX);
        assert_eq!(percent_discount(Fen::MIN, i64::MIN), Fen::MIN);
    }

    #[test]
    fn amounts_add_up_to_the_largest_and_no_further() {
        assert_eq!(add_amounts(MAX_AMOUNT_FEN - 1, 1), Some(MAX_AMOUNT_FEN));
        assert_eq!(add_amounts(MAX_AMOUNT_FEN, 1), None);
        assert_eq!(add_amounts(Fen::MAX, 1), None);
    }

    #[test]
    fn percent_discount_rounds_to_the_fen() {
        // The seed's order 88233: 9999.00 at 0.92 saves 799.92.
        assert_eq!(percent_discount(999_900, 92), 79_992);
        // 0.08 × 0.05 yuan = 0.4 fen -> 0; 0.08 × 0.07 = 0.56 fen -> 1.
        assert_eq!(percent_discount(5, 92), 0);
        assert_eq!(percent_discount(7, 92), 1);
    }
}
