//! Coupons: the rules that decide whether one applies and how much it takes
//! off, and the `query_coupons` report that tries each held coupon.

use std::collections::BTreeMap;
use std::fmt;

use crate::store::{Row, params};
use serde::{Deserialize, Serialize};

use crate::cart;
use crate::catalog;
use crate::clock::{Millis, format_rfc3339};
use crate::error::{CouponRefusal, Refusal, Result, ShopError};
use crate::money::{Fen, MAX_AMOUNT_FEN, Yuan, add_amounts, format_yuan, percent_discount};
use crate::params::QueryCouponsParams;
use crate::users::UserConn;

pub const UNUSED: &str = "未使用";
pub const USED: &str = "已使用";

/// How a coupon takes money off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CouponKind {
    /// 满减: a fixed amount off once the threshold is reached.
    AmountOff(Fen),
    /// 折扣: pay this many hundredths of the eligible amount (92 = 92 %).
    Percent(i64),
}

/// A coupon template joined with the user's copy of it.
#[derive(Debug, Clone)]
pub struct HeldCoupon {
    pub code: String,
    pub name: String,
    pub kind: CouponKind,
    pub threshold: Fen,
    /// `None`: every category.
    pub category: Option<String>,
    pub valid_from: Millis,
    pub valid_to: Millis,
    pub status: String,
    pub order_no: Option<String>,
}

impl HeldCoupon {
    /// "全场满 5000.00 元减 300.00 元" / "「平板」类商品打 9.2 折".
    pub fn rule(&self) -> String {
        let scope = match &self.category {
            Some(category) => format!("「{category}」类商品"),
            None => "全场".to_owned(),
        };
        match self.kind {
            CouponKind::AmountOff(off) if self.threshold == 0 => {
                format!("{scope}立减 {} 元", format_yuan(off))
            }
            CouponKind::AmountOff(off) => format!(
                "{scope}满 {} 元减 {} 元",
                format_yuan(self.threshold),
                format_yuan(off)
            ),
            CouponKind::Percent(pay) => {
                let tenths = if pay % 10 == 0 {
                    format!("{}", pay / 10)
                } else {
                    format!("{}.{}", pay / 10, pay % 10)
                };
                if self.threshold == 0 {
                    format!("{scope}打 {tenths} 折")
                } else {
                    format!("{scope}满 {} 元打 {tenths} 折", format_yuan(self.threshold))
                }
            }
        }
    }

    fn type_name(&self) -> &'static str {
        match self.kind {
            CouponKind::AmountOff(_) => "满减",
            CouponKind::Percent(_) => "折扣",
        }
    }
}

/// What a coupon is tried against: a total and the amounts per category.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Basket {
    pub total: Fen,
    pub by_category: BTreeMap<String, Fen>,
}

/// Decides whether `coupon` applies to `basket` at `now`, and for how much.
/// Category coupons look only at that category's amount, for the threshold
/// as for the discount.
pub fn evaluate(
    coupon: &HeldCoupon,
    now: Millis,
    basket: &Basket,
) -> std::result::Result<Fen, CouponRefusal> {
    let code = coupon.code.clone();
    if coupon.status != UNUSED {
        return Err(CouponRefusal::AlreadyUsed {
            code,
            order_no: coupon.order_no.clone().unwrap_or_else(|| "（未知）".into()),
        });
    }
    if now < coupon.valid_from {
        return Err(CouponRefusal::NotYetValid {
            code,
            from: format_rfc3339(coupon.valid_from),
        });
    }
    if now > coupon.valid_to {
        return Err(CouponRefusal::Expired {
            code,
            to: format_rfc3339(coupon.valid_to),
        });
    }
    let (eligible, basis) = match &coupon.category {
        Some(category) => {
            let amount = basket.by_category.get(category).copied().unwrap_or(0);
            if amount == 0 {
                return Err(CouponRefusal::NoEligibleCategory {
                    code,
                    category: category.clone(),
                });
            }
            (amount, format!("「{category}」类商品金额"))
        }
        None => (basket.total, "商品金额".to_owned()),
    };
    if eligible <= 0 {
        return Err(CouponRefusal::NothingToDiscount { code });
    }
    if eligible < coupon.threshold {
        return Err(CouponRefusal::BelowThreshold {
            code,
            basis,
            eligible: Yuan(eligible),
            threshold: Yuan(coupon.threshold),
            missing: Yuan(coupon.threshold - eligible),
        });
    }
    let discount = match coupon.kind {
        CouponKind::AmountOff(off) => off,
        CouponKind::Percent(pay) => percent_discount(eligible, pay),
    };
    Ok(discount.min(eligible))
}

