import { describe, expect, it } from "vitest";

import { ERROR_EN, ERROR_ZH } from "./error-messages";
import { MESSAGE_KEYS, createI18n, langFor } from "./i18n";
import type { ErrorCode } from "./protocol";

describe("languages", () => {
  it("is the chosen language, else the system's: Chinese for any Chinese locale, English otherwise", () => {
    expect(langFor("en", "zh-CN")).toBe("en");
    expect(langFor("zh-CN", "en-US")).toBe("zh-CN");
    expect(langFor(null, "zh-TW")).toBe("zh-CN");
    expect(langFor(null, "en-GB")).toBe("en");
    expect(langFor(null, "fr-FR")).toBe("en");
    expect(langFor(null, undefined)).toBe("en");
  });

  it("writes the English screens without Chinese, but for the name of Chinese itself", () => {
    const en = createI18n("en");
    // Han characters and the full-width forms Chinese punctuation uses.
    const chinese = /[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]/;
    const written = MESSAGE_KEYS.filter((key) => key !== "lang.zh-CN" && chinese.test(en.t(key)));
    expect(written).toEqual([]);
    expect(en.t("lang.zh-CN")).toBe("中文");
  });

  it("fills parameters and names statuses in both languages", () => {
    expect(createI18n("zh-CN").t("card.approveAll", { count: 3 })).toBe("全部批准（3）");
    expect(createI18n("en").t("card.approveAll", { count: 3 })).toBe("Approve all (3)");
    expect(createI18n("zh-CN").status("asking")).toBe("等你确认");
    expect(createI18n("en").status("denied")).toBe("declined");
  });
});

describe("core errors in the user's language", () => {
  const codes = Object.keys(ERROR_ZH) as ErrorCode[];

  it("has a sentence for every error code in both languages", () => {
    expect(Object.keys(ERROR_EN).sort()).toEqual([...codes].sort());
    for (const code of codes) {
      expect(ERROR_ZH[code].trim()).not.toBe("");
      expect(ERROR_EN[code].trim()).not.toBe("");
    }
    expect(createI18n("zh-CN").error({ code: "preview_changed" })).toBe("价格、库存或金额已变化，请查看新的预览后重新决定。");
    expect(createI18n("zh-CN").error({ code: "edit_previewed" })).toBe("已按你的修改重新计算，请查看下面的新预览，确认后再批准。");
    expect(createI18n("en").error({ code: "preview_changed" })).toBe(
      "What this would do has changed (price, stock or total). Review the new preview and decide again.",
    );
  });

  it("writes no Chinese error sentence in English", () => {
    const englishRun = /[A-Za-z]+(?:[\s,.:;'’-]+[A-Za-z]+){2,}/;
    for (const code of codes) expect(ERROR_ZH[code], code).not.toMatch(englishRun);
  });

  it("still says something for a code this build does not know", () => {
    expect(createI18n("zh-CN").error({ code: "brand_new" as ErrorCode })).toBe(ERROR_ZH.internal);
  });
});
