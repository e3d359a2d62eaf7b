//! The tools' arguments. Each struct is both the MCP input schema (its
//! `title`s are the labels on the user's confirmation card, its doc comments
//! the descriptions a model reads) and the domain's input.
//!
//! Unknown fields are refused so a misspelt argument is an error, not a
//! silently ignored value the user approved on the card.
//!
//! Every enum value carries a `title` (the card shows "加入购物车", not
//! "add"): schemars then writes the JSON Schema form
//! `"oneOf": [{"const": "add", "title": "加入购物车"}, …]`. The accepted
//! strings are serde's and do not change.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::money::YuanInput;

/// An optional text argument, trimmed; a blank one counts as absent.
pub fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// Most units of one SKU in one cart line or order line.
pub const MAX_QUANTITY: u32 = 99;
/// Most lines in one order.
pub const MAX_ORDER_LINES: usize = 20;
/// Most search results in one answer.
pub const MAX_SEARCH_LIMIT: u32 = 50;
pub const DEFAULT_SEARCH_LIMIT: u32 = 10;
/// Most orders `query_order` lists at once.
pub const MAX_ORDER_LIMIT: u32 = 20;
pub const DEFAULT_ORDER_LIMIT: u32 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum SortOrder {
    #[schemars(title = "相关度")]
    Relevance,
    #[schemars(title = "价格从低到高")]
    PriceAsc,
    #[schemars(title = "价格从高到低")]
    PriceDesc,
    #[schemars(title = "库存从多到少")]
    StockDesc,
}

/// Search the catalogue.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchProductParams {
    /// 关键词：购物者的说法，中英文皆可，例如 "降噪耳机"、"轻薄笔记本"、"iPhone 17 雾蓝色"、"smart watch"；不区分大小写和空格，懂同义词；每个词都须符合。也可以是商品编码或型号编码。
    #[schemars(title = "关键词", length(max = 100))]
    pub keyword: Option<String>,
    /// 一级类目，精确匹配：手机、平板、电脑、智能手表、耳机音频、智能家居、空间计算、配件。
    #[schemars(title = "类目")]
    pub category: Option<String>,
    /// 标签，商品须包含全部所列标签，例如 ["保护壳", "防摔"]。
    #[serde(default)]
    #[schemars(title = "标签")]
    pub tags: Vec<String>,
    /// 最低价（含），单位元，例如 3000。
    #[schemars(title = "最低价（元）")]
    pub min_price: Option<YuanInput>,
    /// 最高价（含），单位元，例如 8000。
    #[schemars(title = "最高价（元）")]
    pub max_price: Option<YuanInput>,
    /// 只返回这些商品编码（SKU），例如 ["MG6W4CH/A"]。
    #[serde(default)]
    #[schemars(title = "商品编码")]
    pub sku_codes: Vec<String>,
    /// 只返回这些型号（SPU）下的商品，例如 ["IPHONE-17"]。
    #[serde(default)]
    #[schemars(title = "型号编码")]
    pub spu_codes: Vec<String>,
    /// 为 true 时只返回在售且有库存的商品。
    #[serde(default)]
    #[schemars(title = "仅看有货")]
    pub in_stock_only: bool,
    /// 排序：relevance 相关度、price_asc 价格从低到高、price_desc 价格从高到低、stock_desc 库存从多到少；不填时有关键词按相关度，否则按价格从低到高。
    #[schemars(title = "排序")]
    pub sort: Option<SortOrder>,
    /// 最多返回多少个型号（每个型号含其配置），1 到 50，默认 10。
    #[schemars(title = "返回数量", range(min = 1, max = 50))]
    pub limit: Option<u32>,
}

/// No arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryCartParams {}

