//! What a write would do, for the confirmation card: the structured content
//! of the `preview_*` tools.
//!
//! A preview is built from the same plan the write commits (see
//! `cart::plan_update`, `orders::plan_create`, …), so the two cannot
//! disagree on an amount. The shape is a convention a client renders without
//! knowing the tool: a one-line summary, the goods, the totals, the address
//! and warnings. Money is integer fen. Nothing here reads the clock: the same
//! shop and arguments give the same bytes, so a client can compare the
//! preview at card time with the one at approval time.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::addresses::AddressOffer;
use crate::after_sale::AfterSalePlan;
use crate::cart::CartPlan;
use crate::catalog;
use crate::coupons;
use crate::error::{Blockers, Result};
use crate::money::{Fen, format_rmb};
use crate::orders::{AddressPlan, CancelPlan, OrderLine, OrderPlan, OrderView, PayPlan, Receiver};
use crate::params::{AfterSaleType, CartAction};
use crate::users::UserConn;

/// What a write would do now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    /// One line in Chinese, e.g. "提交订单：1 件商品，应付 ¥6,599.00".
    pub summary: String,
    /// The goods concerned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<PreviewLine>,
    pub totals: Vec<Total>,
    /// Where it ships (create_order), or the receiver after the change
    /// (change_address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<Address>,
    /// change_address only: the receiver before the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_before: Option<Address>,
    /// create_order only: the saved addresses the shop will ask the
    /// shopper to choose from when the order is placed (the call names
    /// none and there are several). `address` is then empty: no address is
    /// chosen yet, so the card must not show one as if it were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub address_choices: Vec<Address>,
    pub warnings: Vec<Warning>,
}

impl Preview {
    /// True when the write would be refused now.
    pub fn is_blocked(&self) -> bool {
        self.warnings.iter().any(|w| w.blocking)
    }
}

/// One line of goods.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviewLine {
    /// The product (model) name, e.g. "iPhone 17".
    pub name: String,
    /// The configuration, e.g. "256GB 黑色".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
    /// The skuCode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The unit price: today's for the cart and a new order, the price
    /// bought at for an existing order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_price_fen: Option<Fen>,
    /// In the cart after the call, or in the order or the return.
    pub quantity: i64,
    /// update_cart_item only: in the cart before the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity_before: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtotal_fen: Option<Fen>,
    /// Stock after the call where it changes stock, else stock now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stock_left: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What an amount is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TotalKind {
    Goods,
    /// Always negative.
    Discount,
    Shipping,
    /// What would be charged.
    Pay,
    /// What would be paid back.
    Refund,
    /// The cart's orderable total after the call.
    Cart,
}

/// One amount of the call. `label` is detail beside the kind's own name
/// (a coupon's name), or the name itself: a client shows a label that only
/// restates the kind once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Total {
    pub kind: TotalKind,
    /// Detail, e.g. the coupon's name and code for a discount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub amount_fen: Fen,
}

impl Total {
    fn new(kind: TotalKind, label: impl Into<String>, amount_fen: Fen) -> Self {
        Self {
            kind,
            label: Some(label.into()),
            amount_fen,
        }
    }
}

/// Who receives the parcel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Address {
    pub receiver_name: String,
    pub receiver_phone: String,
    pub receiver_address: String,
}

impl From<&Receiver> for Address {
    fn from(r: &Receiver) -> Self {
        Self {
            receiver_name: r.name.clone(),
            receiver_phone: r.phone.clone(),
            receiver_address: r.address.clone(),
        }
    }
}

/// Something the shopper should know before approving.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    /// The write's refusal code when blocking (`INSUFFICIENT_STOCK`, …).
    pub code: String,
    /// For the shopper: names, not codes; no tool names.
    pub message: String,
    /// For the model: what to do about it, in its terms (tools, arguments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The write would be refused for this reason.
    pub blocking: bool,
}

impl Warning {
    fn note(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            message: message.into(),
            hint: None,
            blocking: false,
        }
    }
}

/// The blockers as warnings, followed by `notes`.
fn warnings(blockers: &Blockers, notes: Vec<Warning>) -> Vec<Warning> {
    blockers
        .iter()
        .map(|refusal| Warning {
            code: refusal.code().to_owned(),
            message: refusal.for_shopper(),
            hint: refusal.hint(),
            blocking: true,
        })
        .chain(notes)
        .collect()
}

