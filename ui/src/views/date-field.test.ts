import { describe, expect, it } from "vitest";
import { createI18n } from "../i18n";
import { dateOrder, datePattern, parseDate, writeDate } from "./date-field";

describe("a date typed in the page's language", () => {
  it("follows the order each language writes a date in", () => {
    expect(dateOrder("zh-CN")).toEqual(["year", "month", "day"]);
    expect(dateOrder("en")).toEqual(["month", "day", "year"]);
    expect(datePattern(createI18n("zh-CN"))).toBe("年/月/日");
    expect(datePattern(createI18n("en"))).toBe("MM/DD/YYYY");
    expect(writeDate("2026-11-30", "zh-CN")).toBe("2026/11/30");
    expect(writeDate("2026-11-30", "en")).toBe("11/30/2026");
  });

  it("reads the Chinese ways of writing a date", () => {
    for (const typed of ["2026/11/30", "2026-11-30", "2026.11.30", "2026年11月30日", " 2026/11/30 "]) {
      expect(parseDate(typed, "zh-CN"), typed).toBe("2026-11-30");
    }
    expect(parseDate("2026/2/3", "zh-CN")).toBe("2026-02-03");
  });

  it("reads month first in English, and year first as ISO writes it", () => {
    expect(parseDate("11/30/2026", "en")).toBe("2026-11-30");
    expect(parseDate("2/3/2026", "en")).toBe("2026-02-03");
    expect(parseDate("2026-11-30", "en")).toBe("2026-11-30");
  });

  it("refuses what is not a real calendar date", () => {
    for (const typed of ["30/11/2026", "02/30/2026", "11/30/26", "yesterday", "11/30", "11/30/2026 10:00"]) {
      expect(parseDate(typed, "en"), typed).toBeNull();
    }
    expect(parseDate("2026/13/01", "zh-CN")).toBeNull();
    expect(parseDate("2025/02/29", "zh-CN")).toBeNull();
    expect(parseDate("2024/02/29", "zh-CN")).toBe("2024-02-29");
  });
});