const SELECT_HELD: &str = "SELECT c.code, c.name, c.kind, c.threshold_fen, c.amount_off_fen,
            c.pay_percent, c.category, c.valid_from, c.valid_to, u.status, u.order_no
     FROM user_coupon u JOIN coupon c ON c.code = u.code
     WHERE u.user_id = ?1";

fn held_from_row(row: &Row<'_>) -> Result<HeldCoupon> {
    let kind: String = row.get(2)?;
    let kind = if kind == "折扣" {
        CouponKind::Percent(row.get(5)?)
    } else {
        CouponKind::AmountOff(row.get(4)?)
    };
    Ok(HeldCoupon {
        code: row.get(0)?,
        name: row.get(1)?,
        kind,
        threshold: row.get(3)?,
        category: row.get(6)?,
        valid_from: row.get(7)?,
        valid_to: row.get(8)?,
        status: row.get(9)?,
        order_no: row.get(10)?,
    })
}

/// The user's copy of one coupon, or a refusal if they do not hold it.
pub(crate) fn held(conn: &UserConn<'_>, code: &str) -> Result<HeldCoupon> {
    conn.query_opt(
        &format!("{SELECT_HELD} AND u.code = ?2"),
        params![conn.user(), code],
        held_from_row,
    )?
    .ok_or_else(|| {
        Refusal::CouponNotHeld {
            code: code.to_owned(),
        }
        .into()
    })
}

fn all_held(conn: &UserConn<'_>) -> Result<Vec<HeldCoupon>> {
    conn.query_all(
        &format!("{SELECT_HELD} ORDER BY c.valid_to, c.code"),
        params![conn.user()],
        held_from_row,
    )
}

/// Marks the coupon used on `order_no`; only an unused one can be.
pub(crate) fn mark_used(
    conn: &UserConn<'_>,
    code: &str,
    order_no: &str,
    now: Millis,
) -> Result<()> {
    let changed = conn.execute(
        "UPDATE user_coupon SET status = ?1, order_no = ?2, used_at = ?3
         WHERE user_id = ?6 AND code = ?4 AND status = ?5",
        params![USED, order_no, now, code, UNUSED, conn.user()],
    )?;
    if changed != 1 {
        return Err(ShopError::Corrupt(format!(
            "优惠券 {code} 在使用时状态已改变"
        )));
    }
    Ok(())
}

/// A coupon template's name, if the shop has it.
pub(crate) fn name_of(conn: &UserConn<'_>, code: &str) -> Result<Option<String>> {
    conn.query_opt(
        "SELECT name FROM coupon WHERE code = ?1",
        params![code],
        |row| row.get(0),
    )
}

/// The coupon used on `order_no`, which cancelling it gives back.
pub(crate) fn used_on(conn: &UserConn<'_>, order_no: &str) -> Result<Option<String>> {
    conn.query_opt(
        "SELECT code FROM user_coupon WHERE user_id = ?3 AND order_no = ?1 AND status = ?2",
        params![order_no, USED, conn.user()],
        |row| row.get(0),
    )
}

/// Gives back the coupon used on a cancelled order. Returns its code.
pub(crate) fn release(conn: &UserConn<'_>, order_no: &str) -> Result<Option<String>> {
    let code = used_on(conn, order_no)?;
    if let Some(code) = &code {
        conn.execute(
            "UPDATE user_coupon SET status = ?1, order_no = NULL, used_at = NULL
             WHERE user_id = ?3 AND code = ?2",
            params![UNUSED, code, conn.user()],
        )?;
    }
    Ok(code)
}

/// One held coupon tried against the basket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CouponCheck {
    pub code: String,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub rule: String,
    pub category: Option<String>,
    pub threshold_fen: Fen,
    pub threshold: Yuan,
    pub valid_from: String,
    pub valid_to: String,
    pub status: String,
    pub used_on_order: Option<String>,
    pub usable: bool,
    pub discount_fen: Option<Fen>,
    pub discount: Option<Yuan>,
    /// Why not, when not usable.
    pub reason: Option<String>,
    pub reason_code: Option<String>,
}

