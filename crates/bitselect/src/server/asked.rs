//! The tool calls that may ask the shopper mid-call (MCP 2026-07-28
//! `input_required`, see [`crate::asking`]): `create_order`'s choice of
//! saved address and `pay_order`'s confirmation. Each first round asks and
//! changes nothing; the call sent again with the answer goes on.

use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, Extensions, InputResponses, JsonObject,
    RequestMetaObject,
};

use super::{ShopServer, failure, idempotency_key, parse, success};
use crate::addresses::AddressOffer;
use crate::asking::{self, AddressAnswer, PageAnswer, PageRound, PaymentAnswer};
use crate::error::{Refusal, ShopError};
use crate::orders::OrderView;
use crate::params::{CreateOrderParams, PayOrderParams};
use crate::payment_pages::PAY_PAGE_PREFIX;
use crate::payment_pages::{PageState, PaymentPage};
use crate::preview::{Preview, TotalKind};
use crate::shop::Written;

/// What `create_order`'s first round found to do.
enum AddressRound {
    /// The call's key placed an order already: that order, again.
    Placed(Box<Written<OrderView>>),
    Ask(AddressOffer),
    /// Nothing to ask: the call runs as it would for any client.
    Unasked,
}

impl ShopServer {
    /// `create_order`'s first round for a client that can be asked: with
    /// more than one saved address and none named, it asks which one.
    /// Otherwise, or when the order would be refused anyway, it runs as
    /// before; a call whose key placed an order already gets that order.
    pub(super) async fn ask_for_address(
        &self,
        ext: Extensions,
        meta: RequestMetaObject,
        args: JsonObject,
    ) -> CallToolResponse {
        let parsed = idempotency_key(&meta)
            .and_then(|key| Ok((key, parse::<CreateOrderParams>(args.clone())?)));
        let (key, p) = match parsed {
            Ok(parsed) => parsed,
            Err(error) => return failure(&error).into(),
        };
        let asked = self
            .domain(&ext, move |shop| {
                if let Some(key) = &key
                    && let Some(first) = shop.replay("create_order", &p, key)?
                {
                    return Ok(AddressRound::Placed(Box::new(first)));
                }
                Ok(match shop.address_offer(&p)? {
                    Some(offer) => AddressRound::Ask(offer),
                    None => AddressRound::Unasked,
                })
            })
            .await;
        match asked {
            Err(error) => failure(&error).into(),
            Ok(AddressRound::Placed(first)) => success(*first).into(),
            Ok(AddressRound::Ask(offer)) => match asking::address_question(&offer) {
                Ok(question) => question.into(),
                Err(error) => failure(&error).into(),
            },
            Ok(AddressRound::Unasked) => self.create(ext, meta, args).await.into(),
        }
    }

    /// `create_order` sent again with the shopper's choice of address:
    /// placed there (accept), or no order at all (decline, cancel).
    pub(super) async fn create_as_answered(
        &self,
        ext: Extensions,
        meta: RequestMetaObject,
        args: JsonObject,
        responses: &InputResponses,
        state: Option<&str>,
    ) -> CallToolResponse {
        match asking::address_answer(responses, state) {
            Err(error) => failure(&error).into(),
            Ok(AddressAnswer::Chosen(address_id)) => self
                .write(ext, meta, args, move |shop, p: CreateOrderParams, key| {
                    shop.create_order_to(&p, &address_id, key)
                })
                .await
                .into(),
            Ok(AddressAnswer::Declined) => {
                nothing_done("用户没有选择收货地址，未下单：购物车、库存和优惠券都没有变化。")
            }
            Ok(AddressAnswer::Cancelled) => {
                nothing_done("用户取消了下单，未下单：购物车、库存和优惠券都没有变化。")
            }
        }
    }

    /// What paying the order would charge now, when it can be paid.
    async fn amount_to_pay(&self, ext: &Extensions, p: &PayOrderParams) -> Option<i64> {
        let p = p.clone();
        let preview: Preview = self
            .domain(ext, move |shop| shop.preview_pay_order(&p))
            .await
            .ok()?;
        if preview.warnings.iter().any(|w| w.blocking) {
            return None;
        }
        preview
            .totals
            .iter()
            .find(|t| t.kind == TotalKind::Pay)
            .map(|t| t.amount_fen)
    }

