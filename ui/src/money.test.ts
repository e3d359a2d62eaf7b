import { describe, expect, it } from "vitest";

import { ExactNumber } from "./exact-json";
import { formatFen, formatMoney, toFen } from "./money";

describe("money from integer fen", () => {
  it("shows yuan with two decimals and thousands grouping", () => {
    expect(formatFen(679900n)).toBe("¥6,799.00");
    expect(formatFen(5n)).toBe("¥0.05");
    expect(formatFen(0n)).toBe("¥0.00");
    expect(formatFen(100000000n)).toBe("¥1,000,000.00");
    expect(formatFen(99999n)).toBe("¥999.99");
  });

  it("shows a negative amount with a minus sign before the yuan sign", () => {
    expect(formatFen(-20000n)).toBe("−¥200.00");
    expect(formatFen(-1n)).toBe("−¥0.01");
  });

  it("keeps every digit of amounts beyond what a float holds", () => {
    expect(formatMoney(new ExactNumber("900719925474099312"))).toBe("¥9,007,199,254,740,993.12");
    expect(formatMoney(Number.MAX_SAFE_INTEGER)).toBe("¥90,071,992,547,409.91");
  });

  it("refuses what is not an exact integer", () => {
    expect(toFen(1.5)).toBeNull();
    expect(toFen(2 ** 60)).toBeNull();
    expect(toFen("679900")).toBeNull();
    expect(toFen(null)).toBeNull();
    expect(toFen(new ExactNumber("1.0"))).toBeNull();
    expect(toFen(new ExactNumber("1e3"))).toBeNull();
  });
});
