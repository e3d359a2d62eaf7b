// JSON read and written without losing anything a card must show: every
// number keeps the text it was sent as (JSON.parse turns 9007199254740993
// into 9007199254740992), and every key is an own property, `__proto__`
// included, on an object with no prototype to find `constructor` or
// `toString` in.

/** A JSON number, as its text. */
export class ExactNumber {
  constructor(readonly text: string) {}

  /** Whether a JavaScript number holds it without changing a digit. */
  get fitsNumber(): boolean {
    if (!/^-?\d+$/.test(this.text)) return true;
    return Number.isSafeInteger(Number(this.text));
  }
}

export type ExactJson = string | boolean | null | ExactNumber | ExactJson[] | ExactObject;
export type ExactObject = { [key in string]?: ExactJson };

/** Parses JSON text; throws SyntaxError as JSON.parse does. */
export function parseExact(text: string): ExactJson {
  const parser = new Parser(text);
  const value = parser.value();
  parser.end();
  return value;
}

/** An object's own value for `key`, never one found on a prototype. */
export function own<T>(object: { [key in string]?: T }, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined;
}

/** Sets `key` as an own property, even `__proto__`. */
export function setOwn<T>(object: { [key in string]?: T }, key: string, value: T): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Indented JSON text with every number as it was read. */
export function stringifyExact(value: ExactJson, indent = "  ", depth = 0): string {
  if (value instanceof ExactNumber) return value.text;
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const inner = indent.repeat(depth + 1);
  const close = indent.repeat(depth);
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((v) => inner + stringifyExact(v, indent, depth + 1)).join(",\n")}\n${close}]`;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return "{}";
  const lines = keys.map((key) => `${inner}${JSON.stringify(key)}: ${stringifyExact(own(value, key) ?? null, indent, depth + 1)}`);
  return `{\n${lines.join(",\n")}\n${close}}`;
}

class Parser {
  private at = 0;

  constructor(private readonly text: string) {}

  value(): ExactJson {
    this.space();
    const c = this.text[this.at];
    if (c === "{") return this.object();
    if (c === "[") return this.array();
    if (c === '"') return this.string();
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return this.number();
    for (const [word, value] of [["true", true], ["false", false], ["null", null]] as const) {
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return value;
      }
    }
    return this.fail("a value");
  }

  end(): void {
    this.space();
    if (this.at !== this.text.length) this.fail("the end");
  }

  private object(): ExactObject {
    const object: ExactObject = Object.create(null) as ExactObject;
    this.at++;
    this.space();
    if (this.text[this.at] === "}") {
      this.at++;
      return object;
    }
    for (;;) {
      this.space();
      if (this.text[this.at] !== '"') this.fail("a key");
      const key = this.string();
      this.space();
      this.expect(":");
      setOwn(object, key, this.value());
      this.space();
      if (this.text[this.at] === ",") {
        this.at++;
        continue;
      }
      this.expect("}");
      return object;
    }
  }

  private array(): ExactJson[] {
    const array: ExactJson[] = [];
    this.at++;
    this.space();
    if (this.text[this.at] === "]") {
      this.at++;
      return array;
    }
    for (;;) {
      array.push(this.value());
      this.space();
      if (this.text[this.at] === ",") {
        this.at++;
        continue;
      }
      this.expect("]");
      return array;
    }
  }

  private string(): string {
    const match = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(this.text.slice(this.at));
    if (!match) return this.fail("a string");
    this.at += match[0].length;
    return JSON.parse(match[0]) as string;
  }

  private number(): ExactNumber {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(this.text.slice(this.at));
    if (!match) return this.fail("a number");
    this.at += match[0].length;
    return new ExactNumber(match[0]);
  }

  private expect(char: string): void {
    if (this.text[this.at] !== char) this.fail(`"${char}"`);
    this.at++;
  }

  private space(): void {
    while (this.at < this.text.length && " \t\n\r".includes(this.text[this.at])) this.at++;
  }

  private fail(wanted: string): never {
    throw new SyntaxError(`expected ${wanted} at position ${this.at}`);
  }
}
