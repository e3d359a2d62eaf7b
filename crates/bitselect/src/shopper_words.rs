//! Two voices for one refusal. The shopper reads a sentence about the goods
//! and the order, with names rather than SKU codes and no tool or argument
//! names (`for_shopper`); the model also gets its next step (`hint`), and
//! its own full message stays the error's `Display`. A tool error's
//! structured content and a preview's warnings carry both, so a client
//! shows the first to the shopper and gives the model the rest.

use crate::error::{CouponRefusal, MandateRefusal};
use crate::error::{Refusal, ShopError};

impl MandateRefusal {
    /// What happened, for the shopper.
    pub fn for_shopper(&self) -> String {
        match self {
            Self::Required | Self::InvalidSignature(_) => {
                "这次付款没有您在这台设备上的确认，商城没有收款".to_owned()
            }
            Self::Expired => "您的确认已过期，商城没有收款".to_owned(),
            Self::ScopeMismatch(_) => {
                "结账内容和您确认的不一样了（价格或商品有变），商城没有收款".to_owned()
            }
            Self::MerchantAuthorizationInvalid(_) => {
                "您确认的结账不是商城出具的，商城没有收款".to_owned()
            }
            Self::Replayed => "这份确认已经用过，商城没有再次收款".to_owned(),
        }
    }
}

impl Refusal {
    /// What happened, for the shopper.
    pub fn for_shopper(&self) -> String {
        match self {
            Self::UnknownSku { sku } => format!("没有找到商品编码为 {sku} 的商品"),
            Self::Delisted { name, .. } => format!("{name} 已下架，不能购买"),
            Self::OutOfStock { name, .. } => format!("{name} 暂时无货"),
            Self::InsufficientStock {
                name,
                requested,
                stock,
                ..
            } => format!("{name} 库存不足：需要 {requested} 件，仅剩 {stock} 件"),
            Self::NotInCart { name, .. } => format!("购物车里没有 {name}"),
            Self::CartShort {
                name,
                in_cart,
                requested,
                ..
            } => format!("购物车里的 {name} 只有 {in_cart} 件，少于要下单的 {requested} 件"),
            Self::CartLineLimit {
                name,
                would_be,
                max,
                ..
            } => format!("购物车里的 {name} 将达到 {would_be} 件，超过每件商品 {max} 件的上限"),
            Self::DecreaseTooMuch {
                name,
                in_cart,
                requested,
                ..
            } => format!("购物车里的 {name} 只有 {in_cart} 件，不能减少 {requested} 件"),
            Self::DuplicateItem { sku } => {
                format!("同一件商品（{sku}）在订单里出现了不止一次")
            }
            Self::UnknownOrder { order_no } => format!("没有找到订单 {order_no}"),
            Self::UnknownCheckout { .. } => "这次结账已失效".to_owned(),
            Self::UnknownCart { .. } => "没有找到这个购物车".to_owned(),
            Self::DeviceBindingRefused { .. } => {
                "这台设备没能绑定到您的账户，请重新登录".to_owned()
            }
            Self::UnknownDevice { .. } => "这台设备没有绑定到您的账户".to_owned(),
            Self::Mandate(reason) => reason.for_shopper(),
            Self::CheckoutNotReady { reason, .. } => format!("这次结账还不能完成：{reason}"),
            Self::CheckoutClosed { status, .. } => format!("这次结账已{status}，不能再更改"),
            Self::OrderStatus { .. } | Self::NotShipped { .. } => self.to_string(),
            Self::CouponNotHeld { code } => format!("您没有优惠券 {code}"),
            Self::Coupon(reason) => reason.for_shopper(),
            Self::NotInOrder { order_no, sku } => {
                format!("订单 {order_no} 里没有这件商品（{sku}）")
            }
            Self::AfterSaleInProgress {
                order_no,
                name,
                after_sale_no,
                ..
            } => format!(
                "订单 {order_no} 的 {name} 已有处理中的售后单 {after_sale_no}，处理完之前不能再次申请"
            ),
            Self::AfterSaleWindowClosed {
                order_no,
                window,
                received_at,
                deadline,
                exchange_until,
            } => {
                let instead = match exchange_until {
                    Some(until) => format!("仍可在 {until} 前申请换货"),
                    None => "如商品有质量问题，可联系人工客服".to_owned(),
                };
                format!(
                    "订单 {order_no} 已超过{window}（签收于 {received_at}，截止 {deadline}）；{instead}"
                )
            }
            Self::UnknownAfterSale { after_sale_no } => format!("没有找到售后单 {after_sale_no}"),
            Self::UnknownTracking { tracking_no } => {
                format!("运单号 {tracking_no} 不属于您的任何订单")
            }
            Self::NoDefaultReceiver => "还没有收货信息：需要收货人、手机号和收货地址".to_owned(),
            Self::UnknownSavedAddress { .. } => "所选的收货地址已不在您保存的地址中".to_owned(),
            Self::UnknownPaymentPage => "这个支付页面不存在或不属于您，未扣款".to_owned(),
            Self::UnknownCategory { category, .. } => format!("商城没有「{category}」这个类目"),
            Self::IdempotencyConflict { .. } => {
                "这次操作与此前的一次不一致，为避免重复办理，未执行".to_owned()
            }
        }
    }

