// Markdown that arrives in deltas, rendered as it comes. A block is rendered
// once, into nodes that stay, as soon as no later text can change it: so a
// delta costs the still-open tail, not the whole message, and a selection
// in a finished block survives. After every delta the host holds exactly
// what renderMarkdown of the text so far gives.

import { nextBlock } from "./markdown";
import { Lines } from "./markdown-lines";

/** What one delta cost; the tests pin it down instead of timing it. */
export interface StreamWork {
  /** Source characters split into lines and parsed again. */
  parsedChars: number;
  /** Nodes built, every element and text node counted. */
  createdNodes: number;
  /** Top-level nodes of the open tail taken out for new ones. */
  replacedNodes: number;
  /** The host's last children that are still open (the next delta replaces them). */
  openBlocks: number;
}

export class MarkdownStream {
  private readonly host: Element;
  /** The text received, as received (to tell whether a final text extends it). */
  private source = "";
  /** The normalised text from the first line not yet in a finished block. */
  private tail = "";
  /** The last delta ended in "\r", so a "\n" opening the next one pairs with it. */
  private pendingCr = false;
  /** The nodes rendered from `tail`, replaced on every delta. */
  private openNodes: Node[] = [];

  constructor(host: Element) {
    this.host = host;
  }

  /** Characters received so far. */
  get length(): number {
    return this.source.length;
  }

  append(delta: string): StreamWork {
    if (delta === "") return { parsedChars: 0, createdNodes: 0, replacedNodes: 0, openBlocks: this.openNodes.length };
    this.source += delta;
    const text = this.pendingCr && delta.startsWith("\n") ? delta.slice(1) : delta;
    this.pendingCr = delta.endsWith("\r");
    this.tail += text.replace(/\r\n?/g, "\n");
    return this.render();
  }

  /**
   * Shows exactly `text`. When it extends what was received (the complete
   * message after its deltas) the finished blocks stay; otherwise all is
   * rendered anew.
   */
  show(text: string): StreamWork {
    if (text.startsWith(this.source)) return this.append(text.slice(this.source.length));
    this.host.replaceChildren();
    this.source = "";
    this.tail = "";
    this.pendingCr = false;
    this.openNodes = [];
    return this.append(text);
  }

  private render(): StreamWork {
    const parts = this.tail.split("\n");
    const lines = new Lines(parts);
    // The last line may still grow; a block that read it is not finished.
    const lastComplete = parts.length - 2;
    const work: StreamWork = {
      parsedChars: this.tail.length,
      createdNodes: 0,
      replacedNodes: this.openNodes.length,
      openBlocks: 0,
    };
    for (const node of this.openNodes) this.host.removeChild(node);

    const added = document.createDocumentFragment();
    let start = 0;
    let block = nextBlock(lines, start);
    while (block && !lines.reachedEnd && lines.furthest <= lastComplete) {
      added.appendChild(block.node);
      work.createdNodes += countNodes(block.node);
      start = block.end;
      lines.resetLook();
      block = nextBlock(lines, start);
    }
    this.openNodes = [];
    for (; block; block = nextBlock(lines, block.end)) {
      this.openNodes.push(block.node);
      added.appendChild(block.node);
      work.createdNodes += countNodes(block.node);
    }
    this.host.appendChild(added);
    work.openBlocks = this.openNodes.length;
    this.tail = parts.slice(start).join("\n");
    return work;
  }
}

function countNodes(node: Node): number {
  let count = 1;
  for (let child = node.firstChild; child; child = child.nextSibling) count += countNodes(child);
  return count;
}
