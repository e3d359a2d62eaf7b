//! The shop's typed errors. Every message (`Display`) is written for the
//! model that reads it: it names the offending code or value and says what
//! to do next. The shopper's own sentence and the model's next step, apart,
//! are in [`crate::shopper_words`].

use crate::money::Yuan;

/// Everything a shop call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ShopError {
    /// A business rule said no. Nothing was changed.
    #[error("{0}")]
    Refused(#[from] Refusal),
    /// An argument is malformed or out of range. Nothing was changed.
    #[error("参数 {field} 无效：{message}")]
    InvalidArgument { field: String, message: String },
    #[error("数据库错误：{0}")]
    Database(#[from] rusqlite::Error),
    #[cfg(feature = "service")]
    #[error("数据库错误：{}", postgres_detail(.0))]
    Postgres(#[from] tokio_postgres::Error),
    /// The database could not be reached or set up.
    #[error("数据库不可用：{0}")]
    Store(String),
    /// The database is out of reach for now (restarting, connection lost)
    /// or the shop is too busy to wait for it: the call's transaction did
    /// not commit, unless the connection broke at the commit, and then its
    /// idempotency key tells. Worth sending again, with the same key.
    #[error("商城暂时无法办理（{0}）。请稍后再试；写操作请用同一个幂等键重发，不会重复办理")]
    Unavailable(String),
    #[error("无法使用数据目录 {path}：{source}")]
    DataDir {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("内置种子数据无法解析（{file}）：{message}")]
    Seed { file: &'static str, message: String },
    #[error("数据不一致：{0}")]
    Corrupt(String),
    /// The catalogue's search index could not be built or read.
    #[error("搜索索引出错：{0}")]
    Search(String),
    #[error("结果编码失败：{0}")]
    Encode(#[from] serde_json::Error),
    /// A server that acts for each request's user got a request with none.
    #[error("未登录：这个请求没有经过认证的用户，商城不知道为谁办理。请先登录再试")]
    Unauthenticated,
    /// The operating system gave no random bytes (for a payment page's id).
    #[error("系统随机数不可用：{0}")]
    Random(String),
    /// The merchant's signing key could not be made, read or used.
    #[error("商家签名出错：{0}")]
    Signing(String),
}

/// PostgreSQL's own words and code where the server sent an error (the
/// driver's `Display` says only "db error"); the driver's otherwise.
#[cfg(feature = "service")]
fn postgres_detail(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => error.to_string(),
    }
}

impl ShopError {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::InvalidArgument {
            field: field.into(),
            message: message.into(),
        }
    }

    /// A stable, machine-readable code for structured error results.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Refused(refusal) => refusal.code(),
            Self::InvalidArgument { .. } => "INVALID_ARGUMENT",
            Self::Unauthenticated => "UNAUTHENTICATED",
            Self::Unavailable(_) => "UNAVAILABLE",
            #[cfg(feature = "service")]
            Self::Postgres(_) => "INTERNAL",
            Self::Database(_)
            | Self::Store(_)
            | Self::DataDir { .. }
            | Self::Seed { .. }
            | Self::Corrupt(_)
            | Self::Search(_)
            | Self::Encode(_)
            | Self::Random(_)
            | Self::Signing(_) => "INTERNAL",
        }
    }

    /// True when the caller's request was at fault (a refusal or a bad
    /// argument), false for failures of the shop itself.
    pub fn is_caller_error(&self) -> bool {
        matches!(
            self,
            Self::Refused(_) | Self::InvalidArgument { .. } | Self::Unauthenticated
        )
    }
}

impl From<tantivy::TantivyError> for ShopError {
    fn from(error: tantivy::TantivyError) -> Self {
        Self::Search(error.to_string())
    }
}

impl From<CouponRefusal> for Refusal {
    fn from(reason: CouponRefusal) -> Self {
        Self::Coupon(reason)
    }
}

impl From<CouponRefusal> for ShopError {
    fn from(reason: CouponRefusal) -> Self {
        Self::Refused(Refusal::Coupon(reason))
    }
}

