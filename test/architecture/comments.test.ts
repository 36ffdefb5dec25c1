import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Comments that stay true: a comment says why, in present tense. Issue numbers, benchmark figures and dates live in
// the commit log and bench/README.md; a rule of the specification is stated, or named by its docs/ section.

const ROOT = path.resolve(import.meta.dirname, '../..');
const DIRS = ['src', 'mcp', 'rest', 'db', 'scripts', 'bin'];

/** Names that look like dates but are versions: MCP protocol revisions and the webhook API versions. */
const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28', '2025-10-23', '2026-06-09'];

/** A figure with one of these units is a measurement wherever it stands. */
const MEASURED_UNIT = /\d+(\.\d+)? ?(req\/s|µs|ns\b)/;
/** Milliseconds and percentages are rules too ("a 300 ms timeout"); a measurement has a cue beside it. */
const FIGURE = /\d+(\.\d+)? ?(ms\b|%)/;
const MEASURED_CUE =
  /~ ?\d|\b(about|took|ran|runs? in|costs?|measured|instead of|against|faster|slower|saves?|saved|CPU|p50|p99)\b/i;

/** What is wrong with one comment's text, if anything. */
function commentProblems(text: string): string[] {
  const flat = text
    .replace(/^\s*(\/\/+|\/\*+|\*+\/?)/gm, ' ')
    .replace(/\*\/\s*$/, '')
    .replace(/\s+/g, ' ');
  const problems: string[] = [];
  const withoutRevisions = REVISIONS.reduce((t, r) => t.replaceAll(r, 'REVISION'), flat);
  const say = (what: string, m: RegExpMatchArray | null) => m && problems.push(`${what}: "${m[0]}"`);
  say('an issue number', withoutRevisions.match(/\bissues? \d+/i));
  say('a specification section number', withoutRevisions.match(/\bspec(ification)? (§|section )?\d/i));
  say('a CONTRACT section', withoutRevisions.match(/CONTRACT(\.md)? ?§/));
  say('a date', withoutRevisions.match(/\b20\d\d-\d\d-\d\d\b/));
  say('a benchmark figure', withoutRevisions.match(MEASURED_UNIT));
  if (MEASURED_CUE.test(withoutRevisions)) say('a benchmark figure', withoutRevisions.match(FIGURE));
  return problems;
}

/** Every comment of a source file (JSDoc, block and line comments, never string or template contents). */
function commentsOf(file: string, text: string): { line: number; text: string }[] {
  const kind = /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found = new Map<number, string>();
  const add = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) found.set(r.pos, text.slice(r.pos, r.end));
  };
  const visit = (node: ts.Node) => {
    add(ts.getLeadingCommentRanges(text, node.pos));
    add(ts.getTrailingCommentRanges(text, node.end));
    for (const child of node.getChildren(sf)) visit(child);
  };
  visit(sf);
  return [...found]
    .sort(([a], [b]) => a - b)
    .map(([pos, t]) => ({ line: sf.getLineAndCharacterOfPosition(pos).line + 1, text: t }));
}

const FILES = DIRS.flatMap((dir) =>
  fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.([cm]?js|ts)$/.test(e.name))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name))),
);
const CHECKED = FILES;
const COMMENTS = new Map(CHECKED.map((f) => [f, commentsOf(f, fs.readFileSync(path.join(ROOT, f), 'utf8'))]));

/** GitHub's anchor of a Markdown heading. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

describe('comments', () => {
  it('are read from the source, and only from comments', () => {
    expect(CHECKED.length).toBeGreaterThan(150);
    const sample = [
      '#!/usr/bin/env node',
      "const url = `http://example.com/${'issue 5'}/x`; // trailing, issue 6",
      '/** JSDoc, spec 5.5 */',
      "const s = 'spec 5.5 // not a comment';",
      'const re = /issue 7/; /* block */',
    ].join('\n');
    const comments = commentsOf('sample.ts', sample).map((c) => [c.line, c.text]);
    expect(comments).toEqual([
      [2, '// trailing, issue 6'],
      [3, '/** JSDoc, spec 5.5 */'],
      [5, '/* block */'],
    ]);
  });

  it('tell an issue number, a section number, a date or a measurement from a rule', () => {
    const bad = [
      '// found in issue 23, ninth round',
      '/** The pipeline (spec 5.5 condition 7). */',
      '/**\n * The audit row (spec\n * 5.7), every call.\n */',
      '// pages of CONTRACT §3',
      '// decided on 2026-11-27',
      '// took 33 µs against 4 µs inside a transaction',
      '// 8-10 % of the CPU of each POST',
      '// the access check ran in 42 ms instead of 57',
      '// 2,419 deliveries at 91.4 req/s',
    ];
    for (const c of bad) expect(commentProblems(c), c).not.toEqual([]);
    const good = [
      '// bodies of at most 64 KiB; a 300 ms timeout per attempt',
      '// MCP spec 2025-11-25 "Tool Execution Errors"; the 2026-07-28 revision',
      '// webhooks of API version 2025-10-23 get the legacy headers',
      '// 5 attempts per email+address, retried after 2000 ms, 4000 ms',
      '// the first 50% of the page',
      '// the issuer of the token (RFC 8414 §3)',
      '// docs/security-model.md#the-order-of-checks',
    ];
    for (const c of good) expect(commentProblems(c), c).toEqual([]);
  });

  it('name no issue, no section of a document outside the repository, no date and no benchmark figure', () => {
    const found = [...COMMENTS].flatMap(([file, comments]) =>
      comments.flatMap((c) => commentProblems(c.text).map((p) => `${file}:${c.line}: ${p}`)),
    );
    expect(found).toEqual([]);
  });

  it('point at docs/ sections that exist', () => {
    const headings = new Map<string, Set<string>>();
    const anchorsOf = (doc: string) => {
      if (!headings.has(doc)) {
        const md = path.join(ROOT, doc);
        const lines = fs.existsSync(md) ? fs.readFileSync(md, 'utf8').split('\n') : [];
        headings.set(doc, new Set(lines.filter((l) => /^#{1,6} /.test(l)).map((l) => slug(l.replace(/^#+ /, '')))));
      }
      return headings.get(doc)!;
    };
    const broken = [...COMMENTS].flatMap(([file, comments]) =>
      comments.flatMap((c) =>
        [...c.text.matchAll(/\bdocs\/([\w-]+\.md)#([\w-]+)/g)]
          .filter(([, doc, anchor]) => !anchorsOf(`docs/${doc}`).has(anchor))
          .map(([ref]) => `${file}:${c.line}: ${ref}`),
      ),
    );
    expect(broken).toEqual([]);
  });
});
