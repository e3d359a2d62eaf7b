//! A kept mandate checked again, offline: everything needed is in the
//! record (the mandate carries the device's public key, the record the
//! merchant's keys as published when the shopper approved). It answers
//! whether the device signed exactly the checkout kept, for this merchant
//! and this checkout, whether the merchant signed that checkout, and
//! whether the merchant's receipt is signed by the same merchant.

use ap2::jws::{self, Jwk};
use ap2::mandate;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

use crate::store::mandates::MandateRecord;

/// What one check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Check {
    Holds,
    /// Why it does not (the technical reason).
    Fails {
        reason: String,
    },
}

impl Check {
    fn of(result: Result<(), String>) -> Self {
        match result {
            Ok(()) => Self::Holds,
            Err(reason) => Self::Fails { reason },
        }
    }

    pub fn holds(&self) -> bool {
        *self == Self::Holds
    }
}

/// What each check of a kept mandate found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct Evidence {
    /// The device's signatures and key binding hold, made out to the
    /// merchant and the checkout, over exactly the checkout kept.
    pub mandate: Check,
    /// The merchant's signature on the checkout holds with its keys.
    pub merchant_signature: Check,
    /// The receipt's signature holds (none while not completed).
    pub receipt: Option<Check>,
}

impl Evidence {
    pub fn holds(&self) -> bool {
        self.mandate.holds()
            && self.merchant_signature.holds()
            && self.receipt.as_ref().is_none_or(Check::holds)
    }
}

/// A kept mandate as the shopper and the command line see it, with what
/// checking it again found.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct KeptMandate {
    pub call_id: String,
    pub session_id: String,
    /// The merchant's origin.
    pub merchant: String,
    pub checkout_id: String,
    /// The amount to pay the shopper approved, in the checkout's minor
    /// unit (fen), when the checkout states one.
    #[ts(type = "number | null")]
    pub total: Option<i64>,
    pub currency: Option<String>,
    /// Milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub signed_at: i64,
    #[ts(type = "number | null")]
    pub completed_at: Option<i64>,
    /// The order the merchant's receipt names, once completed.
    pub order: Option<String>,
    pub evidence: Evidence,
}

impl KeptMandate {
    pub(crate) fn of(record: &MandateRecord) -> Self {
        let total = record.checkout["totals"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|total| total["type"] == "total")
            .and_then(|total| total["amount"].as_i64());
        Self {
            call_id: record.call_id.clone(),
            session_id: record.session_id.clone(),
            merchant: record.merchant.clone(),
            checkout_id: record.checkout_id.clone(),
            total,
            currency: record.checkout["currency"].as_str().map(str::to_owned),
            signed_at: record.created_at,
            completed_at: record.completed_at,
            order: record
                .receipt
                .as_ref()
                .and_then(|receipt| receipt["order"]["id"].as_str())
                .map(str::to_owned),
            evidence: check(record),
        }
    }
}

/// Why the kept mandates could not be read.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    #[error("{path} cannot be opened: {source}")]
    Open {
        path: String,
        source: rusqlite::Error,
    },
    #[error("the mandates cannot be read: {0}")]
    Read(String),
}

/// Every mandate kept in the app's database at `path`, newest first, each
/// checked again. The database is opened read-only: checking changes
/// nothing, and works while the app is closed, or on a copy.
pub fn read_and_check(path: &std::path::Path) -> Result<Vec<KeptMandate>, EvidenceError> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|source| EvidenceError::Open {
        path: path.display().to_string(),
        source,
    })?;
    let records = crate::store::mandates::all(&conn)
        .map_err(|error| EvidenceError::Read(error.to_string()))?;
    Ok(records.iter().map(KeptMandate::of).collect())
}

/// Checks `record` without the network.
pub fn check(record: &MandateRecord) -> Evidence {
    let keys: Vec<Jwk> = serde_json::from_value(record.merchant_keys.clone()).unwrap_or_default();
    let signed_by_merchant = |document: &Value| {
        let signature = document["ap2"]["merchant_authorization"]
            .as_str()
            .ok_or_else(|| "no merchant signature (ap2.merchant_authorization)".to_owned())?;
        jws::verify_detached(signature, &jws::checkout_payload(document), &keys)
            .map_err(|error| error.to_string())
    };
    Evidence {
        mandate: Check::of(mandate_holds(record)),
        merchant_signature: Check::of(signed_by_merchant(&record.checkout)),
        receipt: record
            .receipt
            .as_ref()
            .map(|receipt| Check::of(signed_by_merchant(receipt))),
    }
}