    /// What the model should do next, in its own terms (tools, arguments),
    /// when there is something to do.
    pub fn hint(&self) -> Option<String> {
        let hint = match self {
            Self::UnknownSku { .. } => "请先用 search_product 查到正确的 skuCode".to_owned(),
            Self::Delisted { .. } => "可用 search_product 查找在售的其他配置".to_owned(),
            Self::OutOfStock { .. } => "可用 search_product 查找有货的其他配置".to_owned(),
            Self::InsufficientStock { .. } => "请减少数量".to_owned(),
            Self::NotInCart { sku, .. } => {
                format!("请先调用 update_cart_item（action=add，skuCode={sku}）加入购物车")
            }
            Self::CartShort { sku, .. } => {
                format!("请先用 update_cart_item 增加 {sku} 的数量，或减少下单数量")
            }
            Self::DecreaseTooMuch { .. } => "要删除整行请用 action=remove".to_owned(),
            Self::DuplicateItem { .. } => "请合并为一行并写明总数量".to_owned(),
            Self::UnknownOrder { .. } => "请用 query_order 查看用户的订单号".to_owned(),
            Self::UnknownCheckout { .. } | Self::CheckoutClosed { .. } => {
                "请重新创建结账".to_owned()
            }
            Self::UnknownCart { .. } => "请用 get_cart 取得用户购物车的编号".to_owned(),
            Self::DeviceBindingRefused { .. } | Self::UnknownDevice { .. } => {
                "请让用户重新登录，应用会在登录时绑定设备".to_owned()
            }
            Self::Mandate(_) => "请取回结账，让用户在确认卡片上重新确认".to_owned(),
            Self::CheckoutNotReady { .. } => "请先按结账的提示补全信息".to_owned(),
            Self::CouponNotHeld { .. } => "请用 query_coupons 查看用户持有的优惠券".to_owned(),
            Self::Coupon(CouponRefusal::Expired { .. }) => "请改用其他券或不用券".to_owned(),
            Self::NotInOrder { .. } => "请用 query_order 查看该订单的商品编码".to_owned(),
            Self::AfterSaleInProgress { .. } => "可用 query_after_sale 查看进度".to_owned(),
            Self::AfterSaleWindowClosed { exchange_until, .. } => match exchange_until {
                Some(_) => "换货请用 apply_after_sale（type=换货）".to_owned(),
                None => "质量问题可用 submit_ticket 转人工客服".to_owned(),
            },
            Self::UnknownAfterSale { .. } => {
                "请用 query_after_sale（按 orderNo）查看售后单号".to_owned()
            }
            Self::UnknownTracking { .. } => "可先用 query_order 查看订单的运单号".to_owned(),
            Self::NoDefaultReceiver => {
                "请向用户要收货信息，填入 receiverName、receiverPhone 和 receiverAddress".to_owned()
            }
            Self::UnknownSavedAddress { .. } => {
                "请重新调用 create_order 再选一次，或直接提供 receiverName、receiverPhone 和 receiverAddress"
                    .to_owned()
            }
            Self::UnknownPaymentPage => "请重新调用 pay_order 发起支付".to_owned(),
            Self::UnknownCategory { known, .. } => format!("可选类目：{known}"),
            Self::IdempotencyConflict { .. } => "新的写操作请使用新的幂等键".to_owned(),
            Self::CartLineLimit { .. }
            | Self::OrderStatus { .. }
            | Self::NotShipped { .. }
            | Self::Coupon(_) => return None,
        };
        Some(hint)
    }
}

