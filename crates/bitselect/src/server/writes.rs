//! The shop's writes, each declared once in [`WRITES`]: its name and title,
//! its parameters' schema, what it touches, whether sending it again changes
//! nothing more, what it and its preview tell the model, and how it commits
//! and how it is previewed. Each gives the router two tools: the write, and
//! its read-only `preview_<name>` with the same parameters, which the
//! write's definition names in its `_meta`.
//!
//! `submit_ticket` is not here: it has no preview, and it is open world
//! rather than destructive.

use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolResponse, CallToolResult, Extensions, JsonObject, RequestMetaObject, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{ShopServer, Touches, input_schema, write_meta};
use crate::asking;
use crate::error::Result;
use crate::params::{
    ApplyAfterSaleParams, CancelOrderParams, ChangeAddressParams, CreateOrderParams,
    PayOrderParams, UpdateCartItemParams,
};
use crate::preview::Preview;
use crate::shop::{Shop, Written};

type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A call as a write's handlers take it.
pub(super) struct Call {
    pub ext: Extensions,
    /// Whom to ask and how (`asking::may_ask`, `asking::shows_pages`).
    pub context: RequestContext<RoleServer>,
    pub meta: RequestMetaObject,
    /// The answers and the state of an earlier round, when it asked.
    pub answer: Option<(rmcp::model::InputResponses, Option<String>)>,
    pub args: JsonObject,
}

impl Call {
    fn of(context: &mut ToolCallContext<'_, ShopServer>) -> Call {
        let request = &context.request_context;
        let answer = context
            .input_responses
            .take()
            .map(|responses| (responses, context.request_state.take()));
        Call {
            ext: request.extensions.clone(),
            meta: request.meta.clone(),
            // Whole, `_meta` included: whether the client can be asked is read there.
            context: request.clone(),
            answer,
            args: context.arguments.take().unwrap_or_default(),
        }
    }
}

type Commit = for<'a> fn(&'a ShopServer, Call) -> Boxed<'a, CallToolResponse>;
type PreviewFn = for<'a> fn(&'a ShopServer, Call) -> Boxed<'a, CallToolResult>;

/// One write tool.
pub(super) struct WriteTool {
    pub name: &'static str,
    pub title: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// What its preview answers, for the model.
    pub preview_description: &'static str,
    pub touches: Touches,
    /// Sending it again, once done, changes nothing more.
    pub idempotent: bool,
    schema: fn() -> Arc<JsonObject>,
    commit: Commit,
    preview: PreviewFn,
}

/// The writes. Each is destructive: it changes what the shopper has (the
/// cart, an order, the money) in a way that asks for the shopper's yes.
pub(super) const WRITES: [WriteTool; 6] = [
    WriteTool {
        name: "update_cart_item",
        title: "加入/修改购物车",
        description: "修改购物车：action=add 加入 quantity 件（已有则累加，已下架或无货的商品不能加入），decrease 减少 quantity 件（减到 0 即删除），remove 删除整行。返回修改后的购物车。",
        preview_description: "预览修改购物车（只读，不执行）：参数与 update_cart_item 完全相同，返回现在调用 update_cart_item 会做什么：该商品修改前后的数量、现价与小计、购物车修改后的可下单合计，以及不能修改的原因（已下架、无货、超过上限）和价格变动、库存不足的提醒。参数无效或订单、商品不存在时返回与 update_cart_item 相同的错误。",
        touches: Touches::Cart,
        idempotent: false,
        schema: input_schema::<UpdateCartItemParams>,
        commit: |server, call| plain(server, call, Shop::update_cart_item),
        preview: |server, call| preview(server, call, Shop::preview_update_cart_item),
    },
    // It takes the lines out of the cart, reserves stock, uses up the
    // coupon and commits the shopper to pay.
    WriteTool {
        name: "create_order",
        title: "提交订单",
        description: "提交订单：items 中的商品必须已在购物车中且数量足够；在售且库存足够才能下单。下单即锁定库存并从购物车扣除对应数量，订单状态为待支付。可用 couponCode 使用一张优惠券（门槛、有效期、类目都会校验）；收货人三项不填时沿用最近一个订单的收货信息。",
        preview_description: "预览提交订单（只读，不执行）：参数与 create_order 完全相同，返回现在调用 create_order 会做什么：每行商品的名称、规格、现价、数量、小计和下单后剩余库存，商品金额、优惠券优惠和应付金额，收货信息（未填收货人且有多个已保存地址时，下单时商城会请用户选择：此时返回 addressChoices 而不是 address），以及不能下单的原因（库存不足、不在购物车、超过购物车数量、已下架、优惠券不可用、没有收货信息）和加购后价格变动的提醒。参数无效或订单、商品不存在时返回与 create_order 相同的错误。",
        touches: Touches::Money,
        idempotent: false,
        schema: input_schema::<CreateOrderParams>,
        commit: |server, call| Box::pin(server.create_order(call)),
        preview: |server, call| {
            // The preview names the address create_order will use, and a
            // caller that can be asked is asked when several are saved and
            // none named.
            let asks = asking::may_ask(&call.context);
            Box::pin(server.read(
                call.ext,
                call.args,
                move |shop, p: CreateOrderParams| match asks {
                    true => shop.preview_create_order_asking(&p),
                    false => shop.preview_create_order(&p),
                },
            ))
        },
    },
    // It moves the shopper's money.
    WriteTool {
        name: "pay_order",
        title: "支付订单",
        description: "支付订单（模拟支付）：仅限待支付的订单，支付后状态变为已支付待发货。",
        preview_description: "预览支付订单（只读，不执行）：参数与 pay_order 完全相同，返回现在调用 pay_order 会做什么：订单的商品、金额与优惠和将要支付的金额；订单不是待支付时说明不能支付。参数无效或订单、商品不存在时返回与 pay_order 相同的错误。",
        touches: Touches::Money,
        idempotent: true,
        schema: input_schema::<PayOrderParams>,
        commit: |server, call| Box::pin(server.pay_order(call)),
        preview: |server, call| preview(server, call, Shop::preview_pay_order),
    },
    // A paid order is refunded, and the coupon comes back.
    WriteTool {
        name: "cancel_order",
        title: "取消订单",
        description: "取消订单：仅限待支付或已支付待发货（未发货）的订单。取消后库存退回，所用优惠券恢复为未使用，已支付的订单原路退款。已发货的订单不能取消，可在签收后申请售后。",
        preview_description: "预览取消订单（只读，不执行）：参数与 cancel_order 完全相同，返回现在调用 cancel_order 会做什么：订单的商品和取消后的库存、已支付时的退款金额、将退回的优惠券；已发货等不能取消时说明原因。参数无效或订单、商品不存在时返回与 cancel_order 相同的错误。",
        touches: Touches::Money,
        idempotent: true,
        schema: input_schema::<CancelOrderParams>,
        commit: |server, call| plain(server, call, Shop::cancel_order),
        preview: |server, call| preview(server, call, Shop::preview_cancel_order),
    },
    WriteTool {
        name: "change_address",
        title: "修改收货地址",
        description: "修改收货信息：仅限发货前（待支付或已支付待发货）的订单；receiverName、receiverPhone、receiverAddress 填哪项改哪项，至少填一项。",
        preview_description: "预览修改收货信息（只读，不执行）：参数与 change_address 完全相同，返回现在调用 change_address 会做什么：修改前后的收货信息和订单商品；已发货时说明不能修改。参数无效或订单、商品不存在时返回与 change_address 相同的错误。",
        touches: Touches::Address,
        idempotent: true,
        schema: input_schema::<ChangeAddressParams>,
        commit: |server, call| plain(server, call, Shop::change_address),
        preview: |server, call| preview(server, call, Shop::preview_change_address),
    },
    // A return refunds money and changes the order.
    WriteTool {
        name: "apply_after_sale",
        title: "申请售后",
        description: "申请售后：仅限已签收订单中的商品；退货退款须在签收后 7 天内，换货须在签收后 15 天内；同一商品已有处理中的售后单时不能重复申请。",
        preview_description: "预览申请售后（只读，不执行）：参数与 apply_after_sale 完全相同，返回现在调用 apply_after_sale 会做什么：售后的商品、退货退款时的退款金额；未签收、已有处理中的售后单或超过售后期时说明原因。参数无效或订单、商品不存在时返回与 apply_after_sale 相同的错误。",
        touches: Touches::Money,
        idempotent: false,
        schema: input_schema::<ApplyAfterSaleParams>,
        commit: |server, call| plain(server, call, Shop::apply_after_sale),
        preview: |server, call| preview(server, call, Shop::preview_apply_after_sale),
    },
];

