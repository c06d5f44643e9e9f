// The rules of a table kept printed (text-table.ts), read back as the diff wants them:
// each rule's text and comment sliced from its line when compared (strings that die
// young), and Rule objects made only for the chains that changed.
import type { Chain, Rule } from './objects.js';
import type { ChainContents, PrintedRules } from './ruleset.js';
import { COMMENT_OPEN } from './text.js';
import type { PrintedItems } from './text-table.js';

/** The printed rule lines of a table, grouped by chain, read back as text. */
export class PrintedLines {
  // Line number to where its comment starts in the line, for the few lines with one.
  private readonly commentAt = new Map<number, number>();

  constructor(
    private readonly items: PrintedItems,
    ruleOrder: number[],
    commentOfRule: Map<number, number>,
  ) {
    if (commentOfRule.size === 0) return;
    for (let j = 0; j < ruleOrder.length; j++) {
      const at = commentOfRule.get(ruleOrder[j]);
      if (at !== undefined) this.commentAt.set(j, at);
    }
  }

  /** Line j's statements: from `bodyAt` (past its indent), up to its comment or line end. */
  text(j: number, bodyAt: number): string {
    const start = this.items.start[j];
    const at = this.commentStart(j);
    return this.slice(j, start + bodyAt, at === undefined ? this.items.end[j] - 1 : start + at);
  }

  comment(j: number): string | undefined {
    const at = this.commentStart(j);
    // Between COMMENT_OPEN and the closing quote before the line end.
    return at === undefined ? undefined : this.slice(j, this.items.start[j] + at + COMMENT_OPEN.length, this.items.end[j] - 2);
  }

  /**
   * Lines [first, end) as one string, when they follow one another in one piece of ASCII
   * text and none has a comment; else null.
   */
  block(first: number, end: number): string | null {
    const { piece, start, end: lineEnd, pieces, ascii } = this.items;
    if (end <= first || !ascii[piece[first]]) return null;
    for (let j = first + 1; j < end; j++) if (piece[j] !== piece[first] || start[j] !== lineEnd[j - 1]) return null;
    if (this.commentAt.size > 0) for (let j = first; j < end; j++) if (this.commentAt.has(j)) return null;
    return pieces[piece[first]].slice(start[first], lineEnd[end - 1]);
  }

  /** Where line j's comment starts in the line, if it has one (most tables have none). */
  private commentStart(j: number): number | undefined {
    return this.commentAt.size === 0 ? undefined : this.commentAt.get(j);
  }

  private slice(j: number, from: number, to: number): string {
    const p = this.items.piece[j];
    const piece = this.items.pieces[p];
    const s = piece.slice(from, to);
    return this.items.ascii[p] ? s : Buffer.from(s, 'latin1').toString('utf8');
  }
}

/**
 * A chain of the diff's table: its rules made from their lines only when asked for. Its
 * lines are [first, end), each an indent of `indentBytes` bytes and then the rule.
 */
export function printedChain(chain: Chain, lines: PrintedLines, first: number, end: number, indentBytes: number): ChainContents {
  return new PrintedChain(chain, lines, first, end, indentBytes);
}

class PrintedChain implements ChainContents, PrintedRules {
  private made?: Rule[];
  readonly count: number;

  constructor(
    readonly chain: Chain,
    private readonly lines: PrintedLines,
    private readonly first: number,
    end: number,
    private readonly indentBytes: number,
  ) {
    this.count = end - first;
  }

  get printed(): PrintedRules {
    return this;
  }

  text(k: number): string {
    return this.lines.text(this.first + k, this.indentBytes);
  }

  comment(k: number): string | undefined {
    return this.lines.comment(this.first + k);
  }

  block(): string | null {
    return this.lines.block(this.first, this.first + this.count);
  }

  get rules(): Rule[] {
    if (!this.made) {
      this.made = [];
      for (let k = 0; k < this.count; k++) {
        const r: Rule = { chain: this.chain.name, body: { text: this.text(k) } };
        const comment = this.comment(k);
        if (comment !== undefined) r.comment = comment;
        this.made.push(r);
      }
    }
    return this.made;
  }
}
