#!/usr/bin/env node
// Self-test of verify.mjs: shows that the verifier passes on the committed corpus and fails --
// non-zero, naming the value -- when any one recorded value is altered, and that its strict reader
// refuses what it cannot canonicalize faithfully instead of hashing it.
//
// Usage: node tools/independent-verifier/selftest.mjs [CORPUS_DIR] [JCS_VECTORS_DIR]
//   CORPUS_DIR defaults to ../../corpus, JCS_VECTORS_DIR to ../../corpus/jcs (the RFC 8785
//   test data committed in the corpus); the JCS checks are reported as failed if it is missing.
// Each case copies the corpus to a fresh temporary directory, changes one thing, runs verify.mjs
// on the copy as a separate process and checks its exit status and output.
// Prints one line per check and ends with "N passed, M failed"; exits 1 on any failure.

import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonicalize, parseStrictJson, VerifierError } from './verify.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const corpus = resolve(process.argv[2] ?? join(here, '..', '..', 'corpus'));
const jcsVectors = resolve(process.argv[3] ?? join(here, '..', '..', 'corpus', 'jcs'));
const verifier = join(here, 'verify.mjs');

let passed = 0;
let failed = 0;
function check(what, ok, detail) {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'pass' : 'FAIL'} ${what}${detail ? ': ' + detail : ''}`);
}

/** A different, well-formed digest: the last hex digit changed. */
function altered(digest) {
  const last = digest.at(-1);
  return digest.slice(0, -1) + (last === '0' ? '1' : '0');
}

function readJsonFile(dir, relative) {
  return JSON.parse(readFileSync(join(dir, relative), 'utf8'));
}
function writeJsonFile(dir, relative, value) {
  writeFileSync(join(dir, relative), JSON.stringify(value, null, 2) + '\n');
}

/** Copy the corpus, apply `change(dir)` (which returns the value the output must name), run the verifier. */
function runOn(change) {
  const dir = mkdtempSync(join(tmpdir(), 'corpus-selftest-'));
  try {
    cpSync(corpus, dir, { recursive: true });
    const mustName = change ? change(dir) : undefined;
    const run = spawnSync(process.execPath, [verifier, dir], { encoding: 'utf8' });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr, mustName };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function failLines(stdout) {
  return stdout.split('\n').filter((line) => line.startsWith('FAIL '));
}

/**
 * One mutation case: the verifier must exit non-zero, and some FAIL line must contain every string
 * in `mustName` (the location and the altered value).
 */
function mutationCase(what, change) {
  const run = runOn(change);
  const names = run.mustName ?? [];
  const lines = failLines(run.stdout);
  const naming = lines.find((line) => names.every((n) => line.includes(n)));
  check(
    `altered ${what} is caught`,
    run.status !== 0 && run.status !== null && naming !== undefined,
    naming ? `exit ${run.status}; ${naming}` : `exit ${run.status}; no FAIL line names ${JSON.stringify(names)}; FAIL lines: ${JSON.stringify(lines)}`,
  );
  return run;
}

// --- 1. The committed corpus passes. ---------------------------------------------------------
{
  const run = runOn(undefined);
  const summary = run.stdout.trim().split('\n').at(-1);
  check('committed corpus verifies', run.status === 0 && /^\d+ passed, 0 failed$/.test(summary), `exit ${run.status}; ${summary}`);
}

// --- 2. One altered value of each kind is caught and named. ----------------------------------
mutationCase('per-tool digest (catalogs.deepwiki.tools["tool:read_wiki_contents"])', (dir) => {
  const d = readJsonFile(dir, 'digests.json');
  const bad = altered(d.catalogs.deepwiki.tools['tool:read_wiki_contents']);
  d.catalogs.deepwiki.tools['tool:read_wiki_contents'] = bad;
  writeJsonFile(dir, 'digests.json', d);
  return ['catalogs.deepwiki.tools["tool:read_wiki_contents"]', bad];
});
mutationCase('catalog digest (catalogs.everything.catalog_digest)', (dir) => {
  const d = readJsonFile(dir, 'digests.json');
  const bad = altered(d.catalogs.everything.catalog_digest);
  d.catalogs.everything.catalog_digest = bad;
  writeJsonFile(dir, 'digests.json', d);
  return ['catalogs.everything.catalog_digest', bad];
});
mutationCase('drifted catalog digest (catalogs.deepwiki-drifted.catalog_digest)', (dir) => {
  const d = readJsonFile(dir, 'digests.json');
  const bad = altered(d.catalogs['deepwiki-drifted'].catalog_digest);
  d.catalogs['deepwiki-drifted'].catalog_digest = bad;
  writeJsonFile(dir, 'digests.json', d);
  return ['catalogs.deepwiki-drifted.catalog_digest', bad];
});
mutationCase('overflow digest (catalogs.edge-overflow.overflow_digest)', (dir) => {
  const d = readJsonFile(dir, 'digests.json');
  const bad = altered(d.catalogs['edge-overflow'].overflow_digest);
  d.catalogs['edge-overflow'].overflow_digest = bad;
  writeJsonFile(dir, 'digests.json', d);
  return ['catalogs.edge-overflow.overflow_digest', bad];
});
mutationCase('per-tool digest in the large overflow catalog', (dir) => {
  const d = readJsonFile(dir, 'digests.json');
  const bad = altered(d.catalogs['edge-overflow'].tools['tool:overflow-250']);
  d.catalogs['edge-overflow'].tools['tool:overflow-250'] = bad;
  writeJsonFile(dir, 'digests.json', d);
  return ['catalogs.edge-overflow.tools["tool:overflow-250"]', bad];
});
mutationCase('duplicate-rule digest (catalogs.edge-duplicates.tools["tool:unnamed"])', (dir) => {
  const d = readJsonFile(dir, 'digests.json');
  const bad = altered(d.catalogs['edge-duplicates'].tools['tool:unnamed']);
  d.catalogs['edge-duplicates'].tools['tool:unnamed'] = bad;
  writeJsonFile(dir, 'digests.json', d);
  return ['catalogs.edge-duplicates.tools["tool:unnamed"]', bad];
});
mutationCase('key of a name whose cut lands inside a triplet', (dir) => {
  const d = readJsonFile(dir, 'digests.json');
  const index = d.keys.findIndex((pair) => /~[0-9a-f]{16}$/.test(pair.key) && /%[0-9A-F]?~/.test(pair.key));
  const bad = altered(d.keys[index].key);
  d.keys[index].key = bad;
  writeJsonFile(dir, 'digests.json', d);
  return [`keys[${index}]`, bad];
});
mutationCase('key of the empty name', (dir) => {
  const d = readJsonFile(dir, 'digests.json');
  const index = d.keys.findIndex((pair) => pair.name === '');
  d.keys[index].key = 'tool:';
  writeJsonFile(dir, 'digests.json', d);
  return [`keys[${index}]`, '"tool:"'];
});
mutationCase('label', (dir) => {
  const d = readJsonFile(dir, 'digests.json');
  d.label = 'agentavow.mcp-tool-definition.v1';
  writeJsonFile(dir, 'digests.json', d);
  return ['digests.json label', 'agentavow.mcp-tool-definition.v1'];
});
mutationCase("vector's expected outcome (COMP-MCP-004 expected.outcome)", (dir) => {
  const v = readJsonFile(dir, 'vectors/COMP-MCP-004.json');
  v.expected.outcome = 'component_observation_mismatch';
  writeJsonFile(dir, 'vectors/COMP-MCP-004.json', v);
  return ['vectors/COMP-MCP-004.json expected.outcome', 'component_observation_mismatch'];
});
mutationCase("vector's expected outcome (COMP-MCP-006 expected.outcome)", (dir) => {
  const v = readJsonFile(dir, 'vectors/COMP-MCP-006.json');
  v.expected = { outcome: 'valid', composite_status: 'affirming' };
  writeJsonFile(dir, 'vectors/COMP-MCP-006.json', v);
  return ['vectors/COMP-MCP-006.json expected.outcome', '"valid"'];
});
mutationCase("vector's pinned digest (COMP-MCP-005 expected_observed_digest)", (dir) => {
  const v = readJsonFile(dir, 'vectors/COMP-MCP-005.json');
  const requirement = v.requirements.components.find((c) => c.type === 'tool-catalog');
  const bad = altered(requirement.expected_observed_digest);
  requirement.expected_observed_digest = bad;
  writeJsonFile(dir, 'vectors/COMP-MCP-005.json', v);
  return ['vectors/COMP-MCP-005.json requirements tools.catalog expected_observed_digest', bad];
});
mutationCase("vector's presented digest replaced by the pin (COMP-MCP-006 observed_digest)", (dir) => {
  const v = readJsonFile(dir, 'vectors/COMP-MCP-006.json');
  const pin = v.requirements.components.find((c) => c.type === 'tool-catalog').expected_observed_digest;
  v.presented.components.find((c) => c.type === 'tool-catalog').observed_digest = pin;
  writeJsonFile(dir, 'vectors/COMP-MCP-006.json', v);
  return ['vectors/COMP-MCP-006.json presented tools.catalog observed_digest', pin];
});
mutationCase("vector's role in digests.json (vectors.COMP-MCP-006.presented)", (dir) => {
  const d = readJsonFile(dir, 'digests.json');
  d.vectors['COMP-MCP-006'].presented = 'deepwiki-drifted';
  writeJsonFile(dir, 'digests.json', d);
  return ['vectors/COMP-MCP-006.json catalogs.presented', 'deepwiki-drifted'];
});
mutationCase('corpus truncated to nothing (no catalogs, vectors or key pairs)', (dir) => {
  const d = readJsonFile(dir, 'digests.json');
  d.catalogs = {};
  d.vectors = {};
  d.keys = [];
  writeJsonFile(dir, 'digests.json', d);
  for (const file of readdirSync(join(dir, 'vectors'))) rmSync(join(dir, 'vectors', file));
  return ['corpus completeness', 'catalog deepwiki', 'vector COMP-MCP-004'];
});
mutationCase('vector file not listed in digests.json', (dir) => {
  writeFileSync(join(dir, 'vectors', 'COMP-MCP-999.json'), readFileSync(join(dir, 'vectors', 'COMP-MCP-004.json')));
  return ['vectors/COMP-MCP-999.json'];
});

// --- 3. Changes to the catalog bytes. --------------------------------------------------------
mutationCase('definition in a catalog (drifted read_wiki_contents description)', (dir) => {
  const file = join(dir, 'catalogs', 'deepwiki-tools-list-drifted.json');
  const text = readFileSync(file, 'utf8');
  const from = '"View documentation about a GitHub repository."';
  writeFileSync(file, text.replace(from, '"View documentation about a GitHub repository. Now."'));
  return ['catalogs.deepwiki-drifted.tools["tool:read_wiki_contents"]'];
});
{
  // A change confined to _meta changes the file bytes but no digest (seed 000 section 3, step 1).
  const run = mutationCase('_meta of a served catalog (file bytes only)', (dir) => {
    // Both deepwiki files, so that the drifted one is still the served one plus one sentence.
    for (const name of ['deepwiki-tools-list.json', 'deepwiki-tools-list-drifted.json']) {
      const file = join(dir, 'catalogs', name);
      writeFileSync(file, readFileSync(file, 'utf8').replace('"tags": []', '"tags": ["changed"]'));
    }
    return ['catalogs.deepwiki.bytes_sha256'];
  });
  const digestFailures = failLines(run.stdout).filter((line) => !line.includes('bytes_sha256'));
  check('a change confined to _meta changes no digest', digestFailures.length === 0, digestFailures.length ? JSON.stringify(digestFailures) : 'only bytes_sha256 failed');
}
mutationCase('catalog with a duplicate member (refused, not hashed)', (dir) => {
  const file = join(dir, 'catalogs', 'everything-tools-list.json');
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text.replace('"name": "echo",', '"name": "echo",\n    "name": "echo2",'));
  return ['catalogs.everything', 'duplicate member name "name"'];
});
mutationCase('catalog with an integer beyond 2^53-1 (refused, not rounded)', (dir) => {
  const file = join(dir, 'catalogs', 'everything-tools-list.json');
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text.replace('"maximum": 10', '"maximum": 9007199254740993'));
  return ['catalogs.everything', 'integer 9007199254740993 is outside'];
});

// --- 4. The strict reader and the canonicalizer on their own. --------------------------------
function refuses(what, text, expected) {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  try {
    const value = parseStrictJson(bytes, 'input');
    check(`reader refuses ${what}`, false, `accepted as ${canonicalize(value)}`);
  } catch (e) {
    check(`reader refuses ${what}`, e instanceof VerifierError && e.message.includes(expected), e.message);
  }
}
refuses('a duplicate member at depth', '{"a":{"b":1,"b":2}}', 'duplicate member name "b" at /a');
refuses('2^53', '[9007199254740992]', 'outside +-(2^53-1)');
refuses('-(2^53+1)', '[-9007199254740993]', 'outside +-(2^53-1)');
refuses('1e400', '[1e400]', 'overflows');
refuses('a lone high surrogate escape', '["\\ud800"]', 'lone surrogate');
refuses('a lone low surrogate escape', '["a\\udc00b"]', 'lone surrogate');
refuses('invalid UTF-8', Buffer.from([0x5b, 0x22, 0xc3, 0x28, 0x22, 0x5d]), 'not valid UTF-8');
refuses('a byte order mark', '\ufeff[]', 'unexpected character');
refuses('nesting deeper than the limit', '['.repeat(200) + ']'.repeat(200), 'nesting deeper');
refuses('trailing content', '{} {}', 'trailing content');
refuses('an unescaped control character', '["a\tb"]', 'unescaped control');
{
  const value = parseStrictJson(Buffer.from('[9007199254740991, -0, 1.0, 1e21, 0.1e-6, "\\u00e9\\ud83d\\udd27"]'), 'input');
  const text = canonicalize(value);
  check('reader keeps +-(2^53-1) and writes numbers in ECMAScript form', text === '[9007199254740991,0,1,1e+21,1e-7,"é🔧"]', text);
}
{
  const value = parseStrictJson(Buffer.from('{"__proto__": 1, "constructor": 2}'), 'input');
  const text = canonicalize(value);
  check('reader treats __proto__ as an ordinary member name', text === '{"__proto__":1,"constructor":2}', text);
}

// RFC 8785 test data (cyberphone testdata): input -> expected canonical bytes.
if (existsSync(join(jcsVectors, 'testdata', 'input'))) {
  for (const name of readdirSync(join(jcsVectors, 'testdata', 'input')).sort()) {
    const input = readFileSync(join(jcsVectors, 'testdata', 'input', name));
    const expected = readFileSync(join(jcsVectors, 'testdata', 'output', name), 'utf8');
    let got;
    try {
      got = canonicalize(parseStrictJson(input, name));
    } catch (e) {
      got = `error: ${e.message}`;
    }
    check(`RFC 8785 test data ${name}`, got === expected, got === expected ? `${Buffer.byteLength(got)} bytes` : `got ${got}`);
  }
} else {
  check('RFC 8785 test data', false, `not found at ${jcsVectors}; pass its location as the second argument`);
}

console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