fn mandate_holds(record: &MandateRecord) -> Result<(), String> {
    let kid = mandate::device_key_id(&record.mandate).map_err(|e| e.to_string())?;
    let device = confirmation_key(&record.mandate)?;
    let device = Jwk { kid, ..device };
    // As at the moment it was made: it has expired since, by design.
    let verified = mandate::verify(
        &record.mandate,
        record.created_at / 1000,
        &record.merchant,
        &device,
    )
    .map_err(|e| e.to_string())?;
    if verified.checkout != record.checkout {
        return Err("the mandate covers another checkout than the one kept".into());
    }
    if verified.checkout["id"] != record.checkout_id.as_str() {
        return Err("the mandate's checkout is not the one the call completed".into());
    }
    Ok(())
}

/// The device key the mandate names as its own (`cnf.jwk`), read before
/// it is verified with it.
fn confirmation_key(presentation: &str) -> Result<Jwk, String> {
    let payload = presentation
        .split('~')
        .next()
        .and_then(|jwt| jwt.split('.').nth(1))
        .ok_or("the mandate is not a JWT")?;
    let claims: Value = B64
        .decode(payload)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or("the mandate's claims are unreadable")?;
    serde_json::from_value(claims["cnf"]["jwk"].clone())
        .map_err(|_| "the mandate names no device key (cnf.jwk)".to_owned())
}

#[cfg(test)]
mod tests {
    use ap2::jws::SigningKey;
    use serde_json::json;

    use super::*;

    const SHOP: &str = "https://shop.example";

    fn kept() -> (MandateRecord, SigningKey) {
        let (merchant, _) = SigningKey::generate().unwrap();
        let checkout = jws::sign_checkout(
            &merchant,
            json!({"id": "chk_1", "currency": "CNY", "totals": [{"type": "total", "amount": 679_900}]}),
        )
        .unwrap();
        let device = SigningKey::generate()
            .unwrap()
            .0
            .with_kid("bitselect-device");
        let made = 1_800_000_000_000;
        let signed =
            mandate::sign(&device, &checkout, SHOP, made / 1000, made / 1000 + 600).unwrap();
        let receipt =
            jws::sign_checkout(&merchant, json!({"id": "chk_1", "status": "completed"})).unwrap();
        let record = MandateRecord {
            call_id: "call-1".into(),
            session_id: "s1".into(),
            server: "merchant".into(),
            merchant: SHOP.into(),
            checkout_id: "chk_1".into(),
            merchant_signature: checkout["ap2"]["merchant_authorization"]
                .as_str()
                .unwrap()
                .into(),
            checkout,
            merchant_keys: serde_json::to_value([merchant.public_jwk()]).unwrap(),
            mandate: signed,
            created_at: made,
            receipt: Some(receipt),
            completed_at: Some(made + 1000),
        };
        (record, merchant)
    }

    #[test]
    fn a_kept_mandate_verifies_offline_long_after_it_expired() {
        let (record, _) = kept();
        let evidence = check(&record);
        assert_eq!(evidence.mandate, Check::Holds);
        assert_eq!(evidence.merchant_signature, Check::Holds);
        assert_eq!(evidence.receipt, Some(Check::Holds));
        assert!(evidence.holds());
    }

    #[test]
    fn a_kept_checkout_changed_afterwards_no_longer_matches_what_was_signed() {
        let (mut record, _) = kept();
        record.checkout["totals"][0]["amount"] = json!(1);
        let evidence = check(&record);
        assert!(!evidence.mandate.holds());
        assert!(!evidence.merchant_signature.holds());
        assert!(!evidence.holds());

        let (mut record, _) = kept();
        record.merchant = "https://elsewhere.example".into();
        assert!(
            !check(&record).mandate.holds(),
            "made out to another merchant"
        );

        let (mut record, _) = kept();
        record.receipt = Some(json!({"id": "chk_1", "status": "completed"}));
        assert!(matches!(check(&record).receipt, Some(Check::Fails { .. })));
    }
}
