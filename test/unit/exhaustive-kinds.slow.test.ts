// A kind added to Stmt, Expr or Value (src/nft/expr.ts) must fail the type check at every
// place that handles each kind, so that none of them goes on without a case for it (a
// printer printing nothing, the builder's reference check passing a chain it never saw).
// Those places are switches ending in assertNever and tables typed by kind. The sources are
// type-checked here with one kind more in each union, and each place must report an error.
import * as path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { assertNever } from '../../src/diag/diagnostic.js';
import type { Expr } from '../../src/nft/expr.js';
import { ROOT } from '../helpers/kproxc.js';

/** file: the functions and tables in it that handle every kind (see docs/architecture.md). */
const PLACES: Record<string, string[]> = {
  'src/nft/expr-text.ts': ['writeExpr', 'writeValue'],
  'src/nft/expr-json.ts': ['exprJson', 'valueJson'],
  'src/nft/expr-text-read.ts': ['value'],
  'src/nft/expr-json-read.ts': ['readValue'],
  'src/nft/references.ts': ['forEachReference', 'exprSetRefs', 'valueSetRefs'],
  'src/nft/stmt/index.ts': ['STMT_FORMS'],
  'src/live/compact/stmt-listing.ts': ['STMT_LISTING'],
  'src/trace/nft/stmts.ts': ['STMTS'],
  'src/trace/nft/values.ts': ['EXPRS', 'VALUES'],
};

const EXPR_TS = path.join(ROOT, 'src/nft/expr.ts');
const PROBE = "  | { t: 'probe' }\n";

/** expr.ts with a kind more in each union. */
function probedExprSource(text: string): string {
  let out = text;
  for (const union of ['Stmt', 'Expr', 'Value']) {
    const head = `export type ${union} =\n`;
    expect(out.includes(head), `${head.trim()} is where the probe kind goes`).toBe(true);
    out = out.replace(head, head + PROBE);
  }
  return out;
}

/** The name of the function, method or variable a position is in. */
function enclosingName(file: ts.SourceFile, pos: number): string {
  let found = '?';
  const visit = (node: ts.Node): void => {
    if (pos < node.getStart(file) || pos >= node.getEnd()) return;
    if ((ts.isFunctionDeclaration(node) || ts.isVariableDeclaration(node) || ts.isMethodDeclaration(node)) && node.name) {
      found = node.name.getText(file);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** "file:name" of each error, with its message. */
function typeErrors(files: string[], replace: Map<string, string>): Map<string, string> {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(ROOT, 'tsconfig.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  // Node's types are half the work and none of these files needs them.
  const options: ts.CompilerOptions = { ...parsed!.options, noEmit: true, incremental: false, tsBuildInfoFile: undefined, types: [] };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) => {
    const text = replace.get(path.resolve(name));
    return text === undefined ? read(name, lang, ...rest) : ts.createSourceFile(name, text, lang);
  };
  const program = ts.createProgram(files, options, host);
  const errors = new Map<string, string>();
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const where = d.file ? `${path.relative(ROOT, d.file.fileName)}:${enclosingName(d.file, d.start ?? 0)}` : '(global)';
    if (!errors.has(where)) errors.set(where, ts.flattenDiagnosticMessageText(d.messageText, ' '));
  }
  return errors;
}

describe('exhaustive handling of statement and expression kinds', () => {
  it('a kind added to Stmt, Expr and Value fails the type check at every place that handles each kind', () => {
    const expr = ts.sys.readFile(EXPR_TS);
    expect(expr).toBeDefined();
    const files = Object.keys(PLACES).map((f) => path.join(ROOT, f));
    const errors = typeErrors(files, new Map([[EXPR_TS, probedExprSource(expr!)]]));

    const expected = Object.entries(PLACES).flatMap(([file, names]) => names.map((n) => `${file}:${n}`));
    const unexpected = [...errors].filter(([where]) => !expected.includes(where)).map(([where, message]) => `${where}: ${message}`);
    expect(unexpected, 'errors elsewhere than the places').toEqual([]);
    expect([...errors.keys()].sort(), 'the places that fail the type check').toEqual(expected.sort());
  }, 60_000);

  it('assertNever takes only a value no kind is left for', () => {
    const e = { t: 'ct', key: 'state' } as Expr;
    // @ts-expect-error: an Expr is not never, so a switch that misses a kind does not compile
    expect(() => assertNever(e, 'expression kind')).toThrow('no case for the expression kind "ct"');
  });
});
