// Small DOM helpers. Text always goes in through textContent / text nodes:
// nothing in ui/ parses a string as HTML.

export type Child = Node | string | number | null | undefined | false;

type Handlers = {
  [E in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[E]) => void;
};

export interface Props {
  class?: string;
  /** Plain text content; set through textContent. */
  text?: string;
  /** Attributes; `false`/`undefined` leave the attribute out, `true` sets it empty. */
  attrs?: Record<string, string | number | boolean | null | undefined>;
  on?: Handlers;
}

/** Creates an element with props and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  if (props.text !== undefined) el.textContent = props.text;
  if (props.attrs) setAttrs(el, props.attrs);
  if (props.on) {
    for (const [name, handler] of Object.entries(props.on)) {
      el.addEventListener(name, handler as EventListener);
    }
  }
  append(el, children);
  return el;
}

export function setAttrs(el: Element, attrs: NonNullable<Props["attrs"]>): void {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) el.removeAttribute(name);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(
      typeof child === "string" || typeof child === "number"
        ? document.createTextNode(String(child))
        : child,
    );
  }
}

/** Replaces all children of `parent`. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A button; `label` is its visible text, `aria` its accessible name if different. */
export function button(
  label: string,
  onClick: (event: MouseEvent) => void,
  opts: { class?: string; testid?: string; aria?: string; title?: string } = {},
): HTMLButtonElement {
  return h("button", {
    class: opts.class,
    text: label,
    attrs: {
      type: "button",
      "data-testid": opts.testid,
      "aria-label": opts.aria,
      title: opts.title ?? opts.aria,
    },
    on: { click: onClick },
  });
}

/** Formats epoch milliseconds as a local date and time. */
export function formatTime(ms: number, locale: string): string {
  return new Date(ms).toLocaleString(locale, {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
  });
}

/** Pretty JSON for display as text. */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? "null";
}

/** Escape closes an open disclosure (and does nothing else). */
export function closeOnEscape(details: HTMLDetailsElement): HTMLDetailsElement {
  details.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && details.open) {
      event.preventDefault();
      event.stopPropagation();
      details.open = false;
      details.querySelector("summary")?.focus();
    }
  });
  return details;
}

/** A disclosure whose summary is `label` and whose body is `body`. */
export function disclosure(label: Child, body: Child[], props: Props = {}): HTMLDetailsElement {
  return closeOnEscape(h("details", props, h("summary", {}, label), ...body));
}