/// An amount per category, for the report's basis.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CategoryAmount {
    pub category: String,
    pub amount_fen: Fen,
    pub amount: Yuan,
}

/// What `query_coupons` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CouponReport {
    /// "arguments" or "cart".
    pub basis: String,
    pub total_fen: Fen,
    pub total: Yuan,
    pub category_amounts: Vec<CategoryAmount>,
    pub coupons: Vec<CouponCheck>,
    /// The usable coupon with the largest discount.
    pub best_code: Option<String>,
}

/// Tries every held coupon against the given amounts, or the cart's
/// orderable lines when no amount is given.
pub fn report(conn: &UserConn<'_>, now: Millis, p: &QueryCouponsParams) -> Result<CouponReport> {
    let (basis, basket) = if p.amount.is_none() && p.category_amounts.is_empty() {
        ("cart", cart::orderable_basket(conn)?)
    } else {
        ("arguments", basket_from_args(conn, p)?)
    };
    let mut coupons = Vec::new();
    let mut best: Option<(Fen, String)> = None;
    for coupon in all_held(conn)? {
        let outcome = evaluate(&coupon, now, &basket);
        if let Ok(discount) = outcome
            && best.as_ref().is_none_or(|(d, _)| discount > *d)
        {
            best = Some((discount, coupon.code.clone()));
        }
        coupons.push(CouponCheck {
            rule: coupon.rule(),
            kind: coupon.type_name().to_owned(),
            threshold_fen: coupon.threshold,
            threshold: Yuan(coupon.threshold),
            valid_from: format_rfc3339(coupon.valid_from),
            valid_to: format_rfc3339(coupon.valid_to),
            usable: outcome.is_ok(),
            discount_fen: outcome.as_ref().ok().copied(),
            discount: outcome.as_ref().ok().copied().map(Yuan),
            reason: outcome.as_ref().err().map(ToString::to_string),
            reason_code: outcome.as_ref().err().map(|r| r.code().to_owned()),
            code: coupon.code,
            name: coupon.name,
            category: coupon.category,
            status: coupon.status,
            used_on_order: coupon.order_no,
        });
    }
    Ok(CouponReport {
        basis: basis.to_owned(),
        total_fen: basket.total,
        total: Yuan(basket.total),
        category_amounts: basket
            .by_category
            .iter()
            .map(|(category, amount)| CategoryAmount {
                category: category.clone(),
                amount_fen: *amount,
                amount: Yuan(*amount),
            })
            .collect(),
        coupons,
        best_code: best.map(|(_, code)| code),
    })
}

fn basket_from_args(conn: &UserConn<'_>, p: &QueryCouponsParams) -> Result<Basket> {
    let known = catalog::categories(conn)?;
    let mut by_category = BTreeMap::new();
    for (category, amount) in &p.category_amounts {
        let category = category.trim();
        if !known.iter().any(|k| k == category) {
            return Err(Refusal::UnknownCategory {
                category: category.to_owned(),
                known: known.join("、"),
            }
            .into());
        }
        // Keys that trim to the same category add up, within the largest amount.
        let entry: &mut Fen = by_category.entry(category.to_owned()).or_insert(0);
        *entry = add_amounts(*entry, amount.0).ok_or_else(|| too_large("categoryAmounts"))?;
    }
    let category_sum = by_category
        .values()
        .try_fold(0, |sum: Fen, a| add_amounts(sum, *a))
        .ok_or_else(|| too_large("categoryAmounts"))?;
    if p.amount.is_some_and(|amount| amount.0 > MAX_AMOUNT_FEN) {
        return Err(too_large("amount"));
    }
    let total = match p.amount {
        Some(amount) if amount.0 < category_sum => {
            return Err(ShopError::invalid(
                "amount",
                format!(
                    "总金额 {} 元小于各类目金额之和 {} 元",
                    format_yuan(amount.0),
                    format_yuan(category_sum)
                ),
            ));
        }
        Some(amount) => amount.0,
        None => category_sum,
    };
    Ok(Basket { total, by_category })
}

/// Amounts, or their sum, beyond what the shop adds up.
fn too_large(field: &str) -> ShopError {
    ShopError::invalid(
        field,
        format!(
            "金额过大：超过上限 {} 元（同一类目的金额会相加）；请按实际要买的商品金额试算",
            format_yuan(MAX_AMOUNT_FEN)
        ),
    )
}