/// The business rules' refusals.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("商品编码 {sku} 不存在，请先用 search_product 查到正确的 skuCode")]
    UnknownSku { sku: String },
    #[error("{name}（{sku}）已下架，不能加入购物车或下单；可用 search_product 查找在售的其他配置")]
    Delisted { sku: String, name: String },
    #[error(
        "{name}（{sku}）暂时无货（库存 0），不能加入购物车或下单；可用 search_product 查找有货的其他配置"
    )]
    OutOfStock { sku: String, name: String },
    #[error("{name}（{sku}）库存不足：需要 {requested} 件，仅剩 {stock} 件；请减少数量")]
    InsufficientStock {
        sku: String,
        name: String,
        requested: i64,
        stock: i64,
    },
    #[error("购物车中没有 {sku}，请先调用 update_cart_item（action=add）加入购物车")]
    NotInCart { sku: String, name: String },
    #[error(
        "购物车中 {sku} 只有 {in_cart} 件，不足下单数量 {requested} 件；请先用 update_cart_item 增加数量，或减少下单数量"
    )]
    CartShort {
        sku: String,
        name: String,
        in_cart: i64,
        requested: i64,
    },
    #[error("购物车中 {sku} 将达到 {would_be} 件，超过单个商品上限 {max} 件")]
    CartLineLimit {
        sku: String,
        name: String,
        would_be: i64,
        max: i64,
    },
    #[error(
        "购物车中 {sku} 只有 {in_cart} 件，不能减少 {requested} 件；要删除整行请用 action=remove"
    )]
    DecreaseTooMuch {
        sku: String,
        name: String,
        in_cart: i64,
        requested: i64,
    },
    #[error("下单商品中 {sku} 出现了不止一次，请合并为一行并写明总数量")]
    DuplicateItem { sku: String },
    #[error("没有找到订单 {order_no}，请用 query_order 查看您的订单号")]
    UnknownOrder { order_no: String },
    /// A checkout session of the commerce standard that the user does not
    /// have (or that has expired and gone).
    #[error("没有找到结账会话 {id}，请重新创建结账")]
    UnknownCheckout { id: String },
    /// A device key the shop will not bind to the user, and why.
    #[error("设备密钥无法绑定：{reason}")]
    DeviceBindingRefused { reason: String },
    /// A checkout completion whose mandate does not prove the shopper's
    /// consent to exactly this checkout.
    #[error("{0}")]
    Mandate(MandateRefusal),
    /// A checkout completion asked while something still stands between
    /// the checkout and an order (its messages say what).
    #[error("结账会话 {id} 还不能完成：{reason}")]
    CheckoutNotReady { id: String, reason: String },
    /// A device key the user does not have bound.
    #[error("没有找到设备密钥 {id}")]
    UnknownDevice { id: String },
    /// A cart id that is not the user's cart.
    #[error("没有找到购物车 {id}；每位用户只有一个购物车，请用 get_cart 取得它的编号")]
    UnknownCart { id: String },
    /// A checkout session already completed or canceled: it does not change.
    #[error("结账会话 {id} 已{status}，不能再{action}；需要时请重新创建结账")]
    CheckoutClosed {
        id: String,
        status: &'static str,
        action: &'static str,
    },
    #[error("订单 {order_no} 当前状态为「{status}」，{action}仅限状态为 {allowed} 的订单")]
    OrderStatus {
        order_no: String,
        status: String,
        action: &'static str,
        allowed: &'static str,
    },
    #[error("您没有优惠券 {code}，请用 query_coupons 查看您持有的优惠券")]
    CouponNotHeld { code: String },
    #[error("{0}")]
    Coupon(CouponRefusal),
    #[error("订单 {order_no} 中没有商品 {sku}，请用 query_order 查看该订单的商品编码")]
    NotInOrder { order_no: String, sku: String },
    #[error(
        "订单 {order_no} 的商品 {sku} 已有处理中的售后单 {after_sale_no}，处理完成前不能重复申请；可用 query_after_sale 查看进度"
    )]
    AfterSaleInProgress {
        order_no: String,
        sku: String,
        name: String,
        after_sale_no: String,
    },
    #[error(
        "订单 {order_no} 已超过{window}（签收于 {received_at}，截止 {deadline}）；{}",
        match .exchange_until {
            Some(until) => format!("仍可在 {until} 前申请换货（type=换货）"),
            None => "如商品有质量问题，可用 submit_ticket 转人工客服".to_owned(),
        }
    )]
    AfterSaleWindowClosed {
        order_no: String,
        window: &'static str,
        received_at: String,
        deadline: String,
        /// A return refused while an exchange is still open: until when.
        exchange_until: Option<String>,
    },
    #[error("没有找到售后单 {after_sale_no}，请用 query_after_sale（按 orderNo）查看售后单号")]
    UnknownAfterSale { after_sale_no: String },
    #[error(
        "运单号 {tracking_no} 不属于您的任何订单，只能查询您订单上的运单号；可先用 query_order 查看订单的运单号"
    )]
    UnknownTracking { tracking_no: String },
    #[error("订单 {order_no} 当前状态为「{status}」，尚未发货，还没有物流信息")]
    NotShipped { order_no: String, status: String },
    #[error(
        "没有历史订单可作为默认收货信息，请提供 receiverName、receiverPhone 和 receiverAddress"
    )]
    NoDefaultReceiver,
    #[error(
        "所选的收货地址（{address_id}）已不在您保存的地址中，请重新调用 create_order 再选一次，或直接提供 receiverName、receiverPhone 和 receiverAddress"
    )]
    UnknownSavedAddress { address_id: String },
    #[error("这个支付页面不存在或不属于您，未扣款；请重新调用 pay_order 发起支付")]
    UnknownPaymentPage,
    #[error("未知类目「{category}」，可选类目：{known}")]
    UnknownCategory { category: String, known: String },
    #[error("幂等键 {key} 已用于另一次参数不同的调用（{tool}）；新的写操作请使用新的幂等键")]
    IdempotencyConflict { key: String, tool: String },
}

