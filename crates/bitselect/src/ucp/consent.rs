//! The buyer consent extension: the purposes the shop asks consent for
//! (the standard's four well-known ones, marketing with its e-mail and
//! SMS segments), each answered with whether it is granted and who said
//! so. The shop's default is "not granted" for every one; a platform
//! passes on the buyer's own decisions, which the checkout keeps and
//! answers back as the buyer's (`source: "platform"`). The shop sends no
//! marketing and shares no data today, so a decision changes nothing it
//! does; it is kept so that nothing is ever done against it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Result, ShopError};

/// The purposes offered, each with what it means, in the shop's words.
const PURPOSES: [(&str, &str); 4] = [
    ("dev.ucp.consent.marketing", "营销：优惠活动与新品信息"),
    ("dev.ucp.consent.analytics", "分析：用购物记录改进商城"),
    ("dev.ucp.consent.preferences", "偏好：记住购物偏好与设置"),
    (
        "dev.ucp.consent.sale_or_sharing",
        "出售或共享：把个人数据提供给第三方",
    ),
];

/// The segments of marketing offered.
const MARKETING_SEGMENTS: [(&str, &str); 2] = [
    ("dev.ucp.consent.marketing.email", "电子邮件营销"),
    ("dev.ucp.consent.marketing.sms", "短信营销"),
];

const MARKETING: &str = "dev.ucp.consent.marketing";

/// The buyer's decision for one purpose, as a platform sends it (its
/// `source`, `description` and `links` are the shop's to say, not read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub granted: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub segments: BTreeMap<String, SegmentDecision>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentDecision {
    pub granted: bool,
}

/// The buyer's decisions, by purpose.
pub type Decisions = BTreeMap<String, Decision>;

/// Refuses decisions for a purpose or segment the shop does not offer,
/// naming those it does.
pub fn check(decisions: &Decisions) -> Result<()> {
    for (purpose, decision) in decisions {
        if !PURPOSES.iter().any(|(name, _)| name == purpose) {
            let offered: Vec<&str> = PURPOSES.iter().map(|(name, _)| *name).collect();
            return Err(ShopError::invalid(
                "buyer.consent",
                format!(
                    "本商城不征求 {purpose} 的同意；可选的是 {}",
                    offered.join("、")
                ),
            ));
        }
        for segment in decision.segments.keys() {
            let offered =
                purpose == MARKETING && MARKETING_SEGMENTS.iter().any(|(name, _)| name == segment);
            if !offered {
                return Err(ShopError::invalid(
                    "buyer.consent",
                    format!("{purpose} 没有 {segment} 这一项"),
                ));
            }
        }
    }
    Ok(())
}

/// Every purpose offered, with the buyer's decision where the platform
/// passed one on and the shop's default ("not granted") elsewhere.
pub fn render(decisions: Option<&Decisions>) -> Value {
    let state = |granted: Option<bool>, description: &str| {
        json!({
            "granted": granted.unwrap_or(false),
            "source": if granted.is_some() { "platform" } else { "business" },
            "description": description,
        })
    };
    let mut consent = serde_json::Map::new();
    for (purpose, description) in PURPOSES {
        let decision = decisions.and_then(|d| d.get(purpose));
        let mut rendered = state(decision.map(|d| d.granted), description);
        if purpose == MARKETING {
            let segments: serde_json::Map<String, Value> = MARKETING_SEGMENTS
                .iter()
                .map(|(segment, description)| {
                    let granted = decision
                        .and_then(|d| d.segments.get(*segment))
                        .map(|s| s.granted);
                    ((*segment).to_owned(), state(granted, description))
                })
                .collect();
            rendered["segments"] = Value::Object(segments);
        }
        consent.insert(purpose.to_owned(), rendered);
    }
    Value::Object(consent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decisions(value: Value) -> Decisions {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn without_the_buyers_word_every_purpose_is_the_shops_default_not_granted() {
        let consent = render(None);
        for (purpose, _) in PURPOSES {
            assert_eq!(consent[purpose]["granted"], false, "{purpose}");
            assert_eq!(consent[purpose]["source"], "business", "{purpose}");
        }
        assert_eq!(
            consent[MARKETING]["segments"]["dev.ucp.consent.marketing.sms"]["source"],
            "business"
        );
    }

    #[test]
    fn the_buyers_decisions_are_answered_as_theirs_and_the_rest_stay_the_shops() {
        let said = decisions(json!({
            "dev.ucp.consent.marketing": {
                "granted": true,
                "source": "platform",
                "segments": { "dev.ucp.consent.marketing.sms": { "granted": false } },
            },
            "dev.ucp.consent.analytics": { "granted": false },
        }));
        check(&said).unwrap();
        let consent = render(Some(&said));
        assert_eq!(consent[MARKETING]["granted"], true);
        assert_eq!(consent[MARKETING]["source"], "platform");
        let segments = &consent[MARKETING]["segments"];
        assert_eq!(
            segments["dev.ucp.consent.marketing.sms"]["source"],
            "platform"
        );
        assert_eq!(segments["dev.ucp.consent.marketing.sms"]["granted"], false);
        assert_eq!(
            segments["dev.ucp.consent.marketing.email"]["source"],
            "business"
        );
        assert_eq!(consent["dev.ucp.consent.analytics"]["source"], "platform");
        assert_eq!(consent["dev.ucp.consent.preferences"]["source"], "business");
    }

    #[test]
    fn a_purpose_or_segment_the_shop_does_not_offer_is_refused_by_name() {
        let unknown = decisions(json!({ "com.example.loyalty": { "granted": true } }));
        let refused = check(&unknown).unwrap_err().to_string();
        assert!(refused.contains("com.example.loyalty"), "{refused}");
        assert!(refused.contains("dev.ucp.consent.marketing"), "{refused}");
        let segment = decisions(json!({
            "dev.ucp.consent.analytics": {
                "granted": true,
                "segments": { "dev.ucp.consent.marketing.email": { "granted": true } },
            },
        }));
        assert!(check(&segment).is_err());
    }
}
