import { describe, expect, it } from "vitest";

import { outcomeOf, type CallFacts } from "./call-outcome";
import { createI18n } from "./i18n";

const zh = createI18n("zh-CN");
const en = createI18n("en");
const facts = (overrides: Partial<CallFacts> & Pick<CallFacts, "status">): CallFacts => ({
  output: null,
  structured_output: null,
  rejection: null,
  deny_reason: null,
  ...overrides,
});

describe("a call's outcome in words", () => {
  it.each([
    ["succeeded", "✓", "已完成", "Done"],
    ["failed", "✗", "失败", "Failed"],
    ["interrupted", "?", "结果未知", "Outcome unknown"],
    ["approved", "✓", "已批准", "Approved"],
    ["denied", "✗", "已拒绝", "Declined"],
    ["running", "…", "运行中", "Running"],
  ] as const)("%s reads %s %s / %s", (status, mark, chinese, english) => {
    expect(outcomeOf(facts({ status }), zh)).toMatchObject({ mark, label: chinese });
    expect(outcomeOf(facts({ status }), en).label).toBe(english);
  });

  it("a failed call's reason is the shop's own sentence, else its output", () => {
    const shop = facts({ status: "failed", output: "x", structured_output: { error: { code: "OUT_OF_STOCK", message: "库存不足" } } });
    expect(outcomeOf(shop, zh).reason).toBe("库存不足");
    expect(outcomeOf(facts({ status: "failed", output: " 连接断开 " }), zh).reason).toBe("连接断开");
  });

  it("an approval waiting for the rest of its batch says how many are left", () => {
    expect(outcomeOf(facts({ status: "approved" }), zh, 2).label).toBe("已批准，将在你决定剩下 2 项后一起执行");
    expect(outcomeOf(facts({ status: "approved" }), zh, 0).label).toBe("已批准");
  });

  it("a refusal by a rule says which rule in the user's language", () => {
    const bad = facts({ status: "rejected", rejection: { type: "invalid_arguments", details: ["/quantity: must be ≥ 1"] } });
    expect(outcomeOf(bad, zh).reason).toBe("参数有误，未执行：/quantity: must be ≥ 1");
    expect(outcomeOf(facts({ status: "rejected", rejection: { type: "unknown_tool" } }), zh).reason).toBe("没有这个工具，未执行");
    expect(outcomeOf(facts({ status: "rejected", rejection: { type: "policy_denied" } }), zh).reason).toBe("设置中已禁止此工具，未执行");
    expect(outcomeOf(facts({ status: "rejected", rejection: { type: "policy_denied" } }), en).reason).toBe("This tool is blocked in Settings; not run");
  });

  it("a denial without a reason shows none", () => {
    expect(outcomeOf(facts({ status: "denied", deny_reason: "  " }), zh).reason).toBeNull();
    expect(outcomeOf(facts({ status: "denied", deny_reason: "太贵了" }), zh).reason).toBe("理由：太贵了");
  });
});