/// The summary; when the write would be refused, what stops it instead,
/// so that a headline never promises an amount or a refund that will not
/// happen.
fn summary(text: String, blockers: &Blockers) -> String {
    match blockers.iter().next() {
        None => text,
        Some(first) => format!("当前无法执行：{}", first.for_shopper()),
    }
}

/// A line of goods named the card's way.
fn goods_line(
    conn: &UserConn<'_>,
    code: &str,
    sku_name: &str,
    quantity: i64,
) -> Result<PreviewLine> {
    let label = catalog::label(conn, code, sku_name)?;
    Ok(PreviewLine {
        name: label.name,
        spec: label.spec,
        code: Some(code.to_owned()),
        unit_price_fen: None,
        quantity,
        quantity_before: None,
        subtotal_fen: None,
        stock_left: None,
        note: None,
    })
}

fn price_note(added: Option<Fen>, now: Fen) -> Option<String> {
    added
        .filter(|added| *added != now)
        .map(|added| format!("加入购物车时 {}", format_rmb(added)))
}

fn price_warning(name: &str, added: Option<Fen>, now: Fen) -> Option<Warning> {
    added.filter(|added| *added != now).map(|added| {
        let moved = if now < added { "降价" } else { "涨价" };
        Warning::note(
            "PRICE_CHANGED",
            format!(
                "{name} 现价 {}，加入购物车时 {}（{moved} {}）",
                format_rmb(now),
                format_rmb(added),
                format_rmb((now - added).abs())
            ),
        )
    })
}

/// `update_cart_item`: the line before and after, and the cart's orderable
/// total after.
pub fn cart(conn: &UserConn<'_>, plan: &CartPlan) -> Result<Preview> {
    let sku = &plan.sku;
    let price = sku.price_fen;
    let mut line = goods_line(conn, &sku.sku_code, &sku.name, plan.quantity)?;
    line.unit_price_fen = Some(price);
    line.quantity_before = Some(plan.previous);
    line.subtotal_fen = Some(price * plan.quantity);
    line.stock_left = Some(sku.stock);
    line.note = price_note(plan.added_price, price);
    let text = match plan.action {
        CartAction::Add => format!(
            "加入购物车：{} ×{}，购物车中 {} → {} 件",
            sku.name,
            plan.quantity - plan.previous,
            plan.previous,
            plan.quantity
        ),
        CartAction::Decrease => format!(
            "减少购物车数量：{}，{} → {} 件",
            sku.name, plan.previous, plan.quantity
        ),
        CartAction::Remove => format!("移出购物车：{}（原 {} 件）", sku.name, plan.previous),
    };
    let mut notes: Vec<Warning> = price_warning(&sku.name, plan.added_price, price)
        .into_iter()
        .collect();
    if let Some(note) = &plan.note {
        notes.push(Warning::note("STOCK_SHORT", note.clone()));
    }
    Ok(Preview {
        summary: summary(text, &plan.blockers),
        lines: vec![line],
        totals: vec![Total::new(
            TotalKind::Cart,
            "仅计可下单的商品",
            plan.cart_after.orderable_total_fen,
        )],
        address: None,
        address_before: None,
        address_choices: Vec::new(),
        warnings: warnings(&plan.blockers, notes),
    })
}