/// A write that commits as it is asked: its parameters parsed, run for the
/// call's user with the call's idempotency key.
fn plain<'a, P, T>(
    server: &'a ShopServer,
    call: Call,
    commit: fn(&Shop, &P, Option<&str>) -> Result<Written<T>>,
) -> Boxed<'a, CallToolResponse>
where
    P: DeserializeOwned + Send + 'static,
    T: Serialize + Display + Send + 'static,
{
    Box::pin(async move {
        server
            .write(call.ext, call.meta, call.args, move |shop, p: P, key| {
                commit(shop, &p, key)
            })
            .await
            .into()
    })
}

/// A preview: its parameters parsed, what the write would do now.
fn preview<'a, P>(
    server: &'a ShopServer,
    call: Call,
    preview: fn(&Shop, &P) -> Result<Preview>,
) -> Boxed<'a, CallToolResult>
where
    P: DeserializeOwned + Send + 'static,
{
    Box::pin(server.read(call.ext, call.args, move |shop, p: P| preview(shop, &p)))
}

/// The routes of every write and its preview.
pub(super) fn router() -> ToolRouter<ShopServer> {
    let mut router = ToolRouter::new();
    for write in &WRITES {
        router.add_route(write.route());
        router.add_route(write.preview_route());
    }
    router
}

impl WriteTool {
    pub(super) fn preview_name(&self) -> String {
        format!("preview_{}", self.name)
    }

    fn route(&'static self) -> ToolRoute<ShopServer> {
        let tool = Tool::new(self.name, self.description, (self.schema)())
            .with_title(self.title)
            .with_meta(write_meta(&self.preview_name(), self.touches))
            .with_annotations(
                ToolAnnotations::with_title(self.title)
                    .read_only(false)
                    .destructive(true)
                    .idempotent(self.idempotent)
                    .open_world(false),
            );
        let commit = self.commit;
        ToolRoute::new_dyn(tool, move |mut context| {
            let call = Call::of(&mut context);
            let server = context.service;
            Box::pin(async move { Ok::<_, ErrorData>(commit(server, call).await) })
        })
    }

    fn preview_route(&'static self) -> ToolRoute<ShopServer> {
        let title = format!("预览：{}", self.title);
        let tool = Tool::new(
            self.preview_name(),
            self.preview_description,
            (self.schema)(),
        )
        .with_title(title.clone())
        .with_annotations(
            ToolAnnotations::with_title(title)
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        );
        let preview = self.preview;
        ToolRoute::new_dyn(tool, move |mut context| {
            let call = Call::of(&mut context);
            let server = context.service;
            Box::pin(async move { Ok::<_, ErrorData>(preview(server, call).await.into()) })
        })
    }
}
