//! The JSON Canonicalization Scheme (RFC 8785): the one byte string a JSON
//! value signs as, whoever serialized it. A signed checkout is stored and
//! verified again later, by other programs, after passing through systems
//! that re-serialize JSON; only canonical bytes survive that.

use serde_json::{Number, Value};

/// The canonical form of `value`: object members sorted by their names'
/// UTF-16 code units, no whitespace, numbers as ECMAScript prints them,
/// strings escaped as `JSON.stringify` escapes them.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => write_number(number, out),
        Value::String(text) => write_string(text, out),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (index, (name, member)) in sorted.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(name, out);
                out.push(':');
                write_value(member, out);
            }
            out.push('}');
        }
    }
}

/// `JSON.stringify`'s escaping is serde_json's: `"`, `\` and the control
/// characters, with `\b \f \n \r \t` and lowercase `\u00xx`; all else as is.
fn write_string(text: &str, out: &mut String) {
    // Serializing a string cannot fail.
    if let Ok(quoted) = serde_json::to_string(text) {
        out.push_str(&quoted);
    }
}

/// Every JSON number is an IEEE 754 double to ECMAScript: integers a double
/// holds exactly print as they are, the rest as the double they read as.
fn write_number(number: &Number, out: &mut String) {
    const EXACT: u64 = 1 << 53;
    if let Some(int) = number.as_i64().filter(|n| n.unsigned_abs() <= EXACT) {
        out.push_str(&int.to_string());
    } else if let Some(int) = number.as_u64().filter(|&n| n <= EXACT) {
        out.push_str(&int.to_string());
    } else if let Some(double) = number.as_f64() {
        write_double(double, out);
    }
}

/// ECMAScript's Number::toString (ECMA-262, 7.1.12.1) from the shortest
/// digits that read back as the same double, which Rust's `{:e}` gives.
fn write_double(double: f64, out: &mut String) {
    if double == 0.0 {
        out.push('0');
        return;
    }
    if double < 0.0 {
        out.push('-');
    }
    let scientific = format!("{:e}", double.abs());
    let (mantissa, exponent) = scientific
        .split_once('e')
        .unwrap_or((scientific.as_str(), "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    // The decimal point sits after the first `point` digits.
    let point = exponent + 1;
    let count = digits.len() as i32;
    if count <= point && point <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (point - count) as usize));
    } else if 0 < point && point <= 21 {
        let (whole, fraction) = digits.split_at(point as usize);
        out.push_str(whole);
        out.push('.');
        out.push_str(fraction);
    } else if -6 < point && point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-point) as usize));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push('e');
        out.push(if point - 1 < 0 { '-' } else { '+' });
        out.push_str(&(point - 1).abs().to_string());
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::canonical;

    fn canonical_of(text: &str) -> String {
        canonical(&serde_json::from_str(text).unwrap())
    }

    #[test]
    fn the_rfc_example_canonicalizes_as_the_rfc_prints_it() {
        // RFC 8785, section 3.2.2.
        let input = r#"{
            "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
            "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
            "literals": [null, true, false]
        }"#;
        assert_eq!(
            canonical_of(input),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    #[test]
    fn members_sort_by_utf16_code_units_not_by_code_points() {
        // RFC 8785, section 3.2.3: U+1F600 is a surrogate pair (0xD83D...)
        // and so sorts before U+FB33, though its code point is higher.
        let input = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#;
        let names: Vec<String> = canonical_of(input)
            .split(['{', ',', '}'])
            .filter(|member| !member.is_empty())
            .map(|member| member.split(':').next().unwrap().to_owned())
            .collect();
        assert_eq!(
            names,
            [
                r#""\r""#,
                r#""1""#,
                "\"\u{80}\"",
                "\"ö\"",
                "\"€\"",
                "\"😀\"",
                "\"\u{fb33}\"",
            ]
        );
    }

    #[test]
    fn numbers_print_as_ecmascript_prints_them() {
        // Values from RFC 8785's appendix B, as their doubles read back.
        for (double, printed) in [
            (0.0, "0"),
            (-0.0, "0"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (9007199254740992.0, "9007199254740992"),
            (295147905179352830000.0, "295147905179352830000"),
            (1e21, "1e+21"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (-1.5, "-1.5"),
            (123456789012345680000.0, "123456789012345680000"),
        ] {
            assert_eq!(canonical(&json!(double)), printed, "{double:e}");
        }
        assert_eq!(canonical(&json!(-42)), "-42");
        assert_eq!(canonical(&json!(u64::MAX)), "18446744073709552000");
    }

    #[test]
    fn nested_values_have_no_whitespace_and_every_level_sorted() {
        let value = json!({"b": [ {"z": 1, "a": "文"} ], "a": {"y": null, "x": true}});
        assert_eq!(
            canonical(&value),
            r#"{"a":{"x":true,"y":null},"b":[{"a":"文","z":1}]}"#
        );
    }

    #[test]
    fn the_same_value_serialized_two_ways_canonicalizes_the_same() {
        let spaced = canonical_of("{ \"total\" : 1299 ,\n \"id\":\"chk_1\" }");
        let tight = canonical_of(r#"{"id":"chk_1","total":1299}"#);
        assert_eq!(spaced, tight);
    }
}