impl fmt::Display for CouponReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let basis = if self.basis == "cart" {
            "购物车中可下单的商品"
        } else {
            "所给金额"
        };
        write!(f, "按{basis}试算（合计 {} 元", self.total)?;
        for c in &self.category_amounts {
            write!(f, "，{} {} 元", c.category, c.amount)?;
        }
        writeln!(f, "），您持有 {} 张优惠券：", self.coupons.len())?;
        for c in &self.coupons {
            write!(
                f,
                "- {} {}（{}，有效期至 {}）：",
                c.code, c.name, c.rule, c.valid_to
            )?;
            match (&c.discount, &c.reason) {
                (Some(discount), _) => writeln!(f, "可用，优惠 {discount} 元")?,
                (None, Some(reason)) => writeln!(f, "{reason}")?,
                (None, None) => writeln!(f, "不可用")?,
            }
        }
        match &self.best_code {
            Some(code) => write!(f, "优惠最多的可用券：{code}"),
            None => write!(f, "当前没有可用的优惠券"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::DAY_MS;
    use pretty_assertions::assert_eq;

    fn coupon(kind: CouponKind, threshold: Fen, category: Option<&str>) -> HeldCoupon {
        HeldCoupon {
            code: "T".into(),
            name: "测试券".into(),
            kind,
            threshold,
            category: category.map(Into::into),
            valid_from: 0,
            valid_to: 10 * DAY_MS,
            status: UNUSED.into(),
            order_no: None,
        }
    }

    fn basket(total: Fen, categories: &[(&str, Fen)]) -> Basket {
        Basket {
            total,
            by_category: categories
                .iter()
                .map(|(c, a)| ((*c).to_owned(), *a))
                .collect(),
        }
    }

    #[test]
    fn category_discount_applies_to_that_category_only() {
        let edu = coupon(CouponKind::Percent(92), 0, Some("电脑"));
        let b = basket(1_099_800, &[("电脑", 999_900), ("配件", 99_900)]);
        assert_eq!(evaluate(&edu, DAY_MS, &b), Ok(79_992));
    }

    #[test]
    fn category_threshold_counts_only_that_category() {
        let phone = coupon(CouponKind::AmountOff(50_000), 800_000, Some("手机"));
        // 6799 of phone plus 2000 of accessories is 8799 in all, still short.
        let b = basket(879_900, &[("手机", 679_900), ("配件", 200_000)]);
        let refusal = evaluate(&phone, DAY_MS, &b).unwrap_err();
        assert_eq!(refusal.code(), "COUPON_BELOW_THRESHOLD");
        assert!(refusal.to_string().contains("还差 1201.00 元"), "{refusal}");
    }

    #[test]
    fn window_bounds_are_inclusive() {
        let c = coupon(CouponKind::AmountOff(100), 0, None);
        let b = basket(1_000, &[]);
        assert_eq!(evaluate(&c, 0, &b), Ok(100));
        assert_eq!(evaluate(&c, 10 * DAY_MS, &b), Ok(100));
        assert_eq!(
            evaluate(&c, 10 * DAY_MS + 1, &b).unwrap_err().code(),
            "COUPON_EXPIRED"
        );
        assert_eq!(
            evaluate(&c, -1, &b).unwrap_err().code(),
            "COUPON_NOT_YET_VALID"
        );
    }

    #[test]
    fn a_used_coupon_is_refused() {
        let mut c = coupon(CouponKind::AmountOff(100), 0, None);
        c.status = USED.into();
        c.order_no = Some("88233".into());
        let refusal = evaluate(&c, DAY_MS, &basket(1_000, &[])).unwrap_err();
        assert!(refusal.to_string().contains("88233"));
    }

    #[test]
    fn amount_off_never_exceeds_the_eligible_amount() {
        let c = coupon(CouponKind::AmountOff(5_000), 0, Some("配件"));
        assert_eq!(
            evaluate(&c, DAY_MS, &basket(3_000, &[("配件", 3_000)])),
            Ok(3_000)
        );
    }

    #[test]
    fn rules_read_like_the_shop() {
        assert_eq!(
            coupon(CouponKind::AmountOff(30_000), 500_000, None).rule(),
            "全场满 5000.00 元减 300.00 元"
        );
        assert_eq!(
            coupon(CouponKind::Percent(92), 0, Some("电脑")).rule(),
            "「电脑」类商品打 9.2 折"
        );
    }
}