    /// `pay_order` for a client that can be asked: the first call asks the
    /// shopper to confirm the amount and choose how to pay; the call sent
    /// again with the answer pays (accept) or leaves the order unpaid.
    pub(super) async fn pay_after_asking(
        &self,
        ext: Extensions,
        meta: RequestMetaObject,
        args: JsonObject,
        answer: Option<(InputResponses, Option<String>)>,
    ) -> CallToolResponse {
        let p: PayOrderParams = match parse(args.clone()) {
            Ok(p) => p,
            Err(error) => return failure(&error).into(),
        };
        let Some((responses, state)) = answer else {
            // An order that cannot be paid is refused as before, unasked.
            let question = match self.amount_to_pay(&ext, &p).await {
                Some(amount) => asking::payment_question(&p.order_no, amount),
                None => return self.pay(ext, meta, args).await.into(),
            };
            return match question {
                Ok(question) => question.into(),
                Err(error) => failure(&error).into(),
            };
        };
        match asking::payment_answer(&p.order_no, &responses, state.as_deref()) {
            Err(error) => failure(&error).into(),
            Ok(PaymentAnswer::Declined) => nothing_done(&format!(
                "用户没有确认支付，订单 {} 仍为待支付，未扣款。",
                p.order_no
            )),
            Ok(PaymentAnswer::Cancelled) => nothing_done(&format!(
                "用户取消了支付，订单 {} 仍为待支付，未扣款。",
                p.order_no
            )),
            Ok(PaymentAnswer::Pay { method, confirmed }) => {
                let now = self.amount_to_pay(&ext, &p).await;
                if now.is_some() && now != Some(confirmed) {
                    return failure(&ShopError::invalid(
                        "amount",
                        "应付金额与用户确认的金额不同，未扣款。请重新调用 pay_order，让用户确认新的金额",
                    ))
                    .into();
                }
                let mut paid = self.pay(ext, meta, args).await;
                if paid.is_error != Some(true) {
                    paid.content
                        .push(ContentBlock::text(format!("支付方式：{}", method.title())));
                }
                paid.into()
            }
        }
    }

    /// `pay_order` in the online shop for a client that shows pages: the
    /// first call opens a payment page and sends the shopper there; the
    /// call sent again pays only if the page was paid on, else sends the
    /// shopper back (a new page once the last expired). Decline or cancel
    /// leave the order unpaid.
    pub(super) async fn pay_on_page(
        &self,
        ext: Extensions,
        meta: RequestMetaObject,
        args: JsonObject,
        answer: Option<(InputResponses, Option<String>)>,
        origin: &str,
    ) -> CallToolResponse {
        let p: PayOrderParams = match parse(args.clone()) {
            Ok(p) => p,
            Err(error) => return failure(&error).into(),
        };
        let Some((responses, state)) = answer else {
            return self
                .send_to_new_page(ext, meta, args, p, origin, PageRound::First)
                .await;
        };
        let page_id = match asking::page_answer(&p.order_no, &responses, state.as_deref()) {
            Err(error) => return failure(&error).into(),
            Ok(PageAnswer::Declined) => {
                return nothing_done(&format!(
                    "用户没有去支付页面付款，订单 {} 仍为待支付，未扣款。",
                    p.order_no
                ));
            }
            Ok(PageAnswer::Cancelled) => {
                return nothing_done(&format!(
                    "用户取消了支付，订单 {} 仍为待支付，未扣款。",
                    p.order_no
                ));
            }
            Ok(PageAnswer::Visited { page_id }) => page_id,
        };
        let looked_up = page_id.clone();
        let state = self
            .domain(&ext, move |shop| shop.payment_page_state(&looked_up))
            .await;
        match state {
            Err(error) => failure(&error).into(),
            Ok(PageState::Missing) => failure(&Refusal::UnknownPaymentPage.into()).into(),
            Ok(PageState::Waiting { expired: true, .. }) => {
                self.send_to_new_page(ext, meta, args, p, origin, PageRound::Expired)
                    .await
            }
            Ok(PageState::Waiting { page, .. }) => {
                page_question_or_failure(&page, origin, PageRound::NotPaidYet)
            }
            Ok(PageState::Paid(_)) => {
                let mut paid = self
                    .write(ext, meta, args, move |shop, p: PayOrderParams, key| {
                        shop.pay_order_on_page(&p, &page_id, key)
                    })
                    .await;
                if paid.is_error != Some(true) {
                    paid.content
                        .push(ContentBlock::text("支付方式：比特严选收银台（支付页面）"));
                }
                paid.into()
            }
        }
    }

    /// Opens a page for what the order costs now and sends the shopper
    /// there; an order that cannot be paid is refused as before, unasked.
    async fn send_to_new_page(
        &self,
        ext: Extensions,
        meta: RequestMetaObject,
        args: JsonObject,
        p: PayOrderParams,
        origin: &str,
        round: PageRound,
    ) -> CallToolResponse {
        let Some(amount) = self.amount_to_pay(&ext, &p).await else {
            return self.pay(ext, meta, args).await.into();
        };
        let opened = self
            .domain(&ext, move |shop| {
                shop.open_payment_page(&p.order_no, amount)
            })
            .await;
        match opened {
            Ok(page) => page_question_or_failure(&page, origin, round),
            Err(error) => failure(&error).into(),
        }
    }
}

/// A call the shopper's answer ended without doing anything, saying so.
fn nothing_done(text: &str) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text)]).into()
}

/// The request that sends the shopper to `page` at `origin`.
fn page_question_or_failure(
    page: &PaymentPage,
    origin: &str,
    round: PageRound,
) -> CallToolResponse {
    let url = format!("{origin}{PAY_PAGE_PREFIX}{}", page.id);
    match asking::page_question(page, &url, round) {
        Ok(question) => question.into(),
        Err(error) => failure(&error).into(),
    }
}
