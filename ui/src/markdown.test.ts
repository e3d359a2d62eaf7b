import { describe, expect, it } from "vitest";

import { renderMarkdown } from "./markdown";
import { XSS_IMG, XSS_SCRIPT } from "./test/fixtures";

function render(source: string): HTMLElement {
  const host = document.createElement("div");
  host.appendChild(renderMarkdown(source));
  return host;
}

describe("markdown from the model", () => {
  it("shows HTML payloads as literal text and creates no element from them", () => {
    const host = render(`推荐 ${XSS_IMG} 和 ${XSS_SCRIPT}\n\n**${XSS_IMG}** \`${XSS_SCRIPT}\`\n\n- ${XSS_IMG}\n\n| 名称 |\n| --- |\n| ${XSS_SCRIPT} |`);
    expect(host.querySelector("img")).toBeNull();
    expect(host.querySelector("script")).toBeNull();
    expect(host.querySelectorAll("[onerror]")).toHaveLength(0);
    expect(host.textContent).toContain(XSS_IMG);
    expect(host.textContent).toContain(XSS_SCRIPT);
  });

  it("renders paragraphs, line breaks, bold, italic and inline code", () => {
    const host = render("第一行\n第二行 **加粗** 和 *斜体* 与 `sku_code`\n\n第二段");
    const paragraphs = host.querySelectorAll("p");
    expect(paragraphs).toHaveLength(2);
    expect(paragraphs[0].querySelectorAll("br")).toHaveLength(1);
    expect(host.querySelector("strong")?.textContent).toBe("加粗");
    expect(host.querySelector("em")?.textContent).toBe("斜体");
    expect(host.querySelector("code")?.textContent).toBe("sku_code");
  });

  it("keeps underscores inside words as text", () => {
    const host = render("use sku_code and order_no here");
    expect(host.querySelector("em")).toBeNull();
    expect(host.textContent).toBe("use sku_code and order_no here");
  });

  it("renders fenced code blocks as text, markup included", () => {
    const host = render("```html\n<b>not bold</b>\n**not bold**\n```");
    const code = host.querySelector("pre code");
    expect(code?.textContent).toBe("<b>not bold</b>\n**not bold**");
    expect(host.querySelector("b")).toBeNull();
    expect(host.querySelector("strong")).toBeNull();
  });

  it("renders bullet, numbered and nested lists", () => {
    const host = render("1. 手机\n   - 黑色\n   - 白色\n2. 耳机\n\n- 甲\n- 乙");
    const ol = host.querySelector("ol");
    expect(ol?.children).toHaveLength(2);
    expect(ol?.querySelector("ul")?.children).toHaveLength(2);
    expect(host.querySelectorAll(":scope > ul > li")).toHaveLength(2);
  });

  it("renders tables", () => {
    const host = render("| 型号 | 价格 |\n| --- | ---: |\n| A | ¥1 |\n| B | ¥2 |");
    expect([...host.querySelectorAll("th")].map((th) => th.textContent)).toEqual(["型号", "价格"]);
    expect(host.querySelectorAll("tbody tr")).toHaveLength(2);
  });

  it("aligns table columns as their separator cells say", () => {
    const host = render("| 默认 | 左 | 中 | 右 |\n| --- | :--- | :---: | ---: |\n| a | b | c | ¥1 |");
    const classes = (selector: string) => [...host.querySelectorAll(selector)].map((cell) => cell.className);
    expect(classes("th")).toEqual(["", "md-align-left", "md-align-center", "md-align-right"]);
    expect(classes("td")).toEqual(["", "md-align-left", "md-align-center", "md-align-right"]);
    expect(host.querySelector("[style]")).toBeNull();
  });

  it("shows links as text with their address and never makes them clickable", () => {
    const host = render("[详情](javascript:alert(1)) 与 [官网](https://example.com)");
    expect(host.querySelector("a")).toBeNull();
    expect(host.textContent).toContain("详情");
    expect(host.textContent).toContain("(javascript:alert(1))");
    expect(host.textContent).toContain("(https://example.com)");
  });

  it("never renders an h1, so the app's own title stays the only one", () => {
    const host = render("# 标题\n## 小标题\n###### 更小");
    expect(host.querySelector("h1")).toBeNull();
    expect(host.querySelector("h3")?.textContent).toBe("标题");
    expect(host.querySelector("h4")?.textContent).toBe("小标题");
  });
});
