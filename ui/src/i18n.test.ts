import { describe, expect, it } from "vitest";

import { createI18n, loadLang, saveLang } from "./i18n";

function memoryStorage(): Pick<Storage, "getItem" | "setItem"> {
  const values = new Map<string, string>();
  return { getItem: (k) => values.get(k) ?? null, setItem: (k, v) => void values.set(k, v) };
}

describe("languages", () => {
  it("is Chinese unless English was chosen, and remembers the choice", () => {
    const storage = memoryStorage();
    expect(loadLang(storage)).toBe("zh-CN");
    storage.setItem("bitselect.lang", "klingon");
    expect(loadLang(storage)).toBe("zh-CN");
    saveLang(storage, "en");
    expect(loadLang(storage)).toBe("en");
  });

  it("fills parameters and names statuses in both languages", () => {
    expect(createI18n("zh-CN").t("card.approveAll", { count: 3 })).toBe("全部批准（3）");
    expect(createI18n("en").t("card.approveAll", { count: 3 })).toBe("Approve all (3)");
    expect(createI18n("zh-CN").status("asking")).toBe("等你确认");
    expect(createI18n("en").status("denied")).toBe("declined");
  });
});