impl Refusal {
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownSku { .. } => "UNKNOWN_SKU",
            Self::Delisted { .. } => "SKU_DELISTED",
            Self::OutOfStock { .. } => "OUT_OF_STOCK",
            Self::InsufficientStock { .. } => "INSUFFICIENT_STOCK",
            Self::NotInCart { .. } => "NOT_IN_CART",
            Self::CartShort { .. } => "CART_QUANTITY_SHORT",
            Self::CartLineLimit { .. } => "CART_LINE_LIMIT",
            Self::DecreaseTooMuch { .. } => "DECREASE_TOO_MUCH",
            Self::DuplicateItem { .. } => "DUPLICATE_ITEM",
            Self::UnknownOrder { .. } => "UNKNOWN_ORDER",
            Self::UnknownCheckout { .. } => "UNKNOWN_CHECKOUT",
            Self::UnknownCart { .. } => "UNKNOWN_CART",
            Self::DeviceBindingRefused { .. } => "DEVICE_BINDING_REFUSED",
            Self::Mandate(reason) => reason.code(),
            Self::CheckoutNotReady { .. } => "CHECKOUT_NOT_READY",
            Self::UnknownDevice { .. } => "UNKNOWN_DEVICE",
            Self::CheckoutClosed { .. } => "CHECKOUT_CLOSED",
            Self::OrderStatus { .. } => "ORDER_STATUS",
            Self::CouponNotHeld { .. } => "COUPON_NOT_HELD",
            Self::Coupon(reason) => reason.code(),
            Self::NotInOrder { .. } => "NOT_IN_ORDER",
            Self::AfterSaleInProgress { .. } => "AFTER_SALE_IN_PROGRESS",
            Self::AfterSaleWindowClosed { .. } => "AFTER_SALE_WINDOW_CLOSED",
            Self::UnknownAfterSale { .. } => "UNKNOWN_AFTER_SALE",
            Self::UnknownTracking { .. } => "UNKNOWN_TRACKING_NO",
            Self::NotShipped { .. } => "NOT_SHIPPED",
            Self::NoDefaultReceiver => "NO_DEFAULT_RECEIVER",
            Self::UnknownSavedAddress { .. } => "UNKNOWN_SAVED_ADDRESS",
            Self::UnknownPaymentPage => "UNKNOWN_PAYMENT_PAGE",
            Self::UnknownCategory { .. } => "UNKNOWN_CATEGORY",
            Self::IdempotencyConflict { .. } => "IDEMPOTENCY_CONFLICT",
        }
    }
}

pub type Result<T, E = ShopError> = std::result::Result<T, E>;