/// `create_order`: the lines at today's prices with the stock they would
/// leave, goods, coupon and amount to pay, and where it would ship; or,
/// when the shop will ask the shopper for the address (`offer`), the saved
/// addresses it will offer instead of one it would not use.
pub fn create_order(
    conn: &UserConn<'_>,
    plan: &OrderPlan,
    offer: Option<&AddressOffer>,
) -> Result<Preview> {
    let mut lines = Vec::with_capacity(plan.lines.len());
    let mut notes = Vec::new();
    for planned in &plan.lines {
        let sku = &planned.sku;
        let added = planned.in_cart.map(|(_, price)| price);
        let mut line = goods_line(conn, &sku.sku_code, &sku.name, planned.quantity)?;
        line.unit_price_fen = Some(sku.price_fen);
        line.subtotal_fen = Some(sku.price_fen * planned.quantity);
        line.stock_left = Some(if sku.stock >= planned.quantity {
            sku.stock - planned.quantity
        } else {
            sku.stock
        });
        line.note = price_note(added, sku.price_fen);
        notes.extend(price_warning(&sku.name, added, sku.price_fen));
        lines.push(line);
    }
    let mut totals = vec![Total::new(TotalKind::Goods, "商品金额", plan.basket.total)];
    if let Some(coupon) = &plan.coupon
        && let Some(discount) = coupon.discount
    {
        totals.push(Total::new(
            TotalKind::Discount,
            format!("{}（{}）", coupon.name, coupon.code),
            -discount,
        ));
    }
    totals.push(Total::new(TotalKind::Pay, "应付", plan.pay()));
    let units: i64 = plan.lines.iter().map(|l| l.quantity).sum();
    Ok(Preview {
        summary: summary(
            format!("提交订单：{units} 件商品，应付 {}", format_rmb(plan.pay())),
            &plan.blockers,
        ),
        lines,
        totals,
        address: match offer {
            Some(_) => None,
            None => plan.receiver.as_ref().map(Address::from),
        },
        address_before: None,
        address_choices: offer
            .map(|offer| {
                offer
                    .addresses
                    .iter()
                    .map(|saved| Address::from(&saved.receiver))
                    .collect()
            })
            .unwrap_or_default(),
        warnings: warnings(&plan.blockers, notes),
    })
}

/// An existing order's lines at the prices bought at; with `restock`, the
/// stock each SKU would have once the order's units come back.
fn order_lines(
    conn: &UserConn<'_>,
    lines: &[OrderLine],
    restock: bool,
) -> Result<Vec<PreviewLine>> {
    lines
        .iter()
        .map(|l| {
            let mut line = goods_line(conn, &l.sku_code, &l.sku_name, l.quantity)?;
            line.unit_price_fen = Some(l.price_fen);
            line.subtotal_fen = Some(l.subtotal_fen);
            line.stock_left = catalog::find_sku(conn, &l.sku_code)?
                .map(|sku| sku.stock + if restock { l.quantity } else { 0 });
            Ok(line)
        })
        .collect()
}

/// The order's goods, and its discount when it has one.
fn order_totals(conn: &UserConn<'_>, order: &OrderView) -> Result<Vec<Total>> {
    let mut totals = vec![Total::new(
        TotalKind::Goods,
        "商品金额",
        order.total_amount_fen,
    )];
    if order.discount_amount_fen != 0 {
        let label = match &order.coupon_code {
            Some(code) => coupons::name_of(conn, code)?.map_or_else(
                || format!("优惠券 {code}"),
                |name| format!("{name}（{code}）"),
            ),
            None => "优惠".to_owned(),
        };
        totals.push(Total::new(
            TotalKind::Discount,
            label,
            -order.discount_amount_fen,
        ));
    }
    Ok(totals)
}

/// `pay_order`: the order and what would be charged.
pub fn pay_order(conn: &UserConn<'_>, plan: &PayPlan) -> Result<Preview> {
    let mut totals = order_totals(conn, &plan.order)?;
    totals.push(Total::new(TotalKind::Pay, "应付", plan.amount));
    Ok(Preview {
        summary: summary(
            format!(
                "支付订单 {}：{}（模拟支付）",
                plan.order.order_no,
                format_rmb(plan.amount)
            ),
            &plan.blockers,
        ),
        lines: order_lines(conn, &plan.order.lines, false)?,
        totals,
        address: None,
        address_before: None,
        address_choices: Vec::new(),
        warnings: warnings(&plan.blockers, Vec::new()),
    })
}

/// `cancel_order`: the order's lines with the stock they give back, the
/// refund when it was paid, and the coupon that comes back.
pub fn cancel_order(conn: &UserConn<'_>, plan: &CancelPlan) -> Result<Preview> {
    let order = &plan.order;
    let text = if plan.refund > 0 {
        format!(
            "取消订单 {}，原路退款 {}",
            order.order_no,
            format_rmb(plan.refund)
        )
    } else {
        format!("取消订单 {}（尚未支付，无需退款）", order.order_no)
    };
    let totals = if plan.refund > 0 {
        vec![Total::new(TotalKind::Refund, "原路退回", plan.refund)]
    } else {
        Vec::new()
    };
    let notes = plan
        .coupon_returned
        .iter()
        .map(|code| {
            Warning::note(
                "COUPON_RETURNED",
                format!("优惠券 {code} 将退回，可再次使用"),
            )
        })
        .collect();
    Ok(Preview {
        summary: summary(text, &plan.blockers),
        lines: order_lines(conn, &order.lines, plan.blockers.is_empty())?,
        totals,
        address: None,
        address_before: None,
        address_choices: Vec::new(),
        warnings: warnings(&plan.blockers, notes),
    })
}