/// Try the user's coupons against amounts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueryCouponsParams {
    /// 订单商品总金额，单位元。不填且不填 categoryAmounts 时，按当前购物车中可下单的商品试算。
    #[schemars(title = "总金额（元）")]
    pub amount: Option<YuanInput>,
    /// 各类目的商品金额，单位元，例如 {"手机": 6799, "配件": 399}。类目券只看本类目金额。
    #[serde(default)]
    #[schemars(title = "各类目金额（元）")]
    pub category_amounts: BTreeMap<String, YuanInput>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub enum OrderStatus {
    #[serde(rename = "待支付")]
    #[schemars(title = "待支付")]
    Pending,
    #[serde(rename = "已支付待发货")]
    #[schemars(title = "已支付待发货")]
    Paid,
    #[serde(rename = "已发货")]
    #[schemars(title = "已发货")]
    Shipped,
    #[serde(rename = "已签收")]
    #[schemars(title = "已签收")]
    Delivered,
    #[serde(rename = "已取消")]
    #[schemars(title = "已取消")]
    Cancelled,
}

impl OrderStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "待支付",
            Self::Paid => "已支付待发货",
            Self::Shipped => "已发货",
            Self::Delivered => "已签收",
            Self::Cancelled => "已取消",
        }
    }
}

/// One order in full, or the most recent few.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueryOrderParams {
    /// 订单号，例如 "88231"。不填则按下单时间倒序列出最近的订单。
    #[schemars(title = "订单号", length(max = 32))]
    pub order_no: Option<String>,
    /// 只列出该状态的订单（不填订单号时有效）。
    #[schemars(title = "订单状态")]
    pub status: Option<OrderStatus>,
    /// 最多列出多少个订单，1 到 20，默认 5。
    #[schemars(title = "返回数量", range(min = 1, max = 20))]
    pub limit: Option<u32>,
}

/// A parcel's trace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueryLogisticsParams {
    /// 运单号，例如 "BIT9100000234"，只能是您订单上的运单号（见 query_order 的 trackingNo）。
    #[schemars(title = "运单号", length(max = 40))]
    pub tracking_no: Option<String>,
    /// 订单号；不知道运单号时可按订单查询其物流。
    #[schemars(title = "订单号", length(max = 32))]
    pub order_no: Option<String>,
}

/// After-sale progress.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueryAfterSaleParams {
    /// 售后单号，例如 "AS88232001"。
    #[schemars(title = "售后单号", length(max = 40))]
    pub after_sale_no: Option<String>,
    /// 订单号：列出该订单的全部售后单。两者都不填时列出全部售后单。
    #[schemars(title = "订单号", length(max = 32))]
    pub order_no: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum CartAction {
    #[schemars(title = "加入购物车")]
    Add,
    #[schemars(title = "减少数量")]
    Decrease,
    #[schemars(title = "移出购物车")]
    Remove,
}

/// Change one cart line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateCartItemParams {
    /// 商品编码（SKU），例如 "MG6W4CH/A"，可用 search_product 查询。
    #[schemars(title = "商品编码", length(min = 1, max = 40))]
    pub sku_code: String,
    /// add 加入（已有则增加数量）、decrease 减少数量（减到 0 即删除该行）、remove 删除整行。
    #[schemars(title = "操作")]
    pub action: CartAction,
    /// 加入或减少的件数，1 到 99；add 和 decrease 必填，remove 不需要。
    #[schemars(title = "数量", range(min = 1, max = 99))]
    pub quantity: Option<u32>,
}

/// 一行要购买的商品。
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(inline)]
pub struct OrderItemInput {
    /// 购物车中的商品编码（SKU）。
    #[schemars(title = "商品编码", length(min = 1, max = 40))]
    pub sku_code: String,
    /// 购买件数，1 到 99，不能超过购物车中的数量。
    #[schemars(title = "数量", range(min = 1, max = 99))]
    pub quantity: u32,
}

/// Place an order from cart lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateOrderParams {
    /// 要购买的商品，必须已在购物车中且数量足够，下单后从购物车扣除。
    #[schemars(title = "商品", length(min = 1, max = 20))]
    pub items: Vec<OrderItemInput>,
    /// 要使用的优惠券码（可先用 query_coupons 试算），不填则不用券。
    #[schemars(title = "优惠券", length(max = 40))]
    pub coupon_code: Option<String>,
    /// 收货人姓名；不填则沿用最近一个订单的收货人。
    #[schemars(title = "收货人", length(max = 20))]
    pub receiver_name: Option<String>,
    /// 收货人手机号；不填则沿用最近一个订单的。
    #[schemars(title = "手机号", length(max = 20))]
    pub receiver_phone: Option<String>,
    /// 收货地址；不填则沿用最近一个订单的。
    #[schemars(title = "收货地址", length(max = 120))]
    pub receiver_address: Option<String>,
}