/// The refusals a write's plan found, in the order the write checks them.
/// The write refuses with the first; a preview shows them all, so the card
/// says every reason the call would not go through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blockers(Vec<Refusal>);

impl Blockers {
    pub fn push(&mut self, refusal: impl Into<Refusal>) {
        self.0.push(refusal.into());
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Refusal> {
        self.0.iter()
    }

    /// Ok when nothing blocks the write, else the refusal it answers with.
    pub fn check(&self) -> Result<()> {
        match self.0.first() {
            Some(refusal) => Err(refusal.clone().into()),
            None => Ok(()),
        }
    }
}

/// Why a checkout mandate is not accepted; each is one of the AP2
/// extension's error codes ([`MandateRefusal::ucp_code`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MandateRefusal {
    #[error("完成结账需要用户签署的授权（ap2.checkout_mandate），请求里没有")]
    Required,
    #[error("授权的签名无法验证：{0}")]
    InvalidSignature(String),
    #[error("授权已过期，请让用户重新确认")]
    Expired,
    #[error("授权对应的不是这次结账的当前条款：{0}；请取回结账、让用户重新确认")]
    ScopeMismatch(String),
    #[error("授权里的结账不是本商城签发的：{0}")]
    MerchantAuthorizationInvalid(String),
    #[error("这份授权已经用过一次，不能再用")]
    Replayed,
}

impl MandateRefusal {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Required => "MANDATE_REQUIRED",
            Self::InvalidSignature(_) => "MANDATE_INVALID_SIGNATURE",
            Self::Expired => "MANDATE_EXPIRED",
            Self::ScopeMismatch(_) => "MANDATE_SCOPE_MISMATCH",
            Self::MerchantAuthorizationInvalid(_) => "MERCHANT_AUTHORIZATION_INVALID",
            Self::Replayed => "MANDATE_REPLAYED",
        }
    }

    /// The AP2 extension's code for it (`mandate_replayed` is the shop's
    /// own: the extension lists none for a replay).
    pub fn ucp_code(&self) -> &'static str {
        match self {
            Self::Required => "mandate_required",
            Self::InvalidSignature(_) => "mandate_invalid_signature",
            Self::Expired => "mandate_expired",
            Self::ScopeMismatch(_) => "mandate_scope_mismatch",
            Self::MerchantAuthorizationInvalid(_) => "merchant_authorization_invalid",
            Self::Replayed => "mandate_replayed",
        }
    }
}

impl From<MandateRefusal> for ShopError {
    fn from(reason: MandateRefusal) -> Self {
        Self::Refused(Refusal::Mandate(reason))
    }
}

/// Why a held coupon cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CouponRefusal {
    #[error("优惠券 {code} 不可用：已在订单 {order_no} 使用过")]
    AlreadyUsed { code: String, order_no: String },
    #[error("优惠券 {code} 不可用：{from} 才开始生效")]
    NotYetValid { code: String, from: String },
    #[error("优惠券 {code} 不可用：已于 {to} 过期；请改用其他券或不用券")]
    Expired { code: String, to: String },
    #[error("优惠券 {code} 不可用：仅限「{category}」类商品，而这次没有该类商品")]
    NoEligibleCategory { code: String, category: String },
    #[error("优惠券 {code} 不可用：金额为 0")]
    NothingToDiscount { code: String },
    #[error(
        "优惠券 {code} 不可用：{basis}为 {eligible} 元，未达到使用门槛 {threshold} 元（还差 {missing} 元）"
    )]
    BelowThreshold {
        code: String,
        basis: String,
        eligible: Yuan,
        threshold: Yuan,
        missing: Yuan,
    },
}

impl CouponRefusal {
    pub fn code(&self) -> &'static str {
        match self {
            Self::AlreadyUsed { .. } => "COUPON_USED",
            Self::NotYetValid { .. } => "COUPON_NOT_YET_VALID",
            Self::Expired { .. } => "COUPON_EXPIRED",
            Self::NoEligibleCategory { .. } => "COUPON_CATEGORY_MISMATCH",
            Self::NothingToDiscount { .. } => "COUPON_NOTHING_TO_DISCOUNT",
            Self::BelowThreshold { .. } => "COUPON_BELOW_THRESHOLD",
        }
    }
}