/// `change_address`: the receiver before and after.
pub fn change_address(conn: &UserConn<'_>, plan: &AddressPlan) -> Result<Preview> {
    let before = &plan.order.receiver;
    let after = &plan.receiver;
    Ok(Preview {
        summary: summary(
            format!(
                "修改订单 {} 的收货信息：{} → {}",
                plan.order.order_no, before, after
            ),
            &plan.blockers,
        ),
        lines: order_lines(conn, &plan.order.lines, false)?,
        totals: Vec::new(),
        address: Some(Address::from(after)),
        address_before: Some(Address::from(before)),
        address_choices: Vec::new(),
        warnings: warnings(&plan.blockers, Vec::new()),
    })
}

/// `apply_after_sale`: the line concerned and, for a return, the refund.
pub fn apply_after_sale(conn: &UserConn<'_>, plan: &AfterSalePlan) -> Result<Preview> {
    let line = &plan.line;
    let text = match (plan.kind, plan.refund) {
        (AfterSaleType::ReturnRefund, Some(refund)) => format!(
            "申请退货退款：订单 {} 的 {} ×{}，退款 {}",
            plan.order_no,
            line.sku_name,
            line.quantity,
            format_rmb(refund)
        ),
        _ => format!(
            "申请{}：订单 {} 的 {} ×{}",
            plan.kind.as_str(),
            plan.order_no,
            line.sku_name,
            line.quantity
        ),
    };
    Ok(Preview {
        summary: summary(text, &plan.blockers),
        lines: order_lines(conn, std::slice::from_ref(line), false)?,
        totals: plan
            .refund
            .map(|refund| vec![Total::new(TotalKind::Refund, "退款", refund)])
            .unwrap_or_default(),
        address: None,
        address_before: None,
        address_choices: Vec::new(),
        warnings: warnings(&plan.blockers, Vec::new()),
    })
}

impl fmt::Display for Preview {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "预览（尚未执行）：{}", self.summary)?;
        for line in &self.lines {
            write!(f, "\n- {}", line.name)?;
            if let Some(spec) = &line.spec {
                write!(f, " {spec}")?;
            }
            if let Some(code) = &line.code {
                write!(f, "（{code}）")?;
            }
            match line.quantity_before {
                Some(before) => write!(f, " ×{before} → ×{}", line.quantity)?,
                None => write!(f, " ×{}", line.quantity)?,
            }
            if let Some(price) = line.unit_price_fen {
                write!(f, "｜单价 {}", format_rmb(price))?;
            }
            if let Some(subtotal) = line.subtotal_fen {
                write!(f, "｜小计 {}", format_rmb(subtotal))?;
            }
            if let Some(stock) = line.stock_left {
                write!(f, "｜库存 {stock}")?;
            }
            if let Some(note) = &line.note {
                write!(f, "｜{note}")?;
            }
        }
        for total in &self.totals {
            let label = total.label.as_deref().unwrap_or("金额");
            write!(f, "\n{label}：{}", format_rmb(total.amount_fen))?;
        }
        if let Some(before) = &self.address_before {
            write!(f, "\n原收货信息：{before}")?;
        }
        if let Some(address) = &self.address {
            write!(f, "\n收货信息：{address}")?;
        }
        if !self.address_choices.is_empty() {
            write!(
                f,
                "\n收货信息：未指定，下单时商城会请用户从 {} 个已保存地址中选择：",
                self.address_choices.len()
            )?;
            for choice in &self.address_choices {
                write!(f, "\n- {choice}")?;
            }
        }
        for warning in &self.warnings {
            let tag = if warning.blocking {
                "不能执行"
            } else {
                "注意"
            };
            write!(f, "\n[{tag}] {}", warning.message)?;
            if let Some(hint) = &warning.hint {
                write!(f, "（{hint}）")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}",
            self.receiver_name, self.receiver_phone, self.receiver_address
        )
    }
}
