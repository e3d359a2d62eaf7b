//! The words a search result says to the model and the shopper.

use std::fmt;

use super::{SearchResult, SkuOption};
use crate::catalog::ON_SALE;
use crate::money::Yuan;

/// How many of a model's SKUs the text for the model lists; the
/// structured result holds them all.
const SKUS_IN_TEXT: usize = 6;

fn state(sku: &SkuOption) -> String {
    if sku.status != ON_SALE {
        sku.status.clone()
    } else if sku.stock <= 0 {
        "无货".to_owned()
    } else {
        format!("库存 {}", sku.stock)
    }
}

impl fmt::Display for SearchResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.items.is_empty() {
            write!(f, "没有找到符合条件的商品。")?;
            if !self.terms.is_empty() {
                let tried: Vec<String> = self
                    .terms
                    .iter()
                    .map(|t| {
                        let others: Vec<&str> = t
                            .looked_for
                            .iter()
                            .map(String::as_str)
                            .filter(|p| *p != t.said)
                            .collect();
                        if others.is_empty() {
                            format!("「{}」", t.said)
                        } else {
                            format!("「{}」（{}）", t.said, others.join("/"))
                        }
                    })
                    .collect();
                write!(f, "搜索过：{}，须同时符合。", tried.join("、"))?;
            }
            if !self.nearest_categories.is_empty() {
                let offered: Vec<String> = self
                    .nearest_categories
                    .iter()
                    .map(|c| {
                        if c.examples.is_empty() {
                            c.category.clone()
                        } else {
                            format!("{}（如 {}）", c.category, c.examples.join("、"))
                        }
                    })
                    .collect();
                write!(
                    f,
                    "相近的类目：{}。可以用 category 浏览这些类目，",
                    offered.join("；")
                )?;
            }
            return write!(f, "可以换个说法、去掉部分筛选条件或放宽价格区间再试。");
        }
        write!(f, "找到 {} 个型号", self.matched)?;
        if self.returned < self.matched {
            write!(f, "，显示前 {} 个", self.returned)?;
        }
        writeln!(f, "：")?;
        for (i, model) in self.items.iter().enumerate() {
            let price = if model.min_price_fen == model.max_price_fen {
                format!("{} 元", Yuan(model.min_price_fen))
            } else {
                format!(
                    "{}–{} 元",
                    Yuan(model.min_price_fen),
                    Yuan(model.max_price_fen)
                )
            };
            let orderable = model.skus.iter().filter(|s| s.available).count();
            writeln!(
                f,
                "{}. {}（{}）｜{}｜{}｜{} 个配置，{} 个有货",
                i + 1,
                model.name,
                model.spu_code,
                model.category,
                price,
                model.skus.len(),
                orderable
            )?;
            for sku in model.skus.iter().take(SKUS_IN_TEXT) {
                writeln!(
                    f,
                    "   - {} {}｜{} 元｜{}",
                    sku.sku_code,
                    sku.config.as_deref().unwrap_or(&model.name),
                    Yuan(sku.price_fen),
                    state(sku)
                )?;
            }
            if model.skus.len() > SKUS_IN_TEXT {
                writeln!(
                    f,
                    "   - 另有 {} 个配置，用 spuCodes [\"{}\"] 可看全部",
                    model.skus.len() - SKUS_IN_TEXT,
                    model.spu_code
                )?;
            }
        }
        write!(
            f,
            "加入购物车请用 update_cart_item，skuCode 取上面的商品编码。"
        )
    }
}