/// Pay an order (simulated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PayOrderParams {
    /// 待支付订单的订单号。
    #[schemars(title = "订单号", length(min = 1, max = 32))]
    pub order_no: String,
}

/// Cancel an order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CancelOrderParams {
    /// 要取消的订单号，仅限待支付或已支付待发货的订单。
    #[schemars(title = "订单号", length(min = 1, max = 32))]
    pub order_no: String,
    /// 取消原因（可选）。
    #[schemars(title = "取消原因", length(max = 200))]
    pub reason: Option<String>,
}

/// Change an order's receiver before it ships.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangeAddressParams {
    /// 订单号，仅限发货前（待支付或已支付待发货）的订单。
    #[schemars(title = "订单号", length(min = 1, max = 32))]
    pub order_no: String,
    /// 新的收货人姓名；不填则不变。
    #[schemars(title = "收货人", length(max = 20))]
    pub receiver_name: Option<String>,
    /// 新的手机号；不填则不变。
    #[schemars(title = "手机号", length(max = 20))]
    pub receiver_phone: Option<String>,
    /// 新的收货地址；不填则不变。三项至少填一项。
    #[schemars(title = "收货地址", length(max = 120))]
    pub receiver_address: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub enum AfterSaleType {
    #[serde(rename = "退货退款", alias = "return_refund")]
    #[schemars(title = "退货退款")]
    ReturnRefund,
    #[serde(rename = "换货", alias = "exchange")]
    #[schemars(title = "换货")]
    Exchange,
}

impl AfterSaleType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReturnRefund => "退货退款",
            Self::Exchange => "换货",
        }
    }
}

/// Ask for a return or an exchange.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplyAfterSaleParams {
    /// 已签收订单的订单号。
    #[schemars(title = "订单号", length(min = 1, max = 32))]
    pub order_no: String,
    /// 该订单中要售后的商品编码（SKU）。
    #[schemars(title = "商品编码", length(min = 1, max = 40))]
    pub sku_code: String,
    /// 退货退款：签收后 7 天内；换货：签收后 15 天内。
    #[serde(rename = "type")]
    #[schemars(title = "售后类型")]
    pub kind: AfterSaleType,
    /// 申请原因，2 到 200 字。
    #[schemars(title = "原因", length(min = 2, max = 200))]
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub enum TicketTopic {
    #[serde(rename = "订单问题")]
    #[schemars(title = "订单问题")]
    Order,
    #[serde(rename = "物流问题")]
    #[schemars(title = "物流问题")]
    Logistics,
    #[serde(rename = "售后问题")]
    #[schemars(title = "售后问题")]
    AfterSale,
    #[serde(rename = "商品咨询")]
    #[schemars(title = "商品咨询")]
    Product,
    #[serde(rename = "优惠券问题")]
    #[schemars(title = "优惠券问题")]
    Coupon,
    #[serde(rename = "其他")]
    #[schemars(title = "其他")]
    Other,
}

impl TicketTopic {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Order => "订单问题",
            Self::Logistics => "物流问题",
            Self::AfterSale => "售后问题",
            Self::Product => "商品咨询",
            Self::Coupon => "优惠券问题",
            Self::Other => "其他",
        }
    }
}

/// Hand the conversation over to a human agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubmitTicketParams {
    /// 问题类别，不填为「其他」。
    #[schemars(title = "问题类别")]
    pub topic: Option<TicketTopic>,
    /// 相关订单号（可选）。
    #[schemars(title = "订单号", length(max = 32))]
    pub order_no: Option<String>,
    /// 问题描述，写清发生了什么、用户希望怎样处理，5 到 500 字。
    #[schemars(title = "问题描述", length(min = 5, max = 500))]
    pub description: String,
}