impl CouponRefusal {
    /// Why the coupon cannot be used, for the shopper.
    pub fn for_shopper(&self) -> String {
        match self {
            Self::Expired { code, to } => format!("优惠券 {code} 不可用：已于 {to} 过期"),
            other => other.to_string(),
        }
    }
}

impl ShopError {
    /// What happened, for the shopper: a refusal in the shop's words; for
    /// an argument the model got wrong or a failure inside the shop, a
    /// plain sentence (the details are the model's and the log's).
    pub fn for_shopper(&self) -> String {
        match self {
            Self::Refused(refusal) => refusal.for_shopper(),
            Self::InvalidArgument { .. } => "这次操作的信息不完整或有误，商城没有执行".to_owned(),
            Self::Unauthenticated => "还没有登录商城，商城不知道为谁办理".to_owned(),
            Self::Unavailable(_) => "商城暂时忙不过来，请稍后再试".to_owned(),
            _ => "商城内部出错，这次操作没有完成，请稍后再试".to_owned(),
        }
    }

    /// What the model should do next, when there is something to do.
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::Refused(refusal) => refusal.hint(),
            Self::InvalidArgument { .. } => Some(self.to_string()),
            Self::Unauthenticated => Some("请让用户先登录再试".to_owned()),
            Self::Unavailable(_) => {
                Some("稍等几秒后原样重发；写操作带着同一个幂等键，不会重复办理".to_owned())
            }
            _ => Some("请稍后重试，或用 submit_ticket 转人工客服".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every refusal the shop can give, with names as the rules fill them.
    fn every_refusal() -> Vec<Refusal> {
        let sku = || "MG6W4CH/A".to_owned();
        let name = || "iPhone 17 256GB 黑色".to_owned();
        vec![
            Refusal::UnknownSku { sku: sku() },
            Refusal::Delisted {
                sku: sku(),
                name: name(),
            },
            Refusal::OutOfStock {
                sku: sku(),
                name: name(),
            },
            Refusal::InsufficientStock {
                sku: sku(),
                name: name(),
                requested: 3,
                stock: 1,
            },
            Refusal::NotInCart {
                sku: sku(),
                name: name(),
            },
            Refusal::CartShort {
                sku: sku(),
                name: name(),
                in_cart: 1,
                requested: 2,
            },
            Refusal::CartLineLimit {
                sku: sku(),
                name: name(),
                would_be: 100,
                max: 99,
            },
            Refusal::DecreaseTooMuch {
                sku: sku(),
                name: name(),
                in_cart: 1,
                requested: 2,
            },
            Refusal::DuplicateItem { sku: sku() },
            Refusal::UnknownOrder {
                order_no: "1".into(),
            },
            Refusal::UnknownCheckout { id: "chk_1".into() },
            Refusal::UnknownCart {
                id: "cart_1".into(),
            },
            Refusal::DeviceBindingRefused {
                reason: "令牌已用过".into(),
            },
            Refusal::UnknownDevice { id: "d".into() },
            Refusal::Mandate(MandateRefusal::Replayed),
            Refusal::CheckoutNotReady {
                id: "chk_1".into(),
                reason: "请选择收货地址".into(),
            },
            Refusal::CheckoutClosed {
                id: "chk_1".into(),
                status: "取消",
                action: "更新",
            },
            Refusal::OrderStatus {
                order_no: "1".into(),
                status: "已发货".into(),
                action: "取消",
                allowed: "「待支付」",
            },
            Refusal::CouponNotHeld { code: "C".into() },
            Refusal::Coupon(CouponRefusal::Expired {
                code: "C".into(),
                to: "2026-01-01".into(),
            }),
            Refusal::NotInOrder {
                order_no: "1".into(),
                sku: sku(),
            },
            Refusal::AfterSaleInProgress {
                order_no: "1".into(),
                sku: sku(),
                name: name(),
                after_sale_no: "AS1".into(),
            },
            Refusal::AfterSaleWindowClosed {
                order_no: "1".into(),
                window: "签收后 7 天的无理由退货期",
                received_at: "2026-01-01".into(),
                deadline: "2026-01-08".into(),
                exchange_until: Some("2026-01-16".into()),
            },
            Refusal::AfterSaleWindowClosed {
                order_no: "1".into(),
                window: "签收后 15 天的换货期",
                received_at: "2026-01-01".into(),
                deadline: "2026-01-16".into(),
                exchange_until: None,
            },
            Refusal::UnknownAfterSale {
                after_sale_no: "AS1".into(),
            },
            Refusal::UnknownTracking {
                tracking_no: "SF1".into(),
            },
            Refusal::NotShipped {
                order_no: "1".into(),
                status: "待支付".into(),
            },
            Refusal::NoDefaultReceiver,
            Refusal::UnknownSavedAddress {
                address_id: "a1b2".into(),
            },
            Refusal::UnknownPaymentPage,
            Refusal::UnknownCategory {
                category: "x".into(),
                known: "手机、电脑".into(),
            },
            Refusal::IdempotencyConflict {
                key: "k".into(),
                tool: "create_order".into(),
            },
        ]
    }

    /// Words that belong to the model: tool and argument names.
    const MODEL_WORDS: [&str; 14] = [
        "search_product",
        "update_cart_item",
        "create_order",
        "pay_order",
        "query_",
        "apply_after_sale",
        "submit_ticket",
        "action=",
        "type=",
        "skuCode",
        "receiverName",
        "幂等键",
        "address_id",
        "a1b2",
    ];

    #[test]
    fn the_shoppers_sentence_names_no_tool_argument_or_internal_id() {
        for refusal in every_refusal() {
            let said = refusal.for_shopper();
            for word in MODEL_WORDS {
                assert!(
                    !said.contains(word),
                    "{}: {said} says {word}",
                    refusal.code()
                );
            }
        }
    }

    #[test]
    fn the_shoppers_sentence_names_the_goods_not_their_code_where_the_shop_knows_them() {
        for refusal in every_refusal() {
            let said = refusal.for_shopper();
            if said.contains("iPhone 17 256GB 黑色") {
                assert!(!said.contains("MG6W4CH/A"), "{said}");
            }
        }
        let not_in_cart = Refusal::NotInCart {
            sku: "MG6W4CH/A".into(),
            name: "iPhone 17 256GB 黑色".into(),
        };
        assert_eq!(
            not_in_cart.for_shopper(),
            "购物车里没有 iPhone 17 256GB 黑色"
        );
        assert_eq!(
            not_in_cart.hint().as_deref(),
            Some("请先调用 update_cart_item（action=add，skuCode=MG6W4CH/A）加入购物车")
        );
    }

    #[test]
    fn the_model_keeps_its_full_message_and_its_next_step() {
        let refusal = Refusal::AfterSaleWindowClosed {
            order_no: "88231".into(),
            window: "签收后 7 天的无理由退货期",
            received_at: "2026-01-01".into(),
            deadline: "2026-01-08".into(),
            exchange_until: Some("2026-01-16".into()),
        };
        assert_eq!(
            refusal.to_string(),
            "订单 88231 已超过签收后 7 天的无理由退货期（签收于 2026-01-01，截止 2026-01-08）；仍可在 2026-01-16 前申请换货（type=换货）"
        );
        assert_eq!(
            refusal.for_shopper(),
            "订单 88231 已超过签收后 7 天的无理由退货期（签收于 2026-01-01，截止 2026-01-08）；仍可在 2026-01-16 前申请换货"
        );
        assert_eq!(
            refusal.hint().as_deref(),
            Some("换货请用 apply_after_sale（type=换货）")
        );
    }

    #[test]
    fn an_argument_error_or_a_failure_inside_the_shop_reads_plainly_to_the_shopper() {
        let invalid = ShopError::invalid("items.quantity", "数量须在 1 到 99 之间");
        assert_eq!(
            invalid.for_shopper(),
            "这次操作的信息不完整或有误，商城没有执行"
        );
        assert_eq!(
            invalid.hint().as_deref(),
            Some("参数 items.quantity 无效：数量须在 1 到 99 之间")
        );
        let inside = ShopError::Corrupt("orders".into());
        assert!(!inside.for_shopper().contains("orders"));
    }
}
